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
/// run does. Runs on the backend of the run (SQLite files; MariaDB with `IAPCTL_E2E_BACKEND=mysql`).
@Suite("db init: SIGKILL during a migration with a facts rebuild, then a rerun, equals one clean run", .serialized)
struct MigrationKillTests {
    /// The tables compared, each ordered by its key: everything a migration or the rebuild writes.
    static let tables: [(name: String, order: String)] = [
        ("iap_schema_migrations", "version"), ("orders", "id"), ("member_contracts", "id"), ("iap_facts", "id"),
        ("iap_ledger", "id"), ("iap_audit", "id"), ("iap_notification_claims", "notification_uuid"),
        ("iap_checkpoints", "id"), ("iap_overrides", "id"), ("iap_refund_answers", "id"),
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
            if let mysql = cli.mysql {
                let database = env["IAPCTL_MYSQL_NAME"] ?? mysql.database
                let columns = try mysql.server.run(
                    "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '\(database)' "
                        + "AND TABLE_NAME = '\(table)' ORDER BY ORDINAL_POSITION"
                ).split(separator: "\n").map(String.init).filter { !skipped.contains($0) }
                guard !columns.isEmpty else {
                    lines.append("\(table): missing")
                    continue
                }
                let values = columns.map { plainTexts.contains($0) ? "IFNULL(`\($0)`, 'NULL')" : "IFNULL(HEX(`\($0)`), 'NULL')" }
                    .joined(separator: ", ")
                let rows = try mysql.server.run("SELECT \(values) FROM \(table) ORDER BY \(order)", database: database)
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
            return [
                "IAPCTL_DB": mysql.server.url(database: name), "IAPCTL_DB_PASSWORD": mysql.server.password,
                "IAPCTL_MYSQL_NAME": name,
            ]
        }
        let path = cli.path("\(label).db")
        try FileManager.default.copyItem(atPath: cli.dbPath, toPath: path)
        return ["IAPCTL_DB": path]
    }

    static func drop(_ cli: CLI, _ env: [String: String]) {
        if let mysql = cli.mysql, let name = env["IAPCTL_MYSQL_NAME"] {
            mysql.server.drop(name)
        } else if let path = env["IAPCTL_DB"] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    @Test(.enabled(if: E2EBackend.current == .mysql || FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
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
        let started = Date()
        let reference = try cli.ok(["db", "init"], env: clean)
        let duration = Date().timeIntervalSince(started)
        #expect(reference.stderr.contains("migrated") && reference.stderr.contains("rebuilt"), "\(reference)")
        let expected = try Self.dump(cli, env: clean)
        #expect(expected.contains { $0.hasPrefix("iap_facts: ") }, "the clean run rebuilt no facts")
        #expect(expected.contains { $0.hasPrefix("iap_audit: ") })

        // Kills spread over the whole run: from just after start to past its end.
        let points = 10
        let full = max(0.05, duration * 1.1)
        var landed = 0
        for point in 0..<points {
            let delay = UInt32(full * Double(point + 1) / Double(points) * 1_000_000)
            let env = try Self.copy(cli, label: "kill-\(point)")
            defer { Self.drop(cli, env) }
            if try CrashSafetyTests.killDuring(cli, ["db", "init"], env: env, afterMicroseconds: delay) { landed += 1 }
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
        #expect(landed >= points / 2, "only \(landed) of \(points) kills landed before db init finished")
        print("migration kills (\(E2EBackend.current)): clean run \(Int(duration * 1000)) ms, \(landed)/\(points) SIGKILLs landed mid-run")
    }
}
