import IAPFoundation
import StoreSQL
import SubscriptionEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The ``Store`` over a MySQL 8 / MariaDB 10.5+ server (InnoDB), through MariaDB Connector/C.
///
/// One instance is one connection and is not thread-safe: use it from one thread at a time.
///
/// Isolation: write transactions run at READ COMMITTED. Exactly-once does not rest on the
/// isolation level but on unique keys (`orders.no`, `orders.trade_no`,
/// `member_contracts.contract_id`): two writers that both see "no such order" race to the unique
/// index and the loser gets ``StoreError/conflict(_:)`` (the engine then retries the whole event and
/// finds the work done). Rows the engine reads and then updates are read with `FOR UPDATE`, so a
/// concurrent writer waits and then sees the committed row. READ COMMITTED takes no gap locks, so
/// unrelated inserts do not block or deadlock each other, and every statement sees the latest
/// committed data (REPEATABLE READ's old snapshot would let a plain read miss a row that a
/// concurrent transaction committed). Read transactions use REPEATABLE READ with a consistent
/// snapshot, so a listing is one point in time.
public final class MySQLStore: Store {
    /// Where this store is connected (never holds a password).
    public let url: MySQLURL
    let connection: Connection
    private var active: MySQLSession?
    private var schemaChecked = false

    /// Seconds `mysql_real_connect` waits for the server by default.
    public static let defaultConnectTimeoutSeconds: UInt32 = 10
    /// Seconds one read or write of a statement waits for a stalled server by default; then the
    /// connection counts as lost (``StoreError/unavailable(_:)``, exit 69) instead of hanging. Lock
    /// waits are kept shorter (``lockWaitSeconds(ioTimeout:)``) so a waiting statement is not taken
    /// for a stalled server.
    public static let defaultIOTimeoutSeconds: UInt32 = 60

    /// The session's `innodb_lock_wait_timeout` for an I/O timeout: well inside it.
    static func lockWaitSeconds(ioTimeout: UInt32) -> Int { max(1, Int(ioTimeout) * 3 / 4) }

    /// Connects to the database `url` names.
    ///
    /// - Parameters:
    ///   - password: from `IAPCTL_DB_PASSWORD`; `nil` leaves it to the option file
    ///     (`?option-file=PATH`, else `~/.my.cnf` when it exists, group `[client]`).
    ///   - create: when the database does not exist, create it (`iapctl db init`); otherwise a
    ///     missing database is ``StoreError/notFound(_:)``. The schema is not touched: call ``migrate()``.
    ///   - lockWaitTimeoutSeconds: `innodb_lock_wait_timeout` for this session (nil: the server's).
    public init(
        url: MySQLURL, password: String?, create: Bool = false,
        connectTimeoutSeconds: UInt32 = MySQLStore.defaultConnectTimeoutSeconds,
        ioTimeoutSeconds: UInt32 = MySQLStore.defaultIOTimeoutSeconds,
        lockWaitTimeoutSeconds: Int? = nil
    ) throws {
        self.url = url
        let timeouts = Connection.Timeouts(connect: connectTimeoutSeconds, io: ioTimeoutSeconds)
        connection = try Self.connect(url: url, password: password, create: create, timeouts: timeouts)
        let cap = Self.lockWaitSeconds(ioTimeout: ioTimeoutSeconds)
        if let lockWaitTimeoutSeconds {
            try connection.run(MySQLSQL.lockWaitTimeout, [.int(Int64(min(lockWaitTimeoutSeconds, cap)))])
        } else {
            // The server's setting, unless it would outlast the I/O timeout.
            try connection.run(MySQLSQL.capLockWaitTimeout, [.int(Int64(cap))])
        }
    }

    private static func connect(
        url: MySQLURL, password: String?, create: Bool, timeouts: Connection.Timeouts
    ) throws -> Connection {
        let first: Result<Connection, StoreError> = Result {
            () throws(StoreError) in
            try Connection(url: url, password: password, database: url.database, timeouts: timeouts)
        }
        switch first {
        case .success(let connection):
            return connection
        case .failure(let error):
            guard create, case .notFound = error else { throw error }
            let connection = try Connection(url: url, password: password, database: nil, timeouts: timeouts)
            // The name was checked by MySQLURL (letters, digits, _ and $): quoting it is enough.
            try connection.execute(
                "CREATE DATABASE IF NOT EXISTS `\(url.database)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            try connection.selectDatabase(url.database)
            return connection
        }
    }

    /// The server's version string (for `db status`).
    public var serverVersion: String { connection.serverVersion }

    // MARK: Store

    public func read<T>(_ body: (any StoreSession) throws -> T) throws -> T {
        if let active {
            // Nested read: part of the enclosing transaction.
            return try body(active)
        }
        try checkSchema()
        try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return try transaction(
            mode: .read, begin: "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", commit: true, body)
    }

    public func write<T>(commit: Bool, _ body: (any StoreSession) throws -> T) throws -> T {
        if let active {
            guard active.mode == .write else {
                throw StoreError.failure("programmer error: write transaction requested inside a read transaction")
            }
            // Nested write: a savepoint of the enclosing write transaction.
            return try active.savepoint(keep: commit) { try body(active) }
        }
        try checkSchema()
        return try transaction(mode: .write, begin: "START TRANSACTION READ WRITE", commit: commit, body)
    }

    public func schemaVersion() throws -> (current: Int, supported: Int) {
        (try currentVersion(), Schema.supported)
    }

    public func migrate() throws -> [String] {
        guard active == nil else {
            throw StoreError.failure("programmer error: migrate() called inside a transaction")
        }
        // MySQL commits DDL implicitly, so a migration is a list of idempotent steps, each checked
        // against information_schema; a lock keeps two `db init` runs from interleaving.
        let incompatible = try incompatibleColumns()
        guard incompatible.isEmpty else {
            throw StoreError.schemaMismatch(
                "the existing tables have columns iapctl cannot use; nothing was changed: "
                    + incompatible.joined(separator: "; "))
        }
        return try withMigrationLock {
            try connection.execute(Schema.migrationsTableDDL)
            let current = try currentVersion()
            try Self.refuseNewer(current)
            var applied: [String] = []
            for migration in Schema.migrations where migration.version > current {
                let snapshot = try SchemaSnapshot.read(connection)
                for step in SchemaPlan.steps(for: migration.tables, in: snapshot) {
                    try connection.execute(step.statement)
                }
                for statement in migration.statements { try connection.execute(statement) }
                try connection.run(
                    StoreSQL.recordMigration,
                    [.int(Int64(migration.version)), .text(migration.name), .int(Timestamp.now())])
                applied.append(migration.name)
            }
            schemaChecked = true
            return applied
        }
    }

    /// The DDL ``migrate()`` would run now, in order (for `db init --dry-run`). Runs nothing.
    public func plannedMigrationStatements() throws -> [String] {
        let snapshot = try SchemaSnapshot.read(connection)
        var statements: [String] = []
        let current: Int
        if snapshot.hasTable(Schema.migrationsTable) {
            current = try currentVersion()
            try Self.refuseNewer(current)
        } else {
            statements.append(Schema.migrationsTableDDL)
            current = 0
        }
        let pending = Schema.migrations.filter { $0.version > current }
        // Later migrations see the tables earlier ones create: plan them against the full set, one
        // spec per table (the latest; later migrations only add to a table).
        var tables: [TableSpec] = []
        for table in pending.flatMap(\.tables) {
            if let index = tables.firstIndex(where: { $0.name == table.name }) {
                tables[index] = table
            } else {
                tables.append(table)
            }
        }
        statements += SchemaPlan.steps(for: tables, in: snapshot).map(\.statement)
        statements += pending.flatMap(\.statements)
        return statements
    }

    /// Columns of existing tables whose type iapctl cannot use, each with how to migrate it
    /// (`db init` refuses to go on while there are any; `db status` lists them).
    public func incompatibleColumns() throws -> [String] {
        SchemaPlan.incompatibleColumns(for: Schema.currentTables, in: try SchemaSnapshot.read(connection))
    }

    /// What the database lacks of this build's schema: tables, columns and indexes, e.g.
    /// `column orders.price` (for `db status`). Empty when complete.
    public func missingSchemaItems() throws -> [String] {
        let snapshot = try SchemaSnapshot.read(connection)
        var items: [String] = []
        if !snapshot.hasTable(Schema.migrationsTable) { items.append("table \(Schema.migrationsTable)") }
        items += SchemaPlan.steps(for: Schema.currentTables, in: snapshot).map(\.item)
        return items
    }

    // MARK: testing support

    /// Drops this store's whole database. For tests and throwaway databases only: iapctl never calls it.
    @_spi(Testing)
    public func dropDatabase() throws {
        try connection.execute("DROP DATABASE IF EXISTS `\(url.database)`")
    }

    /// Drops the database `url` names over a new connection (for a test's `@Sendable` cleanup).
    @_spi(Testing)
    public static func dropDatabase(url: MySQLURL, password: String?) throws {
        try MySQLStore(url: url, password: password).dropDatabase()
    }

    /// Runs one statement without values (DDL or fixtures in tests). iapctl never calls it.
    @_spi(Testing)
    public func executeForTesting(_ sql: String) throws {
        try connection.execute(sql)
    }

    // MARK: transactions

    private func transaction<T>(
        mode: MySQLSession.Mode, begin: String, commit: Bool, _ body: (any StoreSession) throws -> T
    ) throws -> T {
        connection.errors.transactionAborted = nil
        try connection.execute(begin)
        let session = MySQLSession(connection: connection, mode: mode)
        active = session
        defer {
            session.close()
            active = nil
        }
        let result: T
        do {
            result = try body(session)
        } catch {
            rollbackQuietly()
            throw error
        }
        if let aborted = connection.errors.transactionAborted {
            // The body swallowed an error after which the server rolled everything back.
            rollbackQuietly()
            throw aborted
        }
        guard commit else {
            try connection.execute("ROLLBACK")
            return result
        }
        do {
            try connection.execute("COMMIT")
        } catch {
            rollbackQuietly()
            if case .unavailable(let message) = error {
                throw StoreError.unavailable(message + " (COMMIT: whether the transaction was committed is unknown)")
            }
            throw error
        }
        return result
    }

    /// Rolls back after an error; the original error is what the caller reports.
    private func rollbackQuietly() {
        // A failure here (the connection is gone) leaves nothing to undo: the server rolls back
        // an open transaction when its connection ends.
        try? connection.execute("ROLLBACK")
    }

    private func withMigrationLock<T>(_ body: () throws -> T) throws -> T {
        let name = "iapctl.migrate." + url.database
        let got = try connection.query(MySQLSQL.migrationLock, [.text(name), .int(60)]).first?.optionalInt(0)
        guard got == 1 else {
            throw StoreError.busy("another iapctl is migrating database \(url.database) (waited 60 s): retry")
        }
        defer { _ = try? connection.query(MySQLSQL.migrationUnlock, [.text(name)]) }
        return try body()
    }

    // MARK: schema

    private func currentVersion() throws -> Int {
        let exists = try connection.query(MySQLSQL.migrationsTableExists, [.text(Schema.migrationsTable)])
        guard try exists.first?.int(0) ?? 0 > 0 else { return 0 }
        return Int(try connection.query(StoreSQL.maxMigration).first?.int(0) ?? 0)
    }

    /// Refuses to work on a database without the schema or with a schema from a newer iapctl.
    private func checkSchema() throws {
        guard !schemaChecked else { return }
        let (current, supported) = try schemaVersion()
        try Self.refuseNewer(current)
        if current == 0 {
            throw StoreError.schemaMismatch(
                "database \(url) has no iapctl schema; create it with: iapctl db init --db '\(url)'")
        }
        if current < supported {
            throw StoreError.schemaMismatch(
                "database schema version \(current) is older than this iapctl's (\(supported)); "
                    + "migrate it with: iapctl db init --db '\(url)'")
        }
        schemaChecked = true
    }

    private static func refuseNewer(_ current: Int) throws(StoreError) {
        guard current <= Schema.supported else {
            throw .schemaMismatch(
                "database schema version \(current) is newer than this iapctl supports (\(Schema.supported)); "
                    + "upgrade iapctl")
        }
    }
}
