import IAPFoundation
import MySQLStore
import SQLiteStore
import SubscriptionEngine

/// Opening the database for the record-keeping commands, with the contract's messages.
enum DbOpen {
    /// The `--db` value as given (default `iapctl.db`).
    static func raw(_ invocation: Invocation) -> String { invocation.value(CommandTree.dbOption) ?? "iapctl.db" }

    /// Where the database is, for people: the path, or the URL without any password.
    static func display(_ invocation: Invocation) -> String {
        let raw = raw(invocation)
        switch try? StoreAccess.location(raw) {
        case .sqlite(let path)?: return path
        case .mysql(let url)?: return URLSecrets.redacted(url)
        case nil: return URLSecrets.redacted(raw)
        }
    }

    /// Opens an existing database; a missing one is exit 66 with the `db init` hint.
    /// `readOnly` for look-ups: nothing is written or created (see `StoreAccess.open`).
    static func existing(_ invocation: Invocation, readOnly: Bool = false) throws -> any Store {
        do {
            return try StoreAccess.open(invocation, readOnly: readOnly)
        } catch StoreError.notFound {
            throw missing(invocation)
        }
    }

    /// Runs a read transaction on a read-only connection; a missing schema is reported like a missing database.
    static func read<T>(_ invocation: Invocation, _ body: (any StoreSession) throws -> T) throws -> T {
        try existing(invocation, readOnly: true).read(body)
    }

    /// The 66 error for a database that does not exist.
    static func missing(_ invocation: Invocation) -> CLIError {
        let raw = raw(invocation)
        return CLIError(
            .noInput, "database \(display(invocation)) does not exist",
            hint: "create it with: iapctl db init --db \(StoreAccess.shellWord(URLSecrets.redacted(raw)))")
    }
}
