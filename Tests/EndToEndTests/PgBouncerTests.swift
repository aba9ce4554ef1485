import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// iapctl behind PgBouncer (Debian's `pgbouncer`, 1.18 in bookworm) in front of the PostgreSQL
/// test server, as docs/postgres.md says: in session mode a batch runs exactly once through it
/// (savepoints riding with the next statement included); in transaction mode without prepared-
/// statement tracking, a transaction that lands on a server connection without iapctl's
/// statements stops with exit 78 naming the pooler and the fix, and writes nothing.
@Suite("PostgreSQL behind PgBouncer", .serialized)
struct PgBouncerTests {
    let t0 = AppleWorld.t0

    /// A private PgBouncer on a Unix socket in its own folder (no TCP), with two databases that
    /// both lead to `database` on the test server: `session` (session mode) and `transaction`
    /// (transaction mode). After every transaction or session the pooler runs `DISCARD ALL` on the
    /// server connection (`server_reset_query_always`): the next transaction finds none of the
    /// statements prepared before, as it would on another client's connection, every time instead
    /// of by chance. Stopped, and its folder removed, when the value goes away.
    final class Pooler {
        let dir: String
        private let pid: pid_t

        init(server: TestPostgresServer, database: String) throws {
            let pgbouncer = "/usr/sbin/pgbouncer"
            guard FileManager.default.isExecutableFile(atPath: pgbouncer) else {
                throw HarnessError("pgbouncer is not installed (scripts/setup --test installs it: apt-get install pgbouncer)")
            }
            guard let components = URLComponents(string: server.url),
                let socketFolder = components.queryItems?.first(where: { $0.name == "host" })?.value
            else { throw HarnessError("no host= folder in \(server.url)") }
            dir = "/tmp/iapctl-pgbouncer-\(UUID().uuidString.lowercased().prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
            let server = "host=\(socketFolder) dbname=\(database) user=iapctl password=\(server.password)"
            try """
            [databases]
            session = \(server) pool_mode=session
            transaction = \(server) pool_mode=transaction
            [pgbouncer]
            listen_port = 6432
            unix_socket_dir = \(dir)
            auth_type = trust
            auth_file = \(dir)/users.txt
            pidfile = \(dir)/pgbouncer.pid
            logfile = \(dir)/pgbouncer.log
            server_reset_query = DISCARD ALL
            server_reset_query_always = 1

            """.write(toFile: dir + "/pgbouncer.ini", atomically: false, encoding: .utf8)
            try "\"iapctl\" \"\"\n".write(toFile: dir + "/users.txt", atomically: false, encoding: .utf8)
            // As root (CI) it runs as the postgres user, like the test server: its folder is that user's.
            let asServerUser = getuid() == 0 ? "runuser -u postgres -- " : ""
            let own = getuid() == 0 ? "chown -R postgres: '\(dir)' && " : ""
            // The descriptors this process holds are closed first: the daemon would keep them open.
            let status = shellStatus(
                "\(own)chmod 700 '\(dir)' && exec bash -c 'for fd in $(ls /proc/$$/fd); do ((fd > 2)) && eval \"exec $fd>&-\"; "
                    + "done 2>/dev/null; exec \(asServerUser)\(pgbouncer) -d \(dir)/pgbouncer.ini' >'\(dir)/start.log' 2>&1")
            var started: pid_t?
            for _ in 0..<100 where status == 0 {
                if FileManager.default.fileExists(atPath: dir + "/.s.PGSQL.6432"),
                    let text = try? String(contentsOfFile: dir + "/pgbouncer.pid", encoding: .utf8),
                    let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
                {
                    started = pid
                    break
                }
                usleep(50_000)
            }
            guard let started else {
                let log = [
                    (try? String(contentsOfFile: dir + "/start.log", encoding: .utf8)) ?? "",
                    (try? String(contentsOfFile: dir + "/pgbouncer.log", encoding: .utf8)) ?? "",
                ].joined()
                try? FileManager.default.removeItem(atPath: dir)
                throw HarnessError("pgbouncer did not start (status \(status)): \(log)")
            }
            pid = started
        }

        deinit {
            kill(pid, SIGTERM)
            for _ in 0..<100 where kill(pid, 0) == 0 { usleep(50_000) }
            try? FileManager.default.removeItem(atPath: dir)
        }

        /// The URL of one of the pooler's databases (`session` or `transaction`).
        func url(_ name: String) -> String { "postgres://iapctl@/\(name)?host=\(dir)&port=6432" }
    }

    /// A world with `count` pending orders, the database made on the server directly (as the
    /// documents say: `db init` never through a pooler), its pooler, and one notification each.
    func setUp(count: Int, first: Int) throws -> (CLI, AppleWorld, Pooler, [String]) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<count).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        guard let postgres = cli.postgres else { throw HarnessError("not the PostgreSQL run") }
        let pooler = try Pooler(server: postgres.server, database: postgres.database)
        let lines = try tokens.enumerated().map {
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                tx: world.transaction(String(first + $0.offset), original: String(first + $0.offset), token: $0.element))
        }
        return (cli, world, pooler, lines)
    }

    /// Session mode: a batch applies once through the pooler, a rerun finds every item a
    /// duplicate, and the rows read through the pooler are those the server holds.
    @Test(.postgresOnly, .timeLimit(.minutes(2)))
    func sessionModeRunsABatchExactlyOnce() throws {
        let (cli, world, pooler, lines) = try setUp(count: 6, first: 7100)
        let input = try cli.write("batch.ndjson", lines.joined(separator: "\n") + "\n")
        let viaPooler = ["IAPCTL_DB": pooler.url("session")]
        let first = try cli.ok(["notify", "-o", "ndjson", input] + world.trust, env: viaPooler)
        #expect(try first.ndjson().map { $0["verdict"] as? String } == Array(repeating: "applied", count: 6), "\(first)")
        let rerun = try cli.ok(["notify", "-o", "ndjson", input] + world.trust, env: viaPooler)
        #expect(try rerun.ndjson().map { $0["verdict"] as? String } == Array(repeating: "duplicate", count: 6), "\(rerun)")
        let direct = try world.orders().filter { $0["status"] as? String == "paid" }.compactMap { $0["trade_no"] as? String }
        #expect(Set(direct) == Set((7100..<7106).map(String.init)))
        let pooled = try cli.ok(["orders", "list", "-o", "json"], env: viaPooler).jsonArray()
        #expect(pooled.count == 6 && pooled.allSatisfy { $0["status"] as? String == "paid" }, "\(pooled)")
    }

    /// Transaction mode that loses prepared statements: exit 78 with the pooler and the fix named,
    /// nothing written; the same input through session mode then applies every item.
    @Test(.postgresOnly, .timeLimit(.minutes(2)))
    func transactionModeWithoutStatementTrackingStopsWith78AndWritesNothing() throws {
        let (cli, world, pooler, lines) = try setUp(count: 3, first: 7200)
        let input = try cli.write("batch.ndjson", lines.joined(separator: "\n") + "\n")
        let refused = try cli.run(["notify", "-o", "ndjson", input] + world.trust, env: ["IAPCTL_DB": pooler.url("transaction")])
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains("SQLSTATE 26000"), "\(refused.stderr)")
        #expect(refused.stderr.contains("PgBouncer") && refused.stderr.contains("max_prepared_statements"), "\(refused.stderr)")
        #expect(refused.stderr.contains("session mode"), "\(refused.stderr)")
        #expect(!refused.stdout.contains("\"applied\""), "\(refused.stdout)")
        #expect(try world.orders().allSatisfy { $0["status"] as? String != "paid" })

        let session = try cli.ok(["notify", "-o", "ndjson", input] + world.trust, env: ["IAPCTL_DB": pooler.url("session")])
        #expect(try session.ndjson().map { $0["verdict"] as? String } == ["applied", "applied", "applied"], "\(session)")
    }
}
