import IAPOperations
import MySQLStore
import PostgresStore
import SQLiteStore
import StoreSQL
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The database's schema is newer than this build supports (upgrade iapctl).
public struct NewerSchema: Error, Equatable, Sendable {
    public let current: Int
    public let supported: Int

    public init(current: Int, supported: Int) {
        self.current = current
        self.supported = supported
    }
}

/// What `db init` would do (`--dry-run`): nothing is created or changed to find out.
public struct SchemaPlan: Equatable, Sendable {
    public enum Action: Sendable {
        /// The database does not exist: it would be created with every migration.
        case create
        /// Some migrations (or, on MySQL, schema items) are missing.
        case migrate
        /// Nothing to do.
        case upToDate
    }

    public var action: Action
    /// The schema version now (0 when the database does not exist).
    public var current: Int
    /// The schema version this build migrates to.
    public var supported: Int
    /// The names of the migrations that would run, in order (every one for a new database).
    public var pending: [String]
    /// MySQL: the statements that would run, in order (for a new database, the `CREATE DATABASE`);
    /// nil on SQLite.
    public var statements: [String]?
    /// Whether the engine's facts would then be rebuilt from the ledger and every row re-derived.
    public var rebuildFacts: Bool

    public init(
        action: Action, current: Int, supported: Int, pending: [String], statements: [String]? = nil,
        rebuildFacts: Bool = false
    ) {
        self.action = action
        self.current = current
        self.supported = supported
        self.pending = pending
        self.statements = statements
        self.rebuildFacts = rebuildFacts
    }
}

/// What `db init` did.
public struct InitOutcome {
    public enum Action: Sendable {
        /// The database was new.
        case created
        /// Migrations were applied to an existing database.
        case migrated
        /// Nothing was applied (on MySQL, missing schema items may still have been added).
        case upToDate
    }

    public var action: Action
    /// The schema version before (0 for a new database).
    public var before: Int
    /// The schema version now.
    public var current: Int
    /// The migrations applied, in order.
    public var applied: [String]
    /// MySQL: the schema items (tables, columns, indexes) added to an existing database; nil on SQLite.
    public var added: [String]?
    /// The facts rebuild after the migration that adds the engine's facts to an existing database
    /// (nil when that migration was not applied now).
    public var rebuilt: FactRebuild.Summary?
}

/// `db init`: creates (SQLite: mode 0600) or migrates the schema; idempotent. Throws `StoreError`s
/// and `NewerSchema`.
public enum DatabaseInit {
    /// Every migration this build knows, in order.
    public static var migrations: [String] { StoreSchema.migrations.map(\.name) }

    /// What `run` would do now; creates and changes nothing.
    public static func plan(_ opener: StoreOpener) throws -> SchemaPlan {
        let all = migrations
        switch opener.location {
        case .sqlite(let path):
            guard fileMayExist(path) else {
                return SchemaPlan(action: .create, current: 0, supported: all.count, pending: all)
            }
            let store = try opener.open(.existing)
            let (current, supported) = try store.schemaVersion()
            guard current <= supported else { throw NewerSchema(current: current, supported: supported) }
            // Migrations are numbered 1, 2, …: the pending ones are those after `current`.
            let pending = Array(all.dropFirst(current))
            return SchemaPlan(
                action: pending.isEmpty ? .upToDate : .migrate, current: current, supported: supported, pending: pending,
                rebuildFacts: FactRebuild.isNeeded(after: pending))
        case .mysql(let url):
            guard let store = try existingMySQL(opener, url) else {
                // Without the database there is nothing to plan against: it would get every table.
                return SchemaPlan(
                    action: .create, current: 0, supported: all.count, pending: all,
                    statements: [createDatabaseStatement(url)])
            }
            let (current, supported) = try store.schemaVersion()
            guard current <= supported else { throw NewerSchema(current: current, supported: supported) }
            let statements = try store.plannedMigrationStatements()
            let pending = Array(all.dropFirst(current))
            return SchemaPlan(
                action: pending.isEmpty && statements.isEmpty ? .upToDate : .migrate, current: current,
                supported: supported, pending: pending, statements: statements,
                rebuildFacts: FactRebuild.isNeeded(after: pending))
        case .postgres(let url):
            guard let store = try existingPostgres(opener, url) else {
                return SchemaPlan(
                    action: .create, current: 0, supported: all.count, pending: all,
                    statements: [createPostgresDatabaseStatement(url)])
            }
            let (current, supported) = try store.schemaVersion()
            guard current <= supported else { throw NewerSchema(current: current, supported: supported) }
            let pending = Array(all.dropFirst(current))
            return SchemaPlan(
                action: pending.isEmpty ? .upToDate : .migrate, current: current, supported: supported, pending: pending,
                statements: try store.plannedMigrationStatements(), rebuildFacts: FactRebuild.isNeeded(after: pending))
        }
    }

    /// Creates the database when it does not exist, applies the pending migrations and, when the
    /// migration adding the engine's facts was applied to an existing database, rebuilds the facts
    /// from the ledger (their audit rows by `actor`) in the transaction that records the versions:
    /// killed at any point, a rerun does the whole job. On MySQL it also adds what the schema lacks
    /// (tables, columns, indexes) without dropping or changing anything.
    public static func run(_ opener: StoreOpener, actor: String) throws -> InitOutcome {
        switch opener.location {
        case .sqlite(let path):
            let exists = fileMayExist(path)
            let store = try opener.open(.create)
            let before = exists ? try store.schemaVersion().current : 0
            var rebuilt: FactRebuild.Summary?
            let applied = try store.migrate { applied, session in
                rebuilt = exists ? try rebuildFacts(session, applied: applied, actor: actor) : nil
            }
            let (current, _) = try store.schemaVersion()
            let action: InitOutcome.Action = !exists ? .created : applied.isEmpty ? .upToDate : .migrated
            return InitOutcome(action: action, before: before, current: current, applied: applied, rebuilt: rebuilt)
        case .mysql(let url):
            let existing = try existingMySQL(opener, url)
            let store = try existing ?? opener.mysql(url, create: true)
            let before = try store.schemaVersion().current
            let missingBefore = try store.missingSchemaItems()
            var rebuilt: FactRebuild.Summary?
            let applied = try store.migrate { applied, session in
                rebuilt = existing == nil ? nil : try rebuildFacts(session, applied: applied, actor: actor)
            }
            let (current, _) = try store.schemaVersion()
            let missingAfter = Set(try store.missingSchemaItems())
            let added = existing == nil ? [] : missingBefore.filter { !missingAfter.contains($0) }
            let action: InitOutcome.Action = existing == nil ? .created : applied.isEmpty ? .upToDate : .migrated
            return InitOutcome(
                action: action, before: before, current: current, applied: applied, added: added, rebuilt: rebuilt)
        case .postgres(let url):
            // Several `db init` at once: each may find the database missing; the first creates it
            // and the others use it, and the migration's advisory lock runs them one at a time.
            let existing = try existingPostgres(opener, url)
            let store = try existing ?? opener.postgres(url, create: true)
            let before = try store.schemaVersion().current
            var rebuilt: FactRebuild.Summary?
            let applied = try store.migrate { applied, session in
                rebuilt = before == 0 ? nil : try rebuildFacts(session, applied: applied, actor: actor)
            }
            let (current, _) = try store.schemaVersion()
            let action: InitOutcome.Action = before == 0 && !applied.isEmpty ? .created : applied.isEmpty ? .upToDate : .migrated
            return InitOutcome(action: action, before: before, current: current, applied: applied, rebuilt: rebuilt)
        }
    }

    /// The PostgreSQL database when it exists; nil when it does not.
    private static func existingPostgres(_ opener: StoreOpener, _ url: PostgresURL) throws -> PostgresStore? {
        do {
            return try opener.postgres(url, create: false)
        } catch StoreError.notFound {
            return nil
        }
    }

    /// What `PostgresStore` runs to create a missing database.
    static func createPostgresDatabaseStatement(_ url: PostgresURL) -> String {
        "CREATE DATABASE \"\((url.database ?? "").replacing("\"", with: "\"\""))\" ENCODING 'UTF8'"
    }

    /// After the migration that adds the engine's facts to an existing database: the facts are
    /// rebuilt from the ledger and every row re-derived (nil when that migration was not applied
    /// now). Runs in the migration's transaction: its versions are recorded only with the rebuild.
    static func rebuildFacts(_ session: any StoreSession, applied: [String], actor: String) throws -> FactRebuild.Summary? {
        guard FactRebuild.isNeeded(after: applied) else { return nil }
        return try FactRebuild.run(in: session, actor: actor)
    }

    /// The MySQL database when it exists; nil when it does not.
    private static func existingMySQL(_ opener: StoreOpener, _ url: MySQLURL) throws -> MySQLStore? {
        do {
            return try opener.mysql(url, create: false)
        } catch StoreError.notFound {
            return nil
        }
    }

    /// What `MySQLStore` runs to create a missing database.
    static func createDatabaseStatement(_ url: MySQLURL) -> String {
        "CREATE DATABASE IF NOT EXISTS `\(url.database)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    }

    /// Whether there is something at `path` (anything but "no such file": an unreadable folder
    /// counts as existing, and opening it then reports why).
    static func fileMayExist(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 || errno != ENOENT
    }
}

/// What `db status` shows of a database besides where it is.
public struct DatabaseStatus: Equatable, Sendable {
    public enum Backend: String, Sendable {
        case sqlite
        case mysql
        case postgres
    }

    public var backend: Backend
    /// MySQL: the server's version string.
    public var serverVersion: String?
    /// The schema version of the database.
    public var current: Int
    /// The schema version this build supports.
    public var supported: Int
    /// MySQL: what the schema lacks (tables, columns, indexes); nil on SQLite.
    public var missing: [String]?
    /// MySQL: the existing columns iapctl cannot use; nil on SQLite.
    public var incompatible: [String]?
    /// The migrations `db init` would apply.
    public var pending: [String]
    /// Whether migrating an older schema (not a database without one) also rebuilds the engine's facts.
    public var rebuildFacts: Bool

    /// The schema of the opened `store`. Throws `NewerSchema` when this build is too old for it.
    public static func inspect(_ store: any Store) throws -> DatabaseStatus {
        let (current, supported) = try store.schemaVersion()
        guard current <= supported else { throw NewerSchema(current: current, supported: supported) }
        let mysql = store as? MySQLStore
        let postgres = store as? PostgresStore
        let pending = Array(DatabaseInit.migrations.dropFirst(current))
        return DatabaseStatus(
            backend: postgres != nil ? .postgres : mysql == nil ? .sqlite : .mysql,
            serverVersion: mysql?.serverVersion ?? postgres?.serverVersion, current: current,
            supported: supported, missing: try mysql?.missingSchemaItems(), incompatible: try mysql?.incompatibleColumns(),
            pending: pending, rebuildFacts: current > 0 && FactRebuild.isNeeded(after: pending))
    }

    /// The row count of each table, when the schema is up to date (else nil: the tables may not
    /// all exist yet).
    public func counts(in store: any Store) throws -> StoreCounts? {
        guard current == supported else { return nil }
        return try store.read { try $0.counts() }
    }
}
