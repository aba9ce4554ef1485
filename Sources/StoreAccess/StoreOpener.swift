import MySQLStore
import PostgresStore
import SQLiteStore
import SubscriptionModel

/// Opens the store at a location: an existing one, a new one (`db init`), or one for look-ups.
public struct StoreOpener: Sendable {
    /// How the store is opened.
    public enum Mode: Sendable {
        /// An existing database; a missing one is `StoreError.notFound` and nothing is created.
        case existing
        /// Created when missing (SQLite: a new file readable by its owner only, mode 0600; MySQL:
        /// `CREATE DATABASE`). The schema is not touched: migrating is `db init`'s.
        case create
        /// An existing database for look-ups: SQLite opens the file read-only and creates no file
        /// (MySQL relies on the user's privileges).
        case readOnly
    }

    /// Where the database is.
    public var location: DatabaseLocation
    /// MySQL's password (`IAPCTL_DB_PASSWORD`; never in the URL); nil leaves it to the option file.
    public var password: String?
    /// The server backends' I/O timeout (`IAPCTL_DB_TIMEOUT`); nil for the store's defaults.
    public var timeout: DatabaseTimeout?

    public init(location: DatabaseLocation, password: String? = nil, timeout: DatabaseTimeout? = nil) {
        self.location = location
        self.password = password
        self.timeout = timeout
    }

    /// Opens the store. Throws `StoreError`, or ``NotAnSQLiteDatabase`` for a file that is not SQLite.
    public func open(_ mode: Mode = .existing) throws -> any Store {
        switch location {
        case .sqlite(let path):
            return try SQLiteStore(path: path, create: mode == .create, readOnly: mode == .readOnly)
        case .mysql(let url):
            return try mysql(url, create: mode == .create)
        case .postgres(let url):
            return try postgres(url, create: mode == .create)
        }
    }

    /// The PostgreSQL store itself (`db init` and `db status` use its schema plan). The password is
    /// `IAPCTL_DB_PASSWORD` when set, else libpq's own (`PGPASSWORD`, `~/.pgpass`, a service file).
    func postgres(_ url: PostgresURL, create: Bool) throws -> PostgresStore {
        let seconds = timeout?.seconds
        return try PostgresStore(
            url: url, password: password, create: create,
            connectTimeoutSeconds: seconds.map { min($0, PostgresStore.defaultConnectTimeoutSeconds) }
                ?? PostgresStore.defaultConnectTimeoutSeconds,
            ioTimeoutSeconds: seconds ?? PostgresStore.defaultIOTimeoutSeconds)
    }

    /// The MySQL store itself (`db init` and `db status` use its schema plan). The connect timeout
    /// is the I/O timeout when that is shorter than the default (10 s).
    func mysql(_ url: MySQLURL, create: Bool) throws -> MySQLStore {
        let seconds = timeout?.seconds
        return try MySQLStore(
            url: url, password: password, create: create,
            connectTimeoutSeconds: seconds.map { min($0, MySQLStore.defaultConnectTimeoutSeconds) }
                ?? MySQLStore.defaultConnectTimeoutSeconds,
            ioTimeoutSeconds: seconds ?? MySQLStore.defaultIOTimeoutSeconds)
    }
}

/// A file at the `--db` path that is not an SQLite database (thrown by ``StoreOpener/open(_:)``).
public typealias NotAnSQLiteDatabase = SQLiteStore.NotADatabase
