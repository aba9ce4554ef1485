import Foundation
import StoreTestSupport
import Testing

/// `iapctl` on a MySQL/MariaDB server: a shop's existing schema, the error exit codes, and
/// concurrent writers. Runs only with `IAPCTL_E2E_BACKEND=mysql` and the test server
/// (`scripts/test` does both); skipped otherwise.
@Suite("MySQL backend, end to end", .mysqlOnly)
struct MySQLTests {
    /// The CLI's database on the test server.
    struct Target {
        let server: TestMySQLServer
        let database: String

        init(_ cli: CLI) throws {
            let mysql = try #require(cli.mysql, "not the MySQL run")
            server = mysql.server
            database = mysql.database
        }

        /// Runs `sql` in the CLI's database; tab-separated rows.
        @discardableResult
        func sql(_ sql: String) throws -> String { try server.run(sql, database: database) }

        /// Whether the database exists on the server.
        func exists() throws -> Bool {
            try !server.run("SHOW DATABASES LIKE '\(database)'").isEmpty
        }

        /// Every table, column (with its type) and index, as text lines: compared before and after.
        func schema() throws -> [String] {
            let columns = try server.run(
                "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
                    + "WHERE TABLE_SCHEMA = '\(database)' ORDER BY TABLE_NAME, COLUMN_NAME")
            let indexes = try server.run(
                "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM information_schema.STATISTICS "
                    + "WHERE TABLE_SCHEMA = '\(database)' ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX")
            return (columns + indexes).split(separator: "\n").map(String.init)
        }
    }

    /// A new, empty database (utf8mb4, binary collation) on the test server.
    static func emptyDatabase() throws -> (CLI, Target) {
        let cli = try CLI()
        let target = try Target(cli)
        try target.server.run("CREATE DATABASE `\(target.database)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        return (cli, target)
    }

    /// A database with the tables an existing shop already has (no iapctl schema), with rows.
    static func seeded() throws -> (CLI, Target) {
        let (cli, target) = try Self.emptyDatabase()
        try target.sql(
            """
            CREATE TABLE orders (
                id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
                no VARCHAR(255) NOT NULL UNIQUE,
                trade_no VARCHAR(255),
                origin_no VARCHAR(255)
            );
            CREATE TABLE member_contracts (
                id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
                contract_id VARCHAR(255) UNIQUE,
                status VARCHAR(32) NOT NULL DEFAULT 'active'
            );
            INSERT INTO orders (no, trade_no, origin_no) VALUES ('legacy-1', '900', '900'), ('legacy-2', NULL, NULL);
            INSERT INTO member_contracts (contract_id, status) VALUES ('900', 'active');
            """)
        return (cli, target)
    }

    // MARK: existing schema

    /// Seed-shaped tables with other column types (`status TINYINT`, `user_id BIGINT`): `db status`
    /// says what is incompatible and how to migrate it; `db init` refuses (exit 78) and changes nothing.
    @Test func incompatibleColumnTypesAreReportedWithTheMigration() throws {
        let (cli, target) = try Self.emptyDatabase()
        try target.sql(
            """
            CREATE TABLE orders (
                id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
                no VARCHAR(255) NOT NULL UNIQUE,
                user_id BIGINT NOT NULL,
                status TINYINT NOT NULL DEFAULT 0,
                trade_no VARCHAR(255),
                created_at INT NOT NULL DEFAULT 0
            );
            INSERT INTO orders (no, user_id, status) VALUES ('legacy-1', 42, 1);
            """)
        let before = try target.schema()
        let status = try cli.run(["db", "status", "-o", "json"])
        let incompatible = try #require(try status.jsonObject()["incompatible"] as? [String], "\(status)")
        for (column, wanted) in [
            ("status", "VARCHAR(16) NOT NULL"), ("user_id", "VARCHAR(255) NOT NULL"), ("created_at", "BIGINT NOT NULL"),
        ] {
            #expect(
                incompatible.contains { $0.contains("orders.\(column)") && $0.contains("ALTER TABLE orders MODIFY \(column) \(wanted)") },
                "\(incompatible)")
        }
        #expect(!incompatible.contains { $0.contains("orders.no") || $0.contains("orders.trade_no") })
        let initialized = try cli.run(["db", "init"])
        #expect(initialized.status == 78, "\(initialized)")
        #expect(initialized.stderr.contains("ALTER TABLE orders MODIFY status VARCHAR(16) NOT NULL"), "\(initialized)")
        #expect(try target.schema() == before, "db init changed a database it refused")
    }

    @Test func statusOnASeedSchemaSaysWhatIsMissing() throws {
        let (cli, _) = try Self.seeded()
        let result = try cli.ok(["db", "status", "-o", "json"])
        let status = try result.jsonObject()
        #expect(status["backend"] as? String == "mysql")
        #expect(status["schema_version"] as? Int == 0)
        #expect((status["server_version"] as? String)?.isEmpty == false)
        #expect(status["database"] as? String == cli.dbPath)
        let missing = try #require(status["missing"] as? [String])
        for item in [
            "table iap_schema_migrations", "column orders.user_id", "column orders.status",
            "unique index (trade_no) on orders", "column member_contracts.user_id", "table iap_ledger",
            "table iap_audit",
        ] {
            #expect(missing.contains(item), "\(item) not in \(missing)")
        }
        // What the shop's schema has is not missing.
        #expect(!missing.contains("column orders.no"))
        #expect(!missing.contains("column orders.trade_no"))
        #expect(!missing.contains("unique index (no) on orders"))
        #expect(!missing.contains("unique index (contract_id) on member_contracts"))
        #expect(result.stderr.contains("db init"))
        let table = try cli.ok(["db", "status"])
        #expect(table.lines.contains { $0.hasPrefix("missing") && $0.contains("column orders.user_id") })
    }

    @Test func dryRunPrintsAddOnlyStatementsAndChangesNothing() throws {
        let (cli, target) = try Self.seeded()
        let before = try target.schema()
        let dry = try cli.ok(["db", "init", "--dry-run"])
        #expect(dry.stdout.contains("would migrate"))
        #expect(dry.stdout.contains("ALTER TABLE orders ADD COLUMN user_id VARCHAR(255) NOT NULL DEFAULT '';"))
        #expect(dry.stdout.contains("ALTER TABLE orders ADD UNIQUE KEY uq_orders_trade_no (trade_no);"))
        #expect(dry.stdout.contains("ALTER TABLE member_contracts ADD COLUMN auto_renew"))
        #expect(dry.stdout.contains("CREATE TABLE IF NOT EXISTS iap_ledger ("))
        for word in ["DROP", "MODIFY", "CHANGE", "RENAME", "DELETE", "TRUNCATE"] {
            #expect(!dry.stdout.uppercased().contains(word + " "), "dry run contains \(word)")
        }
        // Nothing already there is re-added.
        #expect(!dry.stdout.contains("ADD COLUMN no "))
        #expect(!dry.stdout.contains("ADD COLUMN trade_no"))
        #expect(!dry.stdout.contains("CREATE TABLE IF NOT EXISTS orders"))
        let json = try cli.ok(["db", "init", "--dry-run", "-o", "json"]).jsonObject()
        #expect(json["action"] as? String == "would migrate")
        let statements = try #require(json["statements"] as? [String])
        #expect(statements.count > 10)
        #expect(
            statements.allSatisfy {
                $0.hasPrefix("ALTER TABLE ") || $0.hasPrefix("CREATE TABLE IF NOT EXISTS ")
                    || $0.hasPrefix("INSERT IGNORE INTO iap_notification_claims ")
                    // v7 recomputes the facts' digests (SHA-256): it changes no column and no other row.
                    || $0.hasPrefix("UPDATE iap_facts SET digest = ")
            })
        #expect(try target.schema() == before)
    }

    @Test func initAddsWhatIsMissingAndKeepsEveryRowAndColumn() throws {
        let (cli, target) = try Self.seeded()
        let before = try target.schema()
        let rowsBefore = try target.sql("SELECT id, no, trade_no, origin_no FROM orders ORDER BY id")
        let result = try cli.ok(["db", "init", "-o", "json"]).jsonObject()
        #expect(result["action"] as? String == "migrated")
        // The newest schema this build writes (migrations are appended as features need them).
        let version = try #require(try cli.counts()["supported_version"] as? Int)
        #expect(result["schema_version"] as? Int == version)
        let added = try #require(result["added"] as? [String])
        #expect(added.contains("column orders.user_id"))
        #expect(added.contains("table iap_ledger"))
        // Every column and index the shop's schema had is still there, unchanged (type, nullability).
        let after = try target.schema()
        for line in before { #expect(after.contains(line), "lost or changed: \(line)") }
        #expect(try target.sql("SELECT id, no, trade_no, origin_no FROM orders ORDER BY id") == rowsBefore)
        #expect(try target.sql("SELECT contract_id, status FROM member_contracts") == "900\tactive\n")
        let status = try cli.counts()
        #expect(status["missing"] as? [String] == [])
        #expect(status["orders"] as? Int == 2)
        #expect(status["contracts"] as? Int == 1)
        #expect(try cli.ok(["db", "init"]).stderr.contains("is up to date (schema v\(version))"))
        #expect(try cli.ok(["db", "init", "--dry-run"]).stdout.contains("nothing to do"))
        // The shop's rows are iapctl's orders now.
        let legacy = try cli.order("legacy-1")
        #expect(legacy["trade_no"] as? String == "900")
        #expect(legacy["status"] as? String == "pending")
        try cli.ok(["orders", "update", "legacy-2", "--status", "paid", "--reason", "imported"])
        #expect(try cli.order("legacy-2")["status"] as? String == "paid")
    }

    @Test func dryRunOnAMissingDatabaseCreatesNothingAndInitCreatesIt() throws {
        let cli = try CLI()
        let target = try Target(cli)
        let dry = try cli.ok(["db", "init", "--dry-run"])
        #expect(dry.stdout.contains("would create"))
        #expect(dry.stdout.contains("CREATE DATABASE IF NOT EXISTS `\(target.database)`"))
        #expect(try !target.exists())
        let created = try cli.ok(["db", "init"])
        // What db init did is a note on stderr.
        let version = try #require(try cli.counts()["supported_version"] as? Int)
        #expect(created.stderr == "created \(cli.dbPath) (schema v\(version))\n")
        #expect(try target.exists())
        #expect(try cli.counts()["missing"] as? [String] == [])
    }

    // MARK: errors and their exit codes

    @Test(arguments: [["orders", "list"], ["db", "status"], ["contracts", "show", "x"]])
    func unknownDatabaseIs66ForEveryCommandButInit(args: [String]) throws {
        let cli = try CLI()
        let target = try Target(cli)
        let result = try cli.run(args)
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("does not exist"))
        #expect(result.stderr.contains("hint: create it with: iapctl db init --db '\(cli.dbPath)'"))
        #expect(try !target.exists())
    }

    @Test func wrongPasswordIs78AndNoPasswordIsEverPrinted() throws {
        let cli = try CLI.initialized()
        let wrong = "wr0ng-Pa55-\(UUID().uuidString.prefix(8))"
        for args in [["db", "status"], ["db", "init"], ["orders", "list"], ["db", "status", "-v"]] {
            let result = try cli.run(args, env: ["IAPCTL_DB_PASSWORD": wrong])
            #expect(result.status == 78, "\(args): \(result)")
            #expect(result.stderr.lowercased().contains("access denied"))
            #expect(result.stderr.contains("IAPCTL_DB_PASSWORD"))
            #expect(!result.stderr.contains(wrong) && !result.stdout.contains(wrong))
        }
        let right = try #require(cli.environment["IAPCTL_DB_PASSWORD"])
        for args in [["db", "status", "-v"], ["db", "init", "-v"], ["orders", "list", "-o", "json"]] {
            let result = try cli.ok(args)
            #expect(!result.stderr.contains(right) && !result.stdout.contains(right))
        }
    }

    @Test func anUnreachableServerIs69WithARetryHint() throws {
        let cli = try CLI()
        let target = try Target(cli)
        let url = "mysql://\(target.server.user)@localhost/\(target.database)?socket=\(cli.path("no-server.sock"))"
        for args in [["db", "status"], ["db", "init"], ["orders", "list"]] {
            let result = try cli.run(args + ["--db", url])
            #expect(result.status == 69, "\(args): \(result)")
            #expect(result.stderr.contains("retry"))
        }
    }

    @Test func aPasswordInTheURLIsRefusedAndNotEchoed() throws {
        let cli = try CLI()
        let target = try Target(cli)
        let secret = "S3cret-\(UUID().uuidString.prefix(8))"
        let socket = try #require(target.server.socket)
        for url in [
            "mysql://\(target.server.user):\(secret)@localhost/\(target.database)?socket=\(socket)",
            "mysql://\(target.server.user)@localhost/\(target.database)?socket=\(socket)&password=\(secret)",
        ] {
            for args in [["db", "init"], ["orders", "list"]] {
                let result = try cli.run(args + ["--db", url])
                #expect(result.status == 64, "\(result)")
                #expect(result.stderr.contains("IAPCTL_DB_PASSWORD"))
                #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret))
            }
        }
        #expect(try !target.exists())
    }

    @Test func aLockedRowIs75AfterTheLockWait() throws {
        let cli = try CLI.initialized()
        let target = try Target(cli)
        let no = try cli.createOrder()
        // Another session holds the row for longer than the server's lock wait (5 s on the test server).
        let holder = try RowLockHolder(target, lock: "SELECT no FROM orders WHERE no = '\(no)' FOR UPDATE", seconds: 30)
        defer { holder.release() }
        let result = try cli.run(["orders", "update", no, "--status", "paid", "--reason", "locked"])
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("retry"))
    }

    @Test func theEngineRetriesAnEventWhoseLockWaitTimedOut() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = "8d0c2b7e-51f4-4e3a-9a06-3b9d2c1e7f44"
        try world.database(orders: [(token, "alice")])
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0,
            tx: world.transaction("4000", original: "4000", token: token))
        // Held past one lock wait (5 s) but not two: the first attempt fails busy, the retry succeeds.
        let holder = try RowLockHolder(
            try Target(cli), lock: "SELECT no FROM orders WHERE no = '\(token)' FOR UPDATE", seconds: 7)
        defer { holder.release() }
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: jws)
        #expect(result.status == 0, "\(result)")
        #expect(try result.ndjson().first?["verdict"] as? String == "applied")
        #expect(try world.order(no: token)?["status"] as? String == "paid")
    }

    // MARK: concurrency

    @Test func fourProcessesApplyingOneBatchInDifferentOrdersMakeOneOrderPerTransaction() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let t0 = AppleWorld.t0
        let day = AppleWorld.day
        // Three subscriptions, each a first purchase and 15 renewals: 48 events, 48 transactions.
        let subscriptions = (1...3).map { (original: "\($0 * 1000)", token: UUID().uuidString.lowercased()) }
        try world.database(orders: subscriptions.map { ($0.token, "user-\($0.original)") })
        var purchases: [String] = []
        var renewals: [String] = []
        for (original, token) in subscriptions {
            let base = Int(original)!
            purchases.append(
                try world.notification(
                    "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                    tx: world.transaction(original, original: original, token: token)))
            for n in 1...15 {
                renewals.append(
                    try world.notification(
                        "DID_RENEW", signed: t0 + Int64(n) * 30 * day,
                        tx: world.transaction("\(base + n)", original: original, period: Int64(n))))
            }
        }
        // Each process starts with the purchases (a renewal before its contract is rightly
        // `unmatched`), then takes the renewals in its own order.
        var generator = SplitMix(seed: 7)
        let batches = [
            renewals, renewals.reversed(), renewals.shuffled(using: &generator), renewals.shuffled(using: &generator),
        ].map { (purchases.shuffled(using: &generator) + $0).joined(separator: "\n") }
        let args = ["notify", "-q"] + world.trust
        let runner = UncheckedBox(cli)
        let results = try batches.concurrentMap { batch in try runner.value.run(args, stdin: batch) }
        for r in results { #expect(r.status == 0, "\(r)") }
        let stored = try world.orders()
        #expect(stored.count == 48)
        #expect(Set(stored.compactMap { $0["trade_no"] as? String }).count == 48)
        #expect(try world.contracts().count == 3)
        for (original, _) in subscriptions {
            // The contract follows the newest renewal whatever order the processes applied them in.
            let contract = try #require(try world.contract(original))
            let last = try #require(try world.order(tradeNo: "\(Int(original)! + 15)"))
            #expect(contract["expires_date"] as? String == last["expires_date"] as? String)
        }
    }
}

/// A second session (the `mariadb` client) that takes a row lock and holds it for a while.
final class RowLockHolder {
    let target: MySQLTests.Target
    let process = Process()
    let marker: String

    /// Starts the session and returns once it holds the lock.
    init(_ target: MySQLTests.Target, lock: String, seconds: Int) throws {
        self.target = target
        // A distinct sleep value finds this session in the process list.
        marker = "SELECT SLEEP(\(seconds).\(Int.random(in: 100_000...999_999)))"
        let socket = try #require(target.server.socket)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mariadb")
        process.arguments = [
            "--no-defaults", "--socket=\(socket)", "--user=\(target.server.user)", "--database=\(target.database)",
            "--execute", "START TRANSACTION; \(lock); \(marker); ROLLBACK;",
        ]
        process.environment = ["MYSQL_PWD": target.server.password]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 {
            if try connectionId() != nil { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        release()
        throw HarnessError("the lock holder did not start")
    }

    private func connectionId() throws -> String? {
        let id = try target.server.run(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = '\(marker)'"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// Ends the session now (its transaction rolls back).
    func release() {
        if let id = try? connectionId() { _ = try? target.server.run("KILL \(id)") }
        process.waitUntilExit()
    }
}
