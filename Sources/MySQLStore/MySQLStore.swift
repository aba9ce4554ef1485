import IAPFoundation
import StoreSQL
import SubscriptionModel

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
public final class MySQLStore: SQLStoreBackend {
    /// Where this store is connected (never holds a password).
    public let url: MySQLURL
    let connection: Connection
    /// The shared transaction runner over this connection (`read`, `write`, `schemaVersion`).
    public let transactions: SQLTransactions

    /// Seconds `mysql_real_connect` waits for the server by default.
    public static let defaultConnectTimeoutSeconds = ServerOpening.defaultConnectTimeoutSeconds
    /// Seconds one read or write of a statement waits for a stalled server by default; then the
    /// connection counts as lost (``StoreError/unavailable(_:)``, exit 69) instead of hanging. Lock
    /// waits are kept shorter (``lockWaitSeconds(ioTimeout:)``) so a waiting statement is not taken
    /// for a stalled server.
    public static let defaultIOTimeoutSeconds = ServerOpening.defaultIOTimeoutSeconds

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
        connection = try ServerOpening.connect(create: create) { () throws(StoreError) in
            try Connection(url: url, password: password, database: url.database, timeouts: timeouts)
        } createThenConnect: {
            let connection = try Connection(url: url, password: password, database: nil, timeouts: timeouts)
            // The name was checked by MySQLURL (letters, digits, _ and $): quoting it is enough.
            try connection.execute(
                "CREATE DATABASE IF NOT EXISTS `\(url.database)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            try connection.selectDatabase(url.database)
            return connection
        }
        transactions = SQLTransactions(
            connection: connection, dialect: connection.serverVersion.contains("MariaDB") ? .mariadb : .mysql, supported: Schema.supported,
            label: url.description,
            dbArgument: ShellWord.word(url.description))
        let cap = Self.lockWaitSeconds(ioTimeout: ioTimeoutSeconds)
        if let lockWaitTimeoutSeconds {
            try connection.run(MySQLSQL.lockWaitTimeout, [.int(Int64(min(lockWaitTimeoutSeconds, cap)))])
        } else {
            // The server's setting, unless it would outlast the I/O timeout.
            try connection.run(MySQLSQL.capLockWaitTimeout, [.int(Int64(cap))])
        }
    }

    /// The server's version string (for `db status`).
    public var serverVersion: String { connection.serverVersion }

    // MARK: Store

    /// Brings the schema up to date in two phases. MySQL commits DDL implicitly, so first each
    /// pending migration's tables, columns and indexes are ensured (added only where
    /// information_schema shows them missing: a rerun adds nothing twice). Then ONE transaction runs
    /// every pending migration's data steps in order, `work`, and records their versions: a failure
    /// or a kill anywhere leaves no version recorded and no data changed, and the next run ensures
    /// the DDL again (nothing to add) and redoes the data work from scratch. A named lock keeps two
    /// `db init` runs from interleaving.
    public func migrate(then work: (_ applied: [String], _ session: any StoreSession) throws -> Void) throws -> [String] {
        guard !transactions.isActive else {
            throw StoreError.failure("programmer error: migrate() called inside a transaction")
        }
        let incompatible = try incompatibleColumns()
        guard incompatible.isEmpty else {
            throw StoreError.schemaMismatch(
                "the existing tables have columns iapctl cannot use; nothing was changed: "
                    + incompatible.joined(separator: "; "))
        }
        // GET_LOCK holds per node on a Galera cluster: a `db init` on another node at the same time
        // may make a change first. Its step then fails (table, column or key exists, the version is
        // recorded, a certification conflict): plan again from the schema as it is now.
        var attempt = 1
        while true {
            connection.errors.lastCode = 0
            do {
                return try withMigrationLock { try migrateLocked(then: work) }
            } catch _ where attempt < 5 && MySQLErrorMapping.isSchemaRace(connection.errors.lastCode) {
                try? connection.execute("ROLLBACK")
                RetryPolicy.pause(beforeAttempt: attempt)
                attempt += 1
            }
        }
    }

    private func migrateLocked(then work: (_ applied: [String], _ session: any StoreSession) throws -> Void) throws -> [String] {
        try connection.execute(Schema.migrationsTableDDL)
        let current = try transactions.currentVersion()
        try transactions.refuseNewer(current)
        let pending = zip(StoreSchema.migrations, Schema.migrations).filter { $0.1.version > current }
        // Phase 1, DDL (each statement commits): what the pending migrations need, in order.
        for (_, migration) in pending {
            let snapshot = try SchemaSnapshot.read(connection)
            for step in SchemaPlan.steps(for: migration.tables, in: snapshot) {
                try connection.execute(step.statement)
            }
        }
        try connection.execute("COMMIT")  // autocommit is off (see Connection): end the reads' transaction
        guard !pending.isEmpty else {
            try dropWhatMigrationsRemoved()
            transactions.schemaIsCurrent()
            return []
        }
        // Phase 2, one transaction: the data steps (idempotent, in migration order), the caller's
        // work, the versions.
        let applied = try transactions.migration { session in
            for (shared, migration) in pending {
                for statement in migration.statements { try connection.execute(statement) }
                try StoreSchema.runSwiftDataSteps(shared, connection)
                try transactions.record(shared)
            }
            let applied = pending.map(\.1.name)
            try work(applied, session)
            return applied
        }
        try dropWhatMigrationsRemoved()
        return applied
    }

    /// Phase 3 (each statement commits): the columns and tables recorded migrations no longer use,
    /// dropped where they still exist. Only after the data steps that read them have committed, and
    /// on every run, so a kill between the version's commit and a drop is finished by the next.
    private func dropWhatMigrationsRemoved() throws(StoreError) {
        let current = try transactions.currentVersion()
        let drops = Schema.migrations.filter { $0.version <= current }.flatMap(\.drops)
        guard !drops.isEmpty else { return }
        let snapshot = try SchemaSnapshot.read(connection)
        for drop in drops where drop.applies(to: snapshot) { try connection.execute(drop.statement) }
        try connection.execute("COMMIT")
    }

    /// The DDL ``migrate()`` would run now, in order (for `db init --dry-run`). Runs nothing.
    public func plannedMigrationStatements() throws(StoreError) -> [String] {
        let snapshot = try SchemaSnapshot.read(connection)
        var statements: [String] = []
        let current: Int
        if snapshot.hasTable(Schema.migrationsTable) {
            current = try transactions.currentVersion()
            try transactions.refuseNewer(current)
        } else {
            statements.append(Schema.migrationsTableDDL)
            current = 0
        }
        let pending = Schema.migrations.filter { $0.version > current }
        // Later migrations see the tables earlier ones create: plan them against the full set, one
        // spec per table (the latest; later migrations only add to a table).
        var tables: [TableSpec] = []
        // (A table a pending migration drops is not listed: created and dropped again, it never stays.)
        let dropped = Set(pending.flatMap { $0.drops.filter { $0.column == nil }.map(\.table) })
        for table in pending.flatMap(\.tables) where !dropped.contains(table.name) {
            if let index = tables.firstIndex(where: { $0.name == table.name }) {
                tables[index] = table
            } else {
                tables.append(table)
            }
        }
        statements += SchemaPlan.steps(for: tables, in: snapshot).map(\.statement)
        statements += pending.flatMap(\.statements)
        statements += Schema.migrations.flatMap(\.drops).filter { $0.applies(to: snapshot) }.map(\.statement)
        return statements
    }

    /// Columns of existing tables whose type iapctl cannot use, each with how to migrate it
    /// (`db init` refuses to go on while there are any; `db status` lists them).
    public func incompatibleColumns() throws(StoreError) -> [String] {
        SchemaPlan.incompatibleColumns(for: Schema.currentTables, in: try SchemaSnapshot.read(connection))
    }

    /// What the database lacks of this build's schema: tables, columns and indexes, e.g.
    /// `column orders.price` (for `db status`). Empty when complete.
    public func missingSchemaItems() throws(StoreError) -> [String] {
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
        if !transactions.isActive { try connection.execute("COMMIT") }
    }

    /// Runs `sql` on this store's connection as if the server had done it, unseen by the unit's
    /// checks (tests of a server that ends the transaction under a unit). iapctl never calls it.
    @_spi(Testing)
    public func executeBehindTheStoreForTesting(_ sql: String) throws {
        try connection.executeUnchecked(sql)
    }

    /// The server's id of this store's connection (for `KILL` in tests).
    @_spi(Testing)
    public var connectionIdForTesting: UInt { connection.threadId }

    // MARK: schema

    private func withMigrationLock<T>(_ body: () throws -> T) throws -> T {
        let name = "iapctl.migrate." + url.database
        let got = try connection.rows(MySQLSQL.migrationLock, [.text(name), .int(60)]).first?.optionalInt(0)
        guard got == 1 else {
            throw StoreError.busy(
                "another iapctl is migrating database \(url.database) (waited 60 s): retry", .migrationInProgress)
        }
        defer { _ = try? connection.rows(MySQLSQL.migrationUnlock, [.text(name)]) }
        return try body()
    }
}
