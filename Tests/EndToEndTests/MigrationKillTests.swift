import Foundation
import JWSForge
import StoreTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `db init` on a schema-v3 database (ledger rows from real signed notifications, rows as an older
/// engine left them) is all or nothing, the facts rebuild included: killed with SIGKILL at points
/// spread over a clean run's duration, then run again, it leaves every table as one uninterrupted
/// run does. Runs on the backend of the run (SQLite files; MariaDB with `IAPCTL_E2E_BACKEND=mysql`,
/// PostgreSQL with `IAPCTL_E2E_BACKEND=postgres`).
@Suite("db init: SIGKILL during a migration with a facts rebuild, then a rerun, equals one clean run", .serialized)
struct MigrationKillTests {
    /// The tables compared, each ordered by its key: everything a migration or the rebuild writes.
    static let tables: [(name: String, order: String)] = [
        ("iap_schema_migrations", "version"), ("orders", "id"), ("member_contracts", "id"), ("iap_facts", "id"),
        ("iap_ledger", "id"), ("iap_audit", "id"), ("iap_notification_claims", "notification_uuid"),
        ("iap_checkpoints", "id"), ("iap_overrides", "id"), ("iap_refund_answers", "id"),
        ("iap_grants", "id"),
        ("iap_customer_notes", "id"),
    ]
    /// Not compared: the clock (when a row was written or a version recorded) and ids a rolled-back
    /// InnoDB transaction may have used up (rows are still compared in id order).
    /// An audit row's JSON and digest hold the time of the change too: its `updatedAt` is masked
    /// and its `row_digest` (over those texts) skipped.
    static let skipped: Set<String> = ["id", "at", "applied_at", "created_at", "updated_at", "row_digest"]
    static let plainTexts: Set<String> = ["before_json", "after_json"]

    /// `line` with every `"updatedAt":N` of the JSON in it masked.
    static func maskedClock(_ line: String) -> String {
        line.replacing(/"updatedAt":[0-9]+/, with: "\"updatedAt\":T")
    }

    /// The database of `env` as comparable text: every row of every table above, minus `skipped`.
    static func dump(_ cli: CLI, env: [String: String]) throws -> [String] {
        var lines: [String] = []
        for (table, order) in tables {
            if let (server, own) = cli.server {
                let database = env[Self.databaseName] ?? own
                let schema = cli.dialect(sqlite: "", mysql: "'\(database)'", postgres: "'public'")
                let columns = try server.run(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = \(schema) "
                        + "AND table_name = '\(table)' ORDER BY ordinal_position", database: database
                ).split(separator: "\n").map(String.init).filter { !skipped.contains($0) }
                guard !columns.isEmpty else {
                    lines.append("\(table): missing")
                    continue
                }
                let values = columns.map { column in
                    plainTexts.contains(column)
                        ? cli.dialect(sqlite: "", mysql: "IFNULL(`\(column)`, 'NULL')", postgres: "coalesce(\(column), 'NULL')")
                        : cli.dialect(
                            sqlite: "", mysql: "IFNULL(HEX(`\(column)`), 'NULL')", postgres: "coalesce(\(column)::text, 'NULL')")
                }.joined(separator: ", ")
                let rows = try server.run("SELECT \(values) FROM \(table) ORDER BY \(order)", database: database)
                lines += rows.split(separator: "\n").map { maskedClock("\(table): \($0)") }
            } else {
                let path = try #require(env["IAPCTL_DB"])
                let columns = try sqlite3(path, "SELECT name FROM pragma_table_info('\(table)')")
                    .split(separator: "\n").map(String.init).filter { !skipped.contains($0) }
                guard !columns.isEmpty else {
                    lines.append("\(table): missing")
                    continue
                }
                let values = columns.map { "quote(\($0))" }.joined(separator: " || '|' || ")
                lines += try sqlite3(path, "SELECT \(values) FROM \(table) ORDER BY \(order)")
                    .split(separator: "\n").map { maskedClock("\(table): \($0)") }
            }
        }
        return lines
    }

    /// The name of a copy's database on the test server, kept in its environment (iapctl ignores it).
    static let databaseName = "IAPCTL_E2E_DATABASE_NAME"

    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", path, sql]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("sqlite3 failed on \(sql)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The CLI's database turned into one at schema v3 (before the engine kept facts): the tables and
    /// columns of v4 and later dropped, their versions deleted, and the rows as an older engine left them
    /// (contracts expired, a refunded order paid), so the rebuild has changes to write.
    static func downgradeToV3(_ cli: CLI) throws {
        try RealLifecycleE2ETests.toSchemaV3(
            cli,
            then: """
                UPDATE member_contracts SET status = 'expired', expires_date = 1;
                UPDATE orders SET status = 'paid' WHERE status = 'refunded';
                """)
    }

    /// A copy of the prepared v3 database for one run: its environment.
    static func copy(_ cli: CLI, label: String) throws -> [String: String] {
        if let mysql = cli.mysql {
            let name = TestMySQLServer.freshDatabaseName()
            var sql = "CREATE DATABASE `\(name)` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin; SET FOREIGN_KEY_CHECKS = 0;"
            let tables = try mysql.server.run(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '\(mysql.database)' ORDER BY TABLE_NAME"
            ).split(separator: "\n")
            for table in tables {
                sql += "CREATE TABLE `\(name)`.`\(table)` LIKE `\(mysql.database)`.`\(table)`;"
                sql += "INSERT INTO `\(name)`.`\(table)` SELECT * FROM `\(mysql.database)`.`\(table)`;"
            }
            try mysql.server.run(sql)
            return mysql.server.environment(database: name).merging([Self.databaseName: name]) { $1 }
        }
        if let postgres = cli.postgres {
            // A copy of the whole database, made by the server (no session may be open on the original).
            let name = TestPostgresServer.freshDatabaseName()
            try postgres.server.run("CREATE DATABASE \"\(name)\" TEMPLATE \"\(postgres.database)\"")
            return postgres.server.environment(database: name).merging([Self.databaseName: name]) { $1 }
        }
        let path = cli.path("\(label).db")
        try FileManager.default.copyItem(atPath: cli.dbPath, toPath: path)
        return ["IAPCTL_DB": path]
    }

    static func drop(_ cli: CLI, _ env: [String: String]) {
        if let (server, _) = cli.server, let name = env[Self.databaseName] {
            server.drop(name)
        } else if let path = env["IAPCTL_DB"] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    @Test(.sqlClient)
    func sigkillAtManyPointsThenRerunEqualsOneCleanRun() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let batch = try CrashSafetyTests.makeBatch(world, size: 48)
        try world.database(orders: batch.tokens.map { ($0, "user-\($0.suffix(4))") })
        let input = try cli.write("batch.ndjson", batch.lines.joined(separator: "\n") + "\n")
        _ = try cli.run(["notify", "-q", input] + world.trust)
        try Self.downgradeToV3(cli)

        // The reference: one uninterrupted run.
        let clean = try Self.copy(cli, label: "clean")
        defer { Self.drop(cli, clean) }
        var started = Date()
        let reference = try cli.ok(["db", "init"], env: clean)
        var duration = Date().timeIntervalSince(started)
        #expect(reference.stderr.contains("migrated") && reference.stderr.contains("rebuilt"), "\(reference)")
        let expected = try Self.dump(cli, env: clean)
        // A second clean run: the kills are spread over the shorter of the two (a loaded machine
        // can make one run take twice as long as the next), and it must leave the same tables.
        let again = try Self.copy(cli, label: "again")
        defer { Self.drop(cli, again) }
        started = Date()
        try cli.ok(["db", "init"], env: again)
        duration = min(duration, Date().timeIntervalSince(started))
        #expect(try Self.dump(cli, env: again) == expected, "two clean runs left different tables")
        #expect(expected.contains { $0.hasPrefix("iap_facts: ") }, "the clean run rebuilt no facts")
        #expect(expected.contains { $0.hasPrefix("iap_audit: ") })

        // Kills spread over the whole run, from just after its start to past its end. A kill that
        // comes after db init finished proves less: the span shrinks and the same point is tried
        // again, so a loaded machine (a run slower or faster than the clean ones) still gets its
        // kills inside the migration. Every attempt, landed or not, must end as the clean run did.
        let points = 10
        var span = max(0.05, duration * 1.1)
        var landed = 0, attempts = 0
        while landed < points && attempts < points * 3 {
            let delay = UInt32(span * Double(landed + 1) / Double(points) * 1_000_000)
            let env = try Self.copy(cli, label: "kill-\(attempts)")
            defer { Self.drop(cli, env) }
            attempts += 1
            if try CrashSafetyTests.killDuring(cli, ["db", "init"], env: env, afterMicroseconds: delay) {
                landed += 1
            } else {
                span = max(0.02, span * 0.75)
            }
            try cli.ok(["db", "init"], env: env)
            let state = try Self.dump(cli, env: env)
            let same = state == expected
            #expect(
                same,
                "killed after \(delay) µs: differs from a clean run; extra \(state.filter { !expected.contains($0) }.prefix(5)), missing \(expected.filter { !state.contains($0) }.prefix(5))"
            )
            // Nothing is left for a later run to do.
            let plan = try cli.ok(["db", "init", "--dry-run", "-o", "json"], env: env).jsonObject()
            #expect(plan["action"] as? String == "up to date", "killed after \(delay) µs: \(plan)")
        }
        #expect(landed >= points / 2, "only \(landed) of \(attempts) kills landed before db init finished")
        print(
            "migration kills (\(E2EBackend.current)): clean run \(Int(duration * 1000)) ms, "
                + "\(landed)/\(attempts) SIGKILLs landed mid-run")
    }
}
