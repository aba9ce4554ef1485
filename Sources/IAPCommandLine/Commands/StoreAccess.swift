import MySQLStore
import SQLiteStore
import SubscriptionEngine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// `readOnly` (look-ups): SQLite opens the file read-only and creates no file (MySQL relies
    /// on the user's privileges).
    static func open(_ invocation: Invocation, create: Bool = false, readOnly: Bool = false) throws -> any Store {
        let raw = invocation.value(CommandTree.dbOption) ?? "iapctl.db"
        switch try location(raw) {
        case .sqlite(let path):
            return try SQLiteStore(path: path, create: create, readOnly: readOnly)
        case .mysql(let url):
            return try openMySQL(url: url, invocation: invocation, create: create)
        }
    }

    /// MySQL/MariaDB: the password comes only from `IAPCTL_DB_PASSWORD` or an option file, never argv.
    static func openMySQL(url: String, invocation: Invocation, create: Bool) throws -> any Store {
        try mysqlStore(url: url, invocation: invocation, create: create)
    }

    /// The MySQL store itself (for `db init` / `db status`, which use its schema plan).
    static func mysqlStore(url: String, invocation: Invocation, create: Bool) throws -> MySQLStore {
        let timeout = try databaseTimeout(invocation)
        return try MySQLStore(
            url: mysqlURL(url), password: invocation.environment["IAPCTL_DB_PASSWORD"], create: create,
            connectTimeoutSeconds: timeout.map { min($0, MySQLStore.defaultConnectTimeoutSeconds) }
                ?? MySQLStore.defaultConnectTimeoutSeconds,
            ioTimeoutSeconds: timeout ?? MySQLStore.defaultIOTimeoutSeconds)
    }

    /// `IAPCTL_DB_TIMEOUT`: seconds a MySQL/MariaDB read or write may stall before the run stops
    /// with exit 69 (default 60; the connect timeout is at most 10).
    static func databaseTimeout(_ invocation: Invocation) throws(CLIError) -> UInt32? {
        guard let text = invocation.environment["IAPCTL_DB_TIMEOUT"], !text.isEmpty else { return nil }
        guard let seconds = UInt32(text), (1...86_400).contains(seconds) else {
            throw CLIError(.config, "IAPCTL_DB_TIMEOUT '\(text)' is not a number of seconds (1-86400)")
        }
        return seconds
    }

    /// Parses a `mysql://` URL; a refused one (a password in it, say) is a usage error (64).
    static func mysqlURL(_ url: String) throws(CLIError) -> MySQLURL {
        let parsed: MySQLURL
        do {
            parsed = try MySQLURL(parsing: url)
        } catch let error as MySQLURL.ParseError {
            throw CLIError.usage(
                "--db: \(error.message)",
                hint: error.containedPassword
                    ? "put the password in IAPCTL_DB_PASSWORD or an option file (?option-file=PATH), never on the command line"
                    : "the form is mysql://USER@HOST[:PORT]/NAME[?socket=PATH]")
        } catch {
            throw CLIError.usage(
                "--db: not a valid MySQL URL", hint: "the form is mysql://USER@HOST[:PORT]/NAME[?socket=PATH]")
        }
        return parsed
    }

    /// `value` as one shell word for a hint people copy: quoted when it holds `?`, `&`, spaces….
    static func shellWord(_ value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-_./:@=,+%".unicodeScalars.contains($0)
        }
        if plain && !value.isEmpty { return value }
        return "'" + value.replacing("'", with: "'\\''") + "'"
    }

    /// The database as shown to people: never a password.
    static func displayName(_ invocation: Invocation) -> String {
        let raw = invocation.value(CommandTree.dbOption) ?? "iapctl.db"
        if case .mysql(let url)? = try? location(raw) {
            return (try? MySQLURL(parsing: url).description) ?? "mysql://…"
        }
        return raw
    }
}

extension StoreAccess {
    /// `handler`, with SQLite's access errors given a file-permission hint (the generic one speaks
    /// of MySQL users and passwords).
    static func wrap(_ handler: @escaping CommandHandler) -> CommandHandler {
        { invocation in
            do {
                return try handler(invocation)
            } catch StoreError.accessDenied(let message) {
                guard case .sqlite? = try? location(invocation.value(CommandTree.dbOption) ?? "iapctl.db") else {
                    throw StoreError.accessDenied(message)
                }
                throw CLIError(
                    .config, message,
                    hint: "check the permissions of the database file and its folder (ls -l); look-ups "
                        + "(list, show, entitled, doctor, audit) need only read access, changes need write access")
            }
        }
    }
}

extension StoreError: CLIErrorConvertible {
    /// The contract's exit codes for storage failures; no message shows SQL text (a store may add
    /// `[SQL: …]` for its own diagnostics: it is cut here).
    public var cliError: CLIError {
        switch self {
        case .notFound(let m): return CLIError(.noInput, Self.withoutSQL(m))
        case .schemaMismatch(let m): return CLIError(.config, Self.withoutSQL(m))
        case .conflict(let m): return CLIError(.conflict, Self.withoutSQL(m))
        case .busy(let m): return CLIError(.tempFail, Self.withoutSQL(m), hint: "another process holds the database; retry")
        case .unavailable(let m):
            return CLIError(
                .unavailable, Self.withoutSQL(m), hint: "check that the database server is running and reachable, then retry")
        case .accessDenied(let m):
            return CLIError(
                .config, Self.withoutSQL(m), hint: "check the database user, its password (IAPCTL_DB_PASSWORD) and privileges")
        case .ioFailure(let m):
            return CLIError(
                .ioError, Self.withoutSQL(m),
                hint: "free disk space (or raise the file-size limit), then re-run the same input: "
                    + "what was reported is committed, the rest is not, duplicates are recognised")
        case .failure(let m): return CLIError(.software, Self.withoutSQL(m))
        }
    }

    /// `message` without any ` [SQL: …]` part.
    static func withoutSQL(_ message: String) -> String {
        var text = message
        while let start = text.firstRange(of: " [SQL: ") ?? text.firstRange(of: "[SQL: ") {
            let end = text[start.upperBound...].firstIndex(of: "]").map { text.index(after: $0) } ?? text.endIndex
            text.removeSubrange(start.lowerBound..<end)
        }
        return text
    }
}
