import IAPFoundation
import StoreSQL
import SubscriptionModel

/// The ``Store`` over a PostgreSQL server (12 or later), through libpq.
///
/// One instance is one connection and is not thread-safe: use it from one thread at a time.
///
/// Isolation: write transactions run at READ COMMITTED. Exactly-once rests on unique keys
/// (`orders.no`, `orders.trade_no`, `member_contracts.contract_id`, the notification claims): two
/// writers that both see "no such row" race to the unique index and the second waits for the
/// first; after its commit the second inserts nothing and gets ``StoreError/conflict(_:)`` (the
/// engine then retries the whole event and finds the work done). Rows the engine reads and then
/// updates are read with `FOR UPDATE`. A deadlock (40P01) or a serialization failure (40001) rolls
/// the whole unit back and it is run again; a lock wait past `lock_timeout` (55P03), a server
/// that ended the session (57P01: a shutdown or failover), a read-only server (25006: a standby)
/// and a lost connection are ``StoreError/busy(_:_:)`` (exit 75) naming what happened. Read
/// transactions use REPEATABLE READ, so a listing is one point in time.
///
/// No session state is relied on beyond the transaction (no `SET`, no temporary tables, no
/// session advisory locks): behind a pooler in transaction mode each transaction may run on
/// another server connection. Statements are prepared by name (the extended protocol): a pooler
/// must support that (PgBouncer 1.21 or later with `max_prepared_statements`).
public final class PostgresStore: SQLStoreBackend {
    /// Where this store is connected (never holds a password).
    public let url: PostgresURL
    let connection: Connection
    /// The shared transaction runner over this connection (`read`, `write`, `schemaVersion`).
    public let transactions: SQLTransactions

    /// Seconds libpq waits to connect by default (the URL's `connect_timeout` wins).
    public static let defaultConnectTimeoutSeconds = ServerOpening.defaultConnectTimeoutSeconds
    /// Seconds a statement may wait for the server's answer before the connection is given up
    /// (exit 69), and (TCP) the network may hold unacknowledged data (`tcp_user_timeout`). Lock
    /// waits are capped at three quarters of it (`lock_timeout`, 55P03: busy, retried).
    public static let defaultIOTimeoutSeconds = ServerOpening.defaultIOTimeoutSeconds

    /// Connects to the database `url` names.
    ///
    /// - Parameters:
    ///   - password: from `IAPCTL_DB_PASSWORD`; nil leaves it to libpq (`PGPASSWORD`, `~/.pgpass`,
    ///     a service file).
    ///   - create: when the database does not exist, create it (`iapctl db init`); otherwise a
    ///     missing database is ``StoreError/notFound(_:)``. The schema is not touched: call ``migrate()``.
    public init(
        url: PostgresURL, password: String?, create: Bool = false,
        connectTimeoutSeconds: UInt32 = PostgresStore.defaultConnectTimeoutSeconds,
        ioTimeoutSeconds: UInt32 = PostgresStore.defaultIOTimeoutSeconds
    ) throws {
        self.url = url
        let timeouts = Connection.Timeouts(connect: connectTimeoutSeconds, io: ioTimeoutSeconds)
        connection = try ServerOpening.connect(create: create) { () throws(StoreError) in
            try Connection(url: url, password: password, database: nil, timeouts: timeouts)
        } createThenConnect: {
            // CREATE DATABASE runs outside a transaction, from the server's maintenance database.
            guard let name = url.database else {
                throw StoreError.notFound("\(url.description): the URL names no database")
            }
            let maintenance = try Connection(url: url, password: password, database: "postgres", timeouts: timeouts)
            try Self.createDatabase(name, on: maintenance)
            return try Connection(url: url, password: password, database: nil, timeouts: timeouts)
        }
        transactions = SQLTransactions(
            connection: connection, dialect: PostgresSQL.dialect(ioTimeoutSeconds: ioTimeoutSeconds), supported: Schema.supported,
            label: url.description,
            dbArgument: ShellWord.word(url.description))
    }

    /// Creates database `name`; one that another `db init` created meanwhile is fine.
    private static func createDatabase(_ name: String, on connection: Connection) throws(StoreError) {
        let statement = "CREATE DATABASE \(try connection.quotedIdentifier(name)) ENCODING 'UTF8'"
        let outcome = Result { () throws(StoreError) in try connection.execute(statement) }
        guard case .failure(let error) = outcome else { return }
        switch error {
        case .failure(let message) where message.contains("SQLSTATE 42P04"): return  // it exists
        case .conflict: return  // the same, seen as the catalog's unique key
        default: throw error
        }
    }

    /// The server's version string (for `db status`).
    public var serverVersion: String { connection.serverVersion }

    // MARK: Store

    /// Brings the schema up to date in ONE transaction: under an advisory lock (a second `db init`
    /// waits, then finds the work done), every pending migration's DDL and data steps in order,
    /// `work`, and the version rows. PostgreSQL's DDL is transactional: a failure or a kill
    /// anywhere leaves the database as it was.
    public func migrate(then work: (_ applied: [String], _ session: any StoreSession) throws -> Void) throws -> [String] {
        guard !transactions.isActive else {
            throw StoreError.failure("programmer error: migrate() called inside a transaction")
        }
        return try transactions.migration { session in
            // Statements prepared before this migration may read columns it changes: prepared anew.
            try connection.forgetPreparedStatements()
            try connection.execute(PostgresSQL.migrationLock)
            try connection.execute(PostgresSQL.migrationsTableDDL)
            let current = try transactions.currentVersion()
            try transactions.refuseNewer(current)
            var applied: [String] = []
            for (shared, migration) in zip(StoreSchema.migrations, Schema.migrations) where migration.version > current {
                for statement in migration.statements { try connection.execute(statement) }
                try connection.forgetPreparedStatements()
                try StoreSchema.runSwiftDataSteps(shared, connection)
                for statement in migration.afterData { try connection.execute(statement) }
                if !migration.afterData.isEmpty { try connection.forgetPreparedStatements() }
                try transactions.record(shared)
                applied.append(migration.name)
            }
            try work(applied, session)
            return applied
        }
    }

    /// The statements ``migrate()`` would run now, in order (for `db init --dry-run`). Runs nothing.
    public func plannedMigrationStatements() throws(StoreError) -> [String] {
        let current = try transactions.currentVersion()
        try transactions.refuseNewer(current)
        let pending = Schema.migrations.filter { $0.version > current }
        guard !pending.isEmpty else { return [] }
        return (current == 0 ? [PostgresSQL.migrationsTableDDL] : [])
            + pending.flatMap { $0.statements + $0.afterData }
    }

    // MARK: testing support

    /// Drops the database `url` names over a connection to the maintenance database (for tests and
    /// throwaway databases only: iapctl never calls it).
    @_spi(Testing)
    public static func dropDatabase(url: PostgresURL, password: String?) throws {
        guard let name = url.database else { return }
        let connection = try Connection(
            url: url, password: password, database: "postgres", timeouts: .init(connect: 10, io: 60))
        try connection.execute("DROP DATABASE IF EXISTS \(try connection.quotedIdentifier(name)) WITH (FORCE)")
    }

    /// Runs statements without values (DDL or fixtures in tests). iapctl never calls it.
    @_spi(Testing)
    public func executeForTesting(_ sql: String) throws {
        try connection.execute(sql)
    }

    /// The server's process id of this store's connection (for `pg_terminate_backend` in tests).
    @_spi(Testing)
    public var backendPIDForTesting: Int32 { connection.backendPID }

    /// This connection's round trips so far.
    @_spi(Testing)
    public var roundTripsForTesting: Int { connection.trips.count }
}
