import MySQLStore
import PostgresStore

/// Where the database is: the `--db` text (env `IAPCTL_DB`, config `db`) parsed.
public enum DatabaseLocation: Equatable, Sendable {
    /// An SQLite file (`PATH`, `sqlite:PATH` or `sqlite://PATH`).
    case sqlite(path: String)
    /// A MySQL/MariaDB database (`mysql://…` or `mariadb://…`), its URL checked.
    case mysql(url: MySQLURL)
    /// A PostgreSQL database (`postgres://…` or `postgresql://`): libpq's own URI.
    case postgres(url: PostgresURL)

    /// Why a `--db` text names no database this build can open.
    public enum ParseError: Error, Equatable, Sendable {
        /// `sqlite:` with nothing after it.
        case emptySQLitePath
        /// `SCHEME://…` with a scheme other than mysql, mariadb or sqlite.
        case unsupportedScheme(String)
        /// A `mysql://` URL that `MySQLURL` refuses: what is wrong (never repeating a password), and
        /// whether it was refused for carrying a password.
        case invalidMySQLURL(message: String, containedPassword: Bool)
        /// A `mysql://` URL that could not be read for another reason.
        case malformedMySQLURL
        /// A `postgres://` URL that cannot be used: what is wrong (never repeating a password), and
        /// whether it was refused for carrying a password.
        case invalidPostgresURL(message: String, containedPassword: Bool)
    }

    /// Parses `PATH`, `sqlite:PATH`, `sqlite://PATH`, `mysql://USER@HOST[:PORT]/NAME[?…]` (or `mariadb://`)
    /// or `postgres://USER@HOST[:PORT]/NAME[?…]` (or `postgresql://`).
    public init(parsing text: String) throws(ParseError) {
        if PostgresURL.names(text) {
            do {
                self = .postgres(url: try PostgresURL(parsing: text))
            } catch {
                throw .invalidPostgresURL(message: error.message, containedPassword: error.containedPassword)
            }
            return
        }
        if text.hasPrefix("mysql://") || text.hasPrefix("mariadb://") {
            do {
                self = .mysql(url: try MySQLURL(parsing: text))
            } catch let error as MySQLURL.ParseError {
                throw .invalidMySQLURL(message: error.message, containedPassword: error.containedPassword)
            } catch {
                throw .malformedMySQLURL
            }
            return
        }
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw .emptySQLitePath }
            self = .sqlite(path: path)
            return
        }
        if let scheme = text.split(separator: ":", maxSplits: 1).first, text.contains("://") {
            throw .unsupportedScheme(String(scheme))
        }
        self = .sqlite(path: text)
    }

    /// Whether `text` names a database server (`mysql://`, `mariadb://`, `postgres://` or
    /// `postgresql://`), valid or not.
    public static func namesServer(_ text: String) -> Bool {
        text.hasPrefix("mysql://") || text.hasPrefix("mariadb://") || PostgresURL.names(text)
    }

    /// Whether this is a MySQL/MariaDB database.
    public var isMySQL: Bool {
        if case .mysql = self { return true }
        return false
    }

    /// Whether this is a database on a server (MySQL/MariaDB or PostgreSQL), not a file.
    public var isServer: Bool {
        if case .sqlite = self { return false }
        return true
    }
}

/// `IAPCTL_DB_TIMEOUT`: seconds a MySQL/MariaDB or PostgreSQL server may take to answer before the run stops.
public struct DatabaseTimeout: Equatable, Sendable {
    /// The text is not a whole number of seconds in 1…86400.
    public struct ParseError: Error, Equatable, Sendable {
        /// The text as given.
        public let text: String

        public init(text: String) { self.text = text }
    }

    /// The accepted range, in seconds.
    public static let range: ClosedRange<UInt32> = 1...86_400

    /// Seconds.
    public let seconds: UInt32

    /// Parses a number of seconds; nil or empty text is no timeout (the store's defaults).
    public static func parse(_ text: String?) throws(ParseError) -> DatabaseTimeout? {
        guard let text, !text.isEmpty else { return nil }
        guard let seconds = UInt32(text), range.contains(seconds) else { throw ParseError(text: text) }
        return DatabaseTimeout(seconds: seconds)
    }
}
