import AppStoreJWS
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
        if case .sqlite(let path) = try StoreAccess.location(DbOpen.raw(invocation)) {
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
        result.append("action", action)
        result.append("schema_version", current)
        result.append("migrations", .array(applied.map(JSONValue.string)))
        return emit(result, invocation: invocation) {
            switch action {
            case "created": return ["created \(name) (schema v\(current))"]
            case "up to date": return ["\(name) is up to date (schema v\(current))"]
            default:
                return ["migrated \(name) from schema v\(before) to v\(current):"] + applied.map { "  \($0)" }
            }
        }
    }

    /// Where the database is, its schema version and the row count of each table.
    static func status(_ invocation: Invocation) throws -> ExitCode {
        let store = try DbOpen.existing(invocation)
        let (current, supported) = try store.schemaVersion()
        var r = Record()
        r.append("database", DbOpen.display(invocation))
        r.append("backend", store is SQLiteStore ? "sqlite" : "mysql")
        r.append("schema_version", current)
        r.append("supported_version", supported)
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
            let raw = DbOpen.raw(invocation)
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
    private static func emit(_ record: Record, invocation: Invocation, lines: () -> [String]) -> ExitCode {
        if invocation.output == .table {
            for line in lines() { invocation.print(line) }
        } else {
            invocation.emit(document: record)
        }
        return .success
    }
}
