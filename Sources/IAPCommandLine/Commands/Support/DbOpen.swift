import IAPFoundation
import StoreAccess
import SubscriptionEngine
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#endif

/// Opening the database a command names with `--db` (env `IAPCTL_DB`, config `db`, default
/// `iapctl.db`), with the contract's messages; the opening itself is `StoreAccess`'s.
enum DbOpen {
    /// The `--db` value as given (default `iapctl.db`).
    static func raw(_ invocation: Invocation) -> String { invocation[CommandTree.dbOption] }

    /// Parses `PATH`, `sqlite:PATH` or `mysql://…`; one that names no database is a usage error (64).
    static func location(_ raw: String) throws(CLIError) -> DatabaseLocation {
        do {
            return try DatabaseLocation(parsing: raw)
        } catch {
            throw error.cliError
        }
    }

    /// `IAPCTL_DB_TIMEOUT`: seconds a MySQL/MariaDB or PostgreSQL server may take to answer before the run stops
    /// with exit 69 (default 60; the connect timeout is at most 10).
    static func timeout(_ invocation: Invocation) throws(CLIError) -> DatabaseTimeout? {
        do {
            return try DatabaseTimeout.parse(invocation.environment["IAPCTL_DB_TIMEOUT"])
        } catch {
            throw CLIError(.config, "IAPCTL_DB_TIMEOUT '\(error.text)' is not a number of seconds (1-86400)")
        }
    }

    /// The opener of `location`. MySQL/MariaDB: the password comes only from `IAPCTL_DB_PASSWORD` or
    /// an option file, never argv; PostgreSQL: from `IAPCTL_DB_PASSWORD`, else libpq's own
    /// (`PGPASSWORD`, `~/.pgpass`, a service file). `IAPCTL_DB_TIMEOUT` is read (and checked) only
    /// for a server.
    static func opener(_ invocation: Invocation, _ location: DatabaseLocation) throws(CLIError) -> StoreOpener {
        guard location.isServer else { return StoreOpener(location: location) }
        return StoreOpener(
            location: location, password: invocation.environment["IAPCTL_DB_PASSWORD"], timeout: try timeout(invocation))
    }

    /// Opens the store. Only `db init` creates; every other command refuses a missing database
    /// (exit 66) rather than silently creating an empty one. `readOnly` (look-ups): SQLite opens
    /// the file read-only and creates no file (MySQL relies on the user's privileges).
    static func open(_ invocation: Invocation, create: Bool = false, readOnly: Bool = false) throws -> any Store {
        let raw = raw(invocation)
        // A bad IAPCTL_DB_TIMEOUT is reported before a bad MySQL URL.
        if DatabaseLocation.namesServer(raw) { _ = try timeout(invocation) }
        let opener = try opener(invocation, location(raw))
        return try opener.open(create ? .create : readOnly ? .readOnly : .existing)
    }

    /// Where the database is, for people: the path, or the URL without any password.
    static func display(_ invocation: Invocation) -> String {
        let raw = raw(invocation)
        switch try? location(raw) {
        case .sqlite(let path)?: return path
        case .mysql?, .postgres?, nil: return URLSecrets.redacted(raw)
        }
    }

    /// Opens an existing database; a missing one is exit 66 with the `db init` hint.
    /// `readOnly` for look-ups: nothing is written or created (see `open`).
    static func existing(_ invocation: Invocation, readOnly: Bool = false) throws -> any Store {
        do {
            return try open(invocation, readOnly: readOnly)
        } catch StoreError.notFound {
            throw missing(invocation)
        }
    }

    /// Runs a read transaction on a read-only connection; a missing schema is reported like a missing database.
    static func read<T>(_ invocation: Invocation, _ body: (any StoreSession) throws -> T) throws -> T {
        try existing(invocation, readOnly: true).read(body)
    }

    /// The 66 error for a database that does not exist.
    /// With no `--db`, `IAPCTL_DB` or config `db`, it says where it looked and how to point elsewhere.
    static func missing(_ invocation: Invocation) -> CLIError {
        guard invocation.source(of: CommandTree.dbOption) != .defaultValue else {
            return CLIError(
                .noInput, "no database given, and there is no iapctl.db in the current folder",
                hint: "point --db PATH (or IAPCTL_DB) at the database, or create one here with: iapctl db init")
        }
        let initCommand = "iapctl db init --db \(ShellWord.word(URLSecrets.redacted(raw(invocation))))"
        // A file in a folder that does not exist either: db init would fail the same way.
        if case .sqlite(let path)? = try? location(raw(invocation)), let slash = path.lastIndex(of: "/"),
            slash != path.startIndex
        {
            let folder = String(path[..<slash])
            var info = stat()
            if stat(folder, &info) != 0, errno == ENOENT {
                return CLIError(
                    .noInput, "database \(display(invocation)) does not exist, nor its folder \(folder)",
                    hint: "create both with: mkdir -p \(ShellWord.word(folder)) && \(initCommand)")
            }
        }
        return CLIError(.noInput, "database \(display(invocation)) does not exist", hint: "create it with: " + initCommand)
    }

    /// The 78 error for a database whose schema is newer than this iapctl's.
    static func newer(_ error: NewerSchema, _ invocation: Invocation) -> CLIError {
        CLIError(
            .config,
            "database \(display(invocation)) has schema version \(error.current), newer than this iapctl supports "
                + "(\(error.supported))", hint: "upgrade iapctl")
    }

    /// `handler`, with SQLite's access errors given a file-permission hint (the generic one speaks
    /// of MySQL users and passwords).
    static func wrap(_ handler: @escaping CommandHandler) -> CommandHandler {
        { invocation in
            do {
                return try handler(invocation)
            } catch StoreError.accessDenied(let message) {
                guard case .sqlite? = try? location(raw(invocation)) else {
                    throw StoreError.accessDenied(message)
                }
                throw CLIError(
                    .config, message,
                    hint: "check the permissions of the database file and its folders (ls -l), ask their owner "
                        + "for access, or use another --db; look-ups (list, show, entitled, doctor, audit) need "
                        + "only read access, changes need write access")
            }
        }
    }
}

extension DatabaseLocation.ParseError: CLIErrorConvertible {
    /// Usage errors (64): the `--db` text names no database.
    public var cliError: CLIError {
        let form = "the form is mysql://USER@HOST[:PORT]/NAME[?socket=PATH]"
        switch self {
        case .emptySQLitePath:
            return CLIError.usage("--db sqlite: needs a path, e.g. sqlite:iapctl.db")
        case .unsupportedScheme(let scheme):
            return CLIError.usage(
                "unsupported database URL scheme '\(scheme)'",
                hint: "use a file path, sqlite:PATH, mysql://USER@HOST[:PORT]/NAME or postgres://USER@HOST[:PORT]/NAME")
        case .invalidMySQLURL(let message, let containedPassword):
            return CLIError.usage(
                "--db: \(message)",
                hint: containedPassword
                    ? "put the password in IAPCTL_DB_PASSWORD or an option file (?option-file=PATH), never on the command line"
                    : form)
        case .malformedMySQLURL:
            return CLIError.usage("--db: not a valid MySQL URL", hint: form)
        case .invalidPostgresURL(let message, let containedPassword):
            return CLIError.usage(
                "--db: \(message)",
                hint: containedPassword
                    ? "put the password in PGPASSWORD, ~/.pgpass or a service file, never on the command line"
                    : "the form is postgres://USER@HOST[:PORT]/NAME[?host=/SOCKET/FOLDER&sslmode=…]")
        }
    }
}

extension NotAnSQLiteDatabase: CLIErrorConvertible {
    /// Exit 65: the file exists but its content has the wrong shape (66 would mean nothing is there,
    /// and its `db init` hint cannot help: `db init` refuses the same file).
    public var cliError: CLIError {
        CLIError(
            .dataError, "\(path) is not an iapctl database: the file is not an SQLite database",
            hint: "point --db (or IAPCTL_DB) at the iapctl database file, or create a new one with: "
                + "iapctl db init --db NEW.db")
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
        case .busy(let m, .transactionLost), .busy(let m, .clusterUnavailable):
            // The server ended the session or cannot take writes: a restart or failover, not a lock.
            return CLIError(
                .tempFail, Self.withoutSQL(m),
                hint: "run the same command again once a server accepts writes: what was reported is committed, "
                    + "the rest is not, duplicates are recognised")
        case .busy(let m, _): return CLIError(.tempFail, Self.withoutSQL(m), hint: "another process holds the database; retry")
        case .unavailable(let m):
            return CLIError(
                .unavailable, Self.withoutSQL(m), hint: "check that the database server is running and reachable, then retry")
        case .libraryUnavailable(let m): return CLIError(.unavailable, m)
        case .accessDenied(let m):
            return CLIError(
                .config, Self.withoutSQL(m), hint: "check the database user, its password (IAPCTL_DB_PASSWORD) and privileges")
        case .misconfigured(let m):
            return CLIError(
                .config, Self.withoutSQL(m),
                hint: "nothing of the transaction it failed in was written; after the fix, run the same command "
                    + "again (duplicates are recognised)")
        case .ioFailure(let m):
            return CLIError(
                .ioError, Self.withoutSQL(m),
                hint: "free disk space (or raise the file-size limit), then re-run the same input: "
                    + "what was reported is committed, the rest is not, duplicates are recognised")
        case .failure(let m): return CLIError(.software, Self.withoutSQL(m))
        case .corrupt:
            return CLIError(
                .dataError, description,
                hint: "the stored bytes changed after they were written (disk, backup or a hand edit): "
                    + "restore the row from a backup; nothing was changed")
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
