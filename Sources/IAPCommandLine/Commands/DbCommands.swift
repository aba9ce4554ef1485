import AppStoreJWS
import MySQLStore
import SQLiteStore
import SubscriptionEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `iapctl db init` and `iapctl db status`.
enum DbCommands {
    /// Creates (mode 0600) or migrates the schema; idempotent. `--dry-run` lists what it would do.
    static func initialize(_ invocation: Invocation) throws -> ExitCode {
        let name = DbOpen.display(invocation)
        let dryRun = invocation.flag("dry-run")
        var exists = true
        switch try StoreAccess.location(DbOpen.raw(invocation)) {
        case .mysql(let url):
            return try initializeMySQL(invocation, url: url, name: name, dryRun: dryRun)
        case .sqlite(let path):
            var info = stat()
            exists = stat(path, &info) == 0 || errno != ENOENT
        }
        var result = Record()
        result.append("database", name)
        if dryRun {
            let all = try allMigrations()
            let supported = all.count
            guard exists else {
                result.append("action", "would create")
                result.append("schema_version", supported)
                result.append("migrations", .array(all.map(JSONValue.string)))
                return emit(result, invocation: invocation) {
                    ["would create \(name) (schema v\(supported)), applying:"] + all.map { "  \($0)" }
                }
            }
            let store = try StoreAccess.open(invocation)
            let (current, supportedByStore) = try store.schemaVersion()
            guard current <= supportedByStore else {
                throw CLIError(
                    .config,
                    "database \(name) has schema version \(current), newer than this iapctl supports "
                        + "(\(supportedByStore))",
                    hint: "upgrade iapctl")
            }
            // Migrations are numbered 1, 2, …: the pending ones are those after `current`.
            let pending = Array(all.dropFirst(current))
            result.append("action", pending.isEmpty ? "up to date" : "would migrate")
            result.append("schema_version", current)
            result.append("supported_version", supportedByStore)
            result.append("migrations", .array(pending.map(JSONValue.string)))
            return emit(result, invocation: invocation) {
                pending.isEmpty
                    ? ["\(name) is up to date (schema v\(current)); nothing to do"]
                    : ["would migrate \(name) from schema v\(current) to v\(supportedByStore), applying:"]
                        + pending.map { "  \($0)" }
            }
        }
        let store = try StoreAccess.open(invocation, create: true)
        let before = exists ? try store.schemaVersion().current : 0
        let applied = try store.migrate()
        let (current, _) = try store.schemaVersion()
        let action = !exists ? "created" : applied.isEmpty ? "up to date" : "migrated"
        let rebuilt = exists ? try rebuildFacts(store, applied: applied, invocation: invocation) : nil
        result.append("action", action)
        result.append("schema_version", current)
        result.append("migrations", .array(applied.map(JSONValue.string)))
        if let rebuilt { result.append("facts_rebuilt", rebuilt.factsAdded) }
        return emit(result, invocation: invocation, report: true) {
            initLines(action: action, name: name, before: before, current: current, applied: applied)
                + (rebuilt.map { [$0.line] } ?? [])
        }
    }

    /// After the migration that adds the engine's facts to an existing database: the facts are
    /// rebuilt from the ledger and every row re-derived (nil when that migration was not applied now).
    static func rebuildFacts(_ store: any Store, applied: [String], invocation: Invocation) throws -> FactRebuild.Summary? {
        guard applied.contains(where: { $0.contains("iap_facts") }) else { return nil }
        return try FactRebuild.run(store, actor: invocation.actor)
    }

    /// What `db init` says it did, on either backend (`added`: schema items added to an existing database).
    static func initLines(
        action: String, name: String, before: Int, current: Int, applied: [String], added: [String] = []
    ) -> [String] {
        switch action {
        case "created": return ["created \(name) (schema v\(current))"]
        case "up to date": return ["\(name) is up to date (schema v\(current))"]
        default:
            return ["migrated \(name) from schema v\(before) to v\(current):"] + applied.map { "  \($0)" }
                + added.map { "  added \($0)" }
        }
    }

    /// Where the database is, its schema version and the row count of each table; on MySQL also
    /// the server version and what the schema lacks (`missing`).
    static func status(_ invocation: Invocation) throws -> ExitCode {
        let store = try DbOpen.existing(invocation, readOnly: true)
        let (current, supported) = try store.schemaVersion()
        let mysql = store as? MySQLStore
        var r = Record()
        r.append("database", DbOpen.display(invocation))
        r.append("backend", mysql == nil ? "sqlite" : "mysql")
        if let mysql { r.append("server_version", mysql.serverVersion) }
        r.append("schema_version", current)
        r.append("supported_version", supported)
        if let mysql, current <= supported {
            let missing = try mysql.missingSchemaItems()
            r.append(
                "missing",
                invocation.output == .table
                    ? .string(missing.isEmpty ? "nothing" : missing.joined(separator: ", "))
                    : .array(missing.map(JSONValue.string)))
            let incompatible = try mysql.incompatibleColumns()
            r.append(
                "incompatible",
                invocation.output == .table
                    ? .string(incompatible.isEmpty ? "nothing" : incompatible.joined(separator: "; "))
                    : .array(incompatible.map(JSONValue.string)))
            for item in incompatible { invocation.warn(item) }
        }
        if current == supported {
            let counts = try store.read { try $0.counts() }
            r.append("orders", counts.orders)
            r.append("contracts", counts.contracts)
            r.append("ledger", counts.ledger)
            r.append("unmatched", counts.unmatched)
            r.append("audit", counts.audit)
        } else if current > supported {
            throw CLIError(
                .config,
                "database \(DbOpen.display(invocation)) has schema version \(current), newer than this "
                    + "iapctl supports (\(supported))", hint: "upgrade iapctl")
        } else {
            let raw = StoreAccess.shellWord(URLSecrets.redacted(DbOpen.raw(invocation)))
            invocation.warn(
                current == 0
                    ? "\(DbOpen.display(invocation)) has no iapctl schema; create it with: iapctl db init --db \(raw)"
                    : "schema v\(current) is older than this iapctl's (v\(supported)); migrate with: "
                        + "iapctl db init --db \(raw)")
        }
        invocation.emit(document: r)
        return .success
    }

    /// Every migration name this build knows, in order (from a scratch in-memory database).
    static func allMigrations() throws -> [String] {
        try SQLiteStore(path: ":memory:", create: true).migrate()
    }

    /// Table mode: the given lines; other formats: the record.
    /// `report` (what `db init` did) goes to stderr like any note: stdout is for data (plans, status).
    private static func emit(
        _ record: Record, invocation: Invocation, report: Bool = false, lines: () -> [String]
    ) -> ExitCode {
        if invocation.output == .table {
            for line in lines() {
                if report { invocation.note(line) } else { invocation.print(line) }
            }
        } else {
            invocation.emit(document: record)
        }
        return .success
    }
}

// MARK: MySQL / MariaDB

extension DbCommands {
    /// `db init` on MySQL: creates the database when it does not exist, then adds what the schema
    /// lacks (tables, columns, indexes) without dropping or changing anything. `--dry-run` prints
    /// the statements and touches nothing (it does not create the database either).
    static func initializeMySQL(_ invocation: Invocation, url: String, name: String, dryRun: Bool) throws -> ExitCode {
        let parsed = try StoreAccess.mysqlURL(url)
        var existing: MySQLStore?
        do {
            existing = try StoreAccess.mysqlStore(url: url, invocation: invocation, create: false)
        } catch StoreError.notFound {
            existing = nil
        }
        var result = Record()
        result.append("database", name)
        let all = try allMigrations()
        if dryRun {
            guard let store = existing else {
                // Without the database there is nothing to plan against: it would get every table.
                let create =
                    "CREATE DATABASE IF NOT EXISTS `\(parsed.database)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
                result.append("action", "would create")
                result.append("schema_version", all.count)
                result.append("migrations", .array(all.map(JSONValue.string)))
                result.append("statements", .array([.string(create)]))
                return emit(result, invocation: invocation) {
                    ["-- would create \(name) (schema v\(all.count)), applying:"] + all.map { "--   \($0)" }
                        + ["\(create);", "-- then every table of the schema is created in it"]
                }
            }
            return try planMySQL(store, name: name, migrations: all, result: result, invocation: invocation)
        }
        let store = try existing ?? StoreAccess.mysqlStore(url: url, invocation: invocation, create: true)
        let before = try store.schemaVersion().current
        let missingBefore = try store.missingSchemaItems()
        let applied = try store.migrate()
        let (current, _) = try store.schemaVersion()
        let missingAfter = Set(try store.missingSchemaItems())
        let added = existing == nil ? [] : missingBefore.filter { !missingAfter.contains($0) }
        let action = existing == nil ? "created" : applied.isEmpty ? "up to date" : "migrated"
        result.append("action", action)
        result.append("schema_version", current)
        result.append("migrations", .array(applied.map(JSONValue.string)))
        result.append("added", .array(added.map(JSONValue.string)))
        let rebuilt = existing == nil ? nil : try rebuildFacts(store, applied: applied, invocation: invocation)
        if let rebuilt { result.append("facts_rebuilt", rebuilt.factsAdded) }
        return emit(result, invocation: invocation, report: true) {
            initLines(action: action, name: name, before: before, current: current, applied: applied, added: added)
                + (rebuilt.map { [$0.line] } ?? [])
        }
    }

    /// `db init --dry-run` on an existing MySQL database: the DDL `db init` would run, in order.
    private static func planMySQL(
        _ store: MySQLStore, name: String, migrations all: [String], result: Record, invocation: Invocation
    ) throws -> ExitCode {
        var result = result
        let (current, supported) = try store.schemaVersion()
        guard current <= supported else {
            throw CLIError(
                .config,
                "database \(name) has schema version \(current), newer than this iapctl supports (\(supported))",
                hint: "upgrade iapctl")
        }
        let statements = try store.plannedMigrationStatements()
        let pending = Array(all.dropFirst(current))
        let upToDate = pending.isEmpty && statements.isEmpty
        result.append("action", upToDate ? "up to date" : "would migrate")
        result.append("schema_version", current)
        result.append("supported_version", supported)
        result.append("migrations", .array(pending.map(JSONValue.string)))
        result.append("statements", .array(statements.map(JSONValue.string)))
        return emit(result, invocation: invocation) {
            if upToDate { return ["\(name) is up to date (schema v\(current)); nothing to do"] }
            // A SQL script: the header is comments, each statement ends with ';'.
            return ["-- would migrate \(name) from schema v\(current) to v\(supported), applying:"]
                + pending.map { "--   \($0)" } + statements.map { "\($0);" }
        }
    }
}
