#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteStore
import SubscriptionEngine

/// Opens the database a command names with `--db` (env `IAPCTL_DB`, config `db`, default `iapctl.db`).
enum StoreAccess {
    /// The database location as given, parsed.
    enum Location: Equatable {
        case sqlite(path: String)
        case mysql(url: String)
    }

    /// Parses `PATH`, `sqlite:PATH` or `mysql://…`.
    static func location(_ raw: String) throws(CLIError) -> Location {
        if raw.hasPrefix("mysql://") || raw.hasPrefix("mariadb://") { return .mysql(url: raw) }
        if raw.hasPrefix("sqlite:") {
            var path = String(raw.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw CLIError.usage("--db sqlite: needs a path, e.g. sqlite:iapctl.db") }
            return .sqlite(path: path)
        }
        if let scheme = raw.split(separator: ":", maxSplits: 1).first, raw.contains("://") {
            throw CLIError.usage(
                "unsupported database URL scheme '\(scheme)'",
                hint: "use a file path, sqlite:PATH or mysql://USER@HOST[:PORT]/NAME")
        }
        return .sqlite(path: raw)
    }

    /// Opens the store. Only `db init` passes `create: true`; every other command refuses a
    /// missing database (exit 66) rather than silently creating an empty one.
    static func open(_ invocation: Invocation, create: Bool = false) throws -> any Store {
        let raw = invocation.value("db") ?? "iapctl.db"
        switch try location(raw) {
        case .sqlite(let path):
            return try SQLiteStore(path: path, create: create)
        case .mysql(let url):
            return try openMySQL(url: url, invocation: invocation)
        }
    }

    /// Placeholder until the MySQL backend is wired: refuses clearly.
    static func openMySQL(url: String, invocation: Invocation) throws -> any Store {
        throw CLIError(.config, "MySQL/MariaDB databases are not supported by this build", hint: "use a SQLite path")
    }
}

extension StoreError: CLIErrorConvertible {
    /// The contract's exit codes for storage failures.
    public var cliError: CLIError {
        switch self {
        case .notFound(let m): return CLIError(.noInput, m)
        case .schemaMismatch(let m): return CLIError(.config, m)
        case .conflict(let m): return CLIError(.conflict, m)
        case .busy(let m): return CLIError(.tempFail, m, hint: "another process holds the database; retry")
        case .unavailable(let m): return CLIError(.unavailable, m, hint: "check that the database server is running and reachable, then retry")
        case .accessDenied(let m): return CLIError(.config, m, hint: "check the database user, its password (IAPCTL_DB_PASSWORD) and privileges")
        case .failure(let m): return CLIError(.software, m)
        }
    }
}
