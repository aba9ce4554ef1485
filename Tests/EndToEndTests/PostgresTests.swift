import Foundation
import JWSForge
import Testing

/// `iapctl` on a PostgreSQL server: `db init` from several processes at once, the status it
/// reports, and a session the server ends under a running batch. Runs only with
/// `IAPCTL_E2E_BACKEND=postgres` and the test server (`scripts/test` does both); skipped otherwise.
@Suite("PostgreSQL backend, end to end", .postgresOnly)
struct PostgresTests {
    let t0 = AppleWorld.t0

    /// Runs `sql` in the CLI's database; tab-separated rows.
    @discardableResult
    static func sql(_ cli: CLI, _ sql: String) throws -> String {
        _ = try #require(cli.postgres, "not the PostgreSQL run")
        return try cli.sql(sql)
    }

    /// Four `db init` at once on a database that does not exist yet: one creates it, all succeed,
    /// and each migration is recorded once (the advisory lock runs them one after the other).
    @Test func dbInitFromSeveralProcessesAtOnce() throws {
        let cli = try CLI()
        let started = try (0..<4).map { _ in try cli.start(["db", "init"]) }
        for process in started {
            process.input.fileHandleForWriting.closeFile()
            process.process.waitUntilExit()
            let stderr = (try? String(contentsOfFile: process.errors, encoding: .utf8)) ?? ""
            #expect(process.process.terminationStatus == 0, "\(stderr)")
        }
        let versions = try Self.sql(cli, "SELECT version, count(*) FROM iap_schema_migrations GROUP BY version ORDER BY version")
        let rows = versions.split(separator: "\n")
        #expect(!rows.isEmpty && rows.allSatisfy { $0.hasSuffix("\t1") }, "\(versions)")
        let status = try cli.run(["db", "status", "-o", "json"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("\"postgres\""), "\(status.stdout)")
        #expect(status.stdout.contains("PostgreSQL"), "\(status.stdout)")
    }

    /// A database that does not exist: 66 with the `db init` hint, nothing created.
    @Test func aMissingDatabaseIsExit66() throws {
        let cli = try CLI()
        let result = try cli.run(["orders", "list"])
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("db init"), "\(result)")
        let postgres = try #require(cli.postgres)
        let exists = try postgres.server.run("SELECT count(*) FROM pg_database WHERE datname = '\(postgres.database)'")
        #expect(exists.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// Every command but `db init` on a database that does not exist: 66, the `db init` line to
    /// paste, nothing created; `db init --dry-run` says it would create it and creates nothing.
    @Test(arguments: [["orders", "list"], ["db", "status"], ["contracts", "show", "x"]])
    func aMissingDatabaseIs66ForEveryCommandButInit(args: [String]) throws {
        let cli = try CLI()
        let postgres = try #require(cli.postgres)
        let result = try cli.run(args)
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("does not exist"), "\(result)")
        #expect(result.stderr.contains("hint: create it with: iapctl db init --db '\(cli.dbPath)'"), "\(result)")
        let dry = try cli.ok(["db", "init", "--dry-run"])
        #expect(dry.stdout.contains("would create"), "\(dry)")
        let exists = try postgres.server.run("SELECT count(*) FROM pg_database WHERE datname = '\(postgres.database)'")
        #expect(exists.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// No server behind the socket folder: 69 with a retry hint, for every command.
    @Test func anUnreachableServerIs69WithARetryHint() throws {
        let cli = try CLI()
        let url = "postgres://iapctl@/iapctl_nowhere?host=\(cli.path("no-server"))"
        for args in [["db", "status"], ["db", "init"], ["orders", "list"]] {
            let result = try cli.run(args + ["--db", url])
            #expect(result.status == 69, "\(args): \(result)")
            #expect(result.stderr.contains("retry"), "\(result)")
            // libpq's second line (a tab-indented question) is joined, not shown as an escaped tab.
            #expect(result.stderr.contains("No such file or directory; Is the server running"), "\(result)")
            #expect(!result.stderr.contains("\\t"), "\(result)")
        }
    }

    /// A password in the URL (user:secret@ or ?password=) is a usage error (64), never echoed,
    /// and nothing is created.
    @Test func aPasswordInTheURLIsRefusedAndNotEchoed() throws {
        let cli = try CLI()
        let postgres = try #require(cli.postgres)
        let secret = "S3cret-\(UUID().uuidString.prefix(8))"
        let url = cli.dbPath
        let withUser = url.replacingOccurrences(of: "://iapctl@", with: "://iapctl:\(secret)@")
        let withParameter = url + (url.contains("?") ? "&" : "?") + "password=\(secret)"
        #expect(withUser != url)
        for bad in [withUser, withParameter] {
            for args in [["db", "init"], ["orders", "list"]] {
                let result = try cli.run(args + ["--db", bad])
                #expect(result.status == 64, "\(result)")
                #expect(result.stderr.contains("PGPASSWORD"), "\(result)")
                #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret))
            }
        }
        let exists = try postgres.server.run("SELECT count(*) FROM pg_database WHERE datname = '\(postgres.database)'")
        #expect(exists.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// A wrong password is 78, and the message does not repeat it.
    @Test func aWrongPasswordIsRefusedWithoutEchoingIt() throws {
        let cli = try CLI()
        #expect(try cli.run(["db", "init"]).status == 0)
        let result = try cli.run(["orders", "list"], env: ["PGPASSWORD": "Wr0ng-Secret"])
        #expect(result.status == 78, "\(result)")
        #expect(!result.stderr.contains("Wr0ng-Secret"), "\(result)")
    }

    /// The server ends the session of a running `notify` (what a restart or failover does): the
    /// run stops with exit 75 naming what happened, what it reported is committed, and the same
    /// input run again applies the rest, each notification once.
    @Test(.timeLimit(.minutes(2)))
    func aSessionTheServerEndsStopsTheRunWith75AndARerunFinishesTheWork() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<2).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map { index, token in
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                tx: world.transaction(String(7700 + index), original: String(7700 + index), token: token))
        }
        let started = try cli.start(["notify", "-o", "ndjson"] + world.trust)
        let reader = LineReader(started.output.fileHandleForReading)
        started.input.fileHandleForWriting.write(Data((lines[0] + "\n").utf8))
        let first = reader.next(timeout: 20)
        #expect(first?.contains("\"applied\"") == true, "\(first ?? "nothing")")

        let postgres = try #require(cli.postgres)
        try postgres.server.run(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(postgres.database)' "
                + "AND pid <> pg_backend_pid()")
        started.input.fileHandleForWriting.write(Data((lines[1] + "\n").utf8))
        started.input.fileHandleForWriting.closeFile()
        started.process.waitUntilExit()
        let stderr = (try? String(contentsOfFile: started.errors, encoding: .utf8)) ?? ""
        #expect(started.process.terminationStatus == 75, "\(stderr)")
        #expect(stderr.contains("terminat") || stderr.contains("connection"), "\(stderr)")
        #expect(try world.orders().filter { $0["status"] as? String == "paid" }.count == 1)

        let rerun = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n") + "\n")
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try rerun.ndjson().map { $0["verdict"] as? String } == ["duplicate", "applied"], "\(rerun)")
        #expect(try world.orders().filter { $0["status"] as? String == "paid" }.count == 2)
        let applied = try Self.sql(cli, "SELECT notification_uuid FROM iap_ledger WHERE verdict = 'applied'")
        let uuids = applied.split(separator: "\n")
        #expect(uuids.count == 2 && Set(uuids).count == 2, "\(applied)")
    }
}
