internal import CPostgres
import IAPFoundation

/// A PostgreSQL database named by `--db postgres://USER@HOST[:PORT]/NAME[?…]` (or `postgresql://`).
///
/// The text is libpq's own connection URI and is handed to libpq as it is: libpq parses it (Unix
/// sockets by path with `?host=/run/postgresql`, several hosts `HOST1,HOST2` with
/// `target_session_attrs=read-write`, `sslmode`, `sslrootcert`, `connect_timeout`, `service`…), and
/// finds the password itself in `PGPASSWORD`, `~/.pgpass` or a service file. iapctl checks only what
/// it must: the scheme, that libpq can read it, that it names a database, and that no password is
/// in the text (a password on the command line is visible to every user of the machine in `ps`).
public struct PostgresURL: Equatable, Sendable, CustomStringConvertible {
    /// The URI as given (it never holds a password).
    public let text: String
    /// The database it names (libpq's `dbname`); nil when libpq is not installed to read it.
    public let database: String?

    /// Why a `postgres://` text cannot be used.
    public struct ParseError: Error, Equatable, Sendable {
        /// What is wrong, never repeating a password.
        public let message: String
        /// Whether it was refused for carrying a password.
        public let containedPassword: Bool
    }

    /// Whether `text` starts with a PostgreSQL scheme.
    public static func names(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    public init(parsing text: String) throws(ParseError) {
        guard Self.names(text) else {
            throw ParseError(message: "not a PostgreSQL URL (postgres://…)", containedPassword: false)
        }
        if URLSecrets.carriesPassword(text) {
            throw ParseError(
                message: "the URL holds a password: iapctl does not take passwords on the command line",
                containedPassword: true)
        }
        self.text = text
        // Without libpq the URL cannot be read here; connecting then says what to install.
        guard let options = try Self.parsed(text) else {
            database = nil
            return
        }
        if options["password"] != nil {
            throw ParseError(
                message: "the URL holds a password: iapctl does not take passwords on the command line",
                containedPassword: true)
        }
        guard let name = options["dbname"], !name.isEmpty else {
            throw ParseError(
                message: "name the database in the URL's path: postgres://USER@HOST[:PORT]/NAME", containedPassword: false)
        }
        database = name
    }

    public var description: String { text }

    /// The keywords libpq reads from `text` (only those given), or nil when libpq is not installed.
    static func parsed(_ text: String) throws(ParseError) -> [String: String]? {
        guard iapctl_pq_unavailable() == nil else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            let message = error.map { String(cString: $0) } ?? "not a valid connection URI"
            if let error { PQfreemem(error) }
            throw ParseError(
                message: "libpq cannot read the URL: " + URLSecrets.redacted(Self.oneLine(message)), containedPassword: false)
        }
        defer { PQconninfoFree(options) }
        var result: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { result[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return result
    }

    /// libpq's message on one line: its lines (a failure, then a question indented with a tab, or
    /// one failure per host tried) joined with "; ", each without its surrounding blanks, so a
    /// terminal, a log line and a ticket show it whole instead of an escaped tab.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmed(.spacesAndTabs) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }
}
