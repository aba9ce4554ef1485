import IAPFoundation
import SubscriptionModel

/// The one transaction runner of the SQL stores: closure transactions (a throw rolls back), nested
/// reads joining the enclosing transaction, nested writes as savepoints, the engine's
/// conflict/busy errors passed through unchanged, and the schema check before the first one.
/// A backend's `Store` owns one and forwards `read`/`write`/`schemaVersion` to it.
public final class SQLTransactions {
    public let connection: any SQLConnection
    public let dialect: SQLDialect
    /// The newest schema version this build writes.
    public let supported: Int
    /// How messages name the database (a path, or a URL without password) and how `--db` repeats it.
    private let label: String
    private let dbArgument: String
    private var active: SQLSession?
    private var schemaChecked = false

    public init(connection: any SQLConnection, dialect: SQLDialect, supported: Int, label: String, dbArgument: String) {
        self.connection = connection
        self.dialect = dialect
        self.supported = supported
        self.label = label
        self.dbArgument = dbArgument
    }

    /// True inside a transaction this runner opened.
    public var isActive: Bool { active != nil }

    public func read<T>(_ body: (any StoreSession) throws -> T) throws -> T {
        if let active {
            // Nested read: part of the enclosing transaction.
            return try body(active)
        }
        try checkSchema()
        return try transaction(mode: .read, begin: dialect.beginRead, commit: true, body)
    }

    public func write<T>(commit: Bool, _ body: (any StoreSession) throws -> T) throws -> T {
        if let active {
            guard active.mode == .write else {
                throw StoreError.failure("programmer error: write transaction requested inside a read transaction")
            }
            // Nested write: a savepoint of the enclosing write transaction.
            return try active.savepoint(keep: commit) { try body(active) }
        }
        try checkSchema()
        return try transaction(mode: .write, begin: dialect.beginWrite, commit: commit, body)
    }

    /// A migration's one write transaction: no schema check before it (the schema is what it brings
    /// up to date); once it commits, the schema is this build's. The versions it records are
    /// recorded together with all its work, or not at all.
    public func migration<T>(_ body: (any StoreSession) throws -> T) throws -> T {
        guard active == nil else {
            throw StoreError.failure("programmer error: a migration started inside a transaction")
        }
        let result = try transaction(mode: .write, begin: dialect.beginWrite, commit: true, body)
        schemaChecked = true
        return result
    }

    private func transaction<T>(
        mode: SQLSession.Mode, begin: [String], commit: Bool, _ body: (any StoreSession) throws -> T
    ) throws -> T {
        connection.transactionWillBegin()
        for statement in begin { try connection.execute(statement) }
        let session = SQLSession(connection: connection, dialect: dialect, mode: mode)
        active = session
        defer {
            session.close()
            active = nil
        }
        let result: T
        do {
            result = try body(session)
        } catch {
            rollbackQuietly()
            throw error
        }
        if let aborted = connection.transactionAborted {
            // The body swallowed an error after which the server rolled everything back.
            rollbackQuietly()
            throw aborted
        }
        guard commit else {
            if connection.inTransaction { try connection.execute("ROLLBACK") }
            return result
        }
        do {
            if mode == .write { for statement in dialect.beforeCommit { try connection.execute(statement) } }
            try connection.execute("COMMIT")
        } catch {
            rollbackQuietly()
            if dialect.commitOutcomeCanBeUnknown, case .unavailable(let message) = error {
                throw StoreError.unavailable(message + " (COMMIT: whether the transaction was committed is unknown)")
            }
            throw error
        }
        return result
    }

    /// Rolls back after an error; the original error is what the caller reports. A failure here
    /// leaves nothing to undo: the engine rolls back an open transaction when its connection ends.
    public func rollbackQuietly() {
        guard connection.inTransaction else { return }  // the engine rolled back already
        try? connection.execute("ROLLBACK")
    }

    // MARK: schema

    /// The schema version this database is at, and the one this build writes.
    public func schemaVersion() throws(StoreError) -> (current: Int, supported: Int) {
        guard let begin = dialect.schemaProbeBegin, active == nil else { return (try currentVersion(), supported) }
        try connection.execute(begin)
        do {
            let current = try currentVersion()
            try connection.execute("COMMIT")
            return (current, supported)
        } catch {
            rollbackQuietly()
            throw error
        }
    }

    /// The recorded version (0 without the migrations table).
    public func currentVersion() throws(StoreError) -> Int {
        let exists = try connection.query(dialect.tableExists, [.text(StoreSQL.migrationsTable)])
        guard try exists.rows.first?.int(0) ?? 0 > 0 else { return 0 }
        return Int(try connection.query(StoreSQL.maxMigration).rows.first?.int(0) ?? 0)
    }

    /// Records that `migration` was applied, now.
    public func record(_ migration: SchemaMigration) throws(StoreError) {
        _ = try connection.run(
            StoreSQL.recordMigration, [.int(Int64(migration.version)), .text(migration.name), .int(Timestamp.now())])
    }

    /// After a migration: the schema is this build's.
    public func schemaIsCurrent() { schemaChecked = true }

    /// Refuses to work on a database without the schema or with a schema from a newer iapctl.
    private func checkSchema() throws(StoreError) {
        guard !schemaChecked else { return }
        let (current, supported) = try schemaVersion()
        try refuseNewer(current)
        if current == 0 {
            throw StoreError.schemaMismatch(
                "database \(label) has no iapctl schema; create it with: iapctl db init --db \(dbArgument)")
        }
        if current < supported {
            throw StoreError.schemaMismatch(
                "database schema version \(current) is older than this iapctl's (\(supported)); "
                    + "migrate it with: iapctl db init --db \(dbArgument)")
        }
        schemaChecked = true
    }

    public func refuseNewer(_ current: Int) throws(StoreError) {
        guard current <= supported else {
            throw .schemaMismatch(
                "database schema version \(current) is newer than this iapctl supports (\(supported)); upgrade iapctl")
        }
    }
}

/// A `Store` over SQL: its transactions, nesting and schema check are the shared runner's. A backend
/// conforms by owning one ``SQLTransactions`` over its connection and writing its own `migrate()`.
public protocol SQLStoreBackend: Store {
    var transactions: SQLTransactions { get }
}

extension SQLStoreBackend {
    public func read<T>(_ body: (any StoreSession) throws -> T) throws -> T {
        try transactions.read(body)
    }

    public func write<T>(commit: Bool, _ body: (any StoreSession) throws -> T) throws -> T {
        try transactions.write(commit: commit, body)
    }

    public func schemaVersion() throws(StoreError) -> (current: Int, supported: Int) {
        try transactions.schemaVersion()
    }
}
