import IAPFoundation
import IAPOperations
import StoreAccess
import SubscriptionEngine
import SubscriptionModel

/// `iapctl db status`: `StoreAccess` inspects the database; this prints.
enum DbStatus {
    static let command = CommandSpec(
        name: "status",
        abstract: "Show the schema version and the number of rows in each table.",
        examples: [
            CommandExample("iapctl db status", "Version and row counts as a table."),
            CommandExample("iapctl db status -o json --db sqlite:shop.db", "The same for shop.db, as JSON."),
        ],
        handler: run)

    /// Where the database is, its schema version and the row count of each table; on MySQL also
    /// the server version and what the schema lacks (`missing`).
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let store = try DbOpen.existing(invocation, readOnly: true)
        let status: DatabaseStatus
        do {
            status = try DatabaseStatus.inspect(store)
        } catch let error as NewerSchema {
            throw DbOpen.newer(error, invocation)
        }
        var r = Record()
        r.append("database", DbOpen.display(invocation))
        r.append("backend", status.backend.rawValue)
        if let server = status.serverVersion { r.append("server_version", server) }
        r.append("schema_version", status.current)
        r.append("supported_version", status.supported)
        if let missing = status.missing { r.append("missing", list(missing, separator: ", ", invocation)) }
        if let incompatible = status.incompatible {
            r.append("incompatible", list(incompatible, separator: "; ", invocation))
            for item in incompatible { invocation.warn(item) }
        }
        if let counts = try status.counts(in: store) {
            r.append("orders", counts.orders)
            r.append("contracts", counts.contracts)
            r.append("ledger", counts.ledger)
            r.append("unmatched", counts.unmatched)
            r.append("audit", counts.audit)
        } else {
            let raw = ShellWord.word(URLSecrets.redacted(DbOpen.raw(invocation)))
            invocation.warn(
                status.current == 0
                    ? "\(DbOpen.display(invocation)) has no iapctl schema; create it with: iapctl db init --db \(raw)"
                    : "schema v\(status.current) is older than this iapctl's (v\(status.supported)); migrate with: "
                        + "iapctl db init --db \(raw)"
                        + (status.rebuildFacts
                            ? " (it also rebuilds the engine's facts from the ledger and re-derives every row)" : ""))
        }
        invocation.emit(document: r)
        return .success
    }

    /// A list as one text in a table, an array in other formats.
    private static func list(_ items: [String], separator: String, _ invocation: Invocation) -> JSONValue {
        invocation.output == .table
            ? .string(items.isEmpty ? "nothing" : items.joined(separator: separator))
            : .array(items.map(JSONValue.string))
    }
}
