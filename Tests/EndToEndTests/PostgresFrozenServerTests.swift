import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server that stops answering (every process of it stopped with SIGSTOP, on a Unix
/// socket where no TCP timeout applies): iapctl gives up after `IAPCTL_DB_TIMEOUT` with exit 69,
/// as on MariaDB (FaultTests), instead of waiting for ever.
@Suite("PostgreSQL: a frozen server", .serialized)
struct PostgresFrozenServerTests {
    let t0 = AppleWorld.t0

    /// A private server of `scripts/postgres-test-server` for one test (freezing it disturbs no
    /// other test), thawed and stopped when the value goes away.
    final class PrivateServer {
        let server: TestPostgresServer
        let dir: String
        let postmaster: pid_t

        init() throws {
            let script = CLI.packageRoot.appendingPathComponent("scripts/postgres-test-server").path
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("frozen-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // To a file: the server the script starts inherits its output and outlives it.
            let exportsFile = folder.appendingPathComponent("exports").path
            let status = shellStatus("TMPDIR=/tmp exec '\(script)' start > '\(exportsFile)' 2>/dev/null")
            let text = (try? String(contentsOfFile: exportsFile, encoding: .utf8)) ?? ""
            let exports = scriptExports(text)
            guard status == 0, let url = exports["IAPCTL_TEST_POSTGRES_URL"],
                let password = exports["IAPCTL_TEST_POSTGRES_PASSWORD"], let dir = exports["IAPCTL_TEST_POSTGRES_DIR"]
            else { throw HarnessError("could not start a private PostgreSQL server: \(text)") }
            server = TestPostgresServer(url: url, password: password)
            self.dir = dir
            let pidText = try String(contentsOfFile: dir + "/data/postmaster.pid", encoding: .utf8)
            guard let pid = pidText.split(separator: "\n").first.flatMap({ pid_t($0.trimmingCharacters(in: .whitespaces)) })
            else { throw HarnessError("no pid in \(dir)/data/postmaster.pid") }
            postmaster = pid
        }

        deinit {
            thaw()
            _ = shellStatus(
                "IAPCTL_TEST_POSTGRES_DIR='\(dir)' exec '\(CLI.packageRoot.path)/scripts/postgres-test-server' stop >/dev/null 2>&1")
        }

        /// The postmaster and every process it started (the backends iapctl talks to among them).
        var processes: [pid_t] {
            var found = [postmaster]
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { continue }
                // pid (comm) state ppid …
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 1, pid_t(fields[1]) == postmaster { found.append(pid) }
            }
            return found
        }

        /// Stops every process of the server (the postmaster first: it starts no new ones then).
        func freeze() -> Bool { processes.allSatisfy { kill($0, SIGSTOP) == 0 } }

        func thaw() { for pid in processes.reversed() { kill(pid, SIGCONT) } }

    }

    /// The server frozen in the middle of a batch: with `IAPCTL_DB_TIMEOUT=2` notify stops with
    /// exit 69 within seconds, naming the server and the fix; the items committed before are
    /// reported and kept, the rest are not half-applied; a new command against the frozen server
    /// ends with 69 too; after the thaw a rerun applies the rest.
    @Test(.postgresOnly, .timeLimit(.minutes(2)))
    func aFrozenServerGivesExit69WithTheCommittedItemsReportedAndKept() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let frozen = try PrivateServer()
        let database = TestPostgresServer.freshDatabaseName()
        cli.environment["IAPCTL_DB"] = frozen.server.url(database: database)
        cli.environment["IAPCTL_DB_PASSWORD"] = frozen.server.password
        cli.environment["IAPCTL_DB_TIMEOUT"] = "2"
        let tokens = (0..<4).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map {
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                tx: world.transaction(String(5700 + $0.offset), original: String(5700 + $0.offset), token: $0.element))
        }

        let child = try cli.start(["notify", "-o", "ndjson"] + world.trust)
        let (process, input, output, errors) = (child.process, child.input, child.output, child.errors)
        // A run stuck in a read may not end on SIGTERM: SIGKILL, so the test fails instead of hanging.
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let reader = LineReader(output.fileHandleForReading)
        input.fileHandleForWriting.write(Data((lines[0...1].joined(separator: "\n") + "\n").utf8))
        let first = [reader.next(timeout: 10), reader.next(timeout: 10)]
        #expect(first.allSatisfy { $0?.contains("\"applied\"") == true }, "\(first)")

        #expect(frozen.freeze())
        let stopped = Date()
        input.fileHandleForWriting.write(Data((lines[2...3].joined(separator: "\n") + "\n").utf8))
        while process.isRunning, Date().timeIntervalSince(stopped) < 30 { usleep(50_000) }
        #expect(!process.isRunning, "notify still hangs 30 s after the server froze")
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 69)
        #expect(Date().timeIntervalSince(stopped) < 15)
        #expect(reader.next(timeout: 1) == nil, "items after the freeze were reported")
        let stderr = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(stderr.contains("2 items") && stderr.contains("re-running the same input is safe"), "\(stderr)")
        // The server and the fix are named.
        #expect(stderr.contains("did not answer within 2 s") && stderr.contains("IAPCTL_DB_TIMEOUT"), "\(stderr)")
        #expect(stderr.contains(frozen.dir), "\(stderr)")

        // A new command against the frozen server: 69 within the timeout, not a hang.
        let started = Date()
        let status = try cli.run(["db", "status"])
        #expect(status.status == 69, "\(status)")
        #expect(Date().timeIntervalSince(started) < 15)

        frozen.thaw()
        let paid = try world.orders().filter { $0["status"] as? String == "paid" }.compactMap { $0["trade_no"] as? String }
        #expect(Set(paid) == ["5700", "5701"])
        // The rest applies on a rerun of the whole input, the first two as duplicates.
        let rerun = try cli.run(["notify", "-o", "ndjson", try cli.write("all.ndjson", lines.joined(separator: "\n"))] + world.trust)
        #expect(try rerun.ndjson().map { $0["verdict"] as? String } == ["duplicate", "duplicate", "applied", "applied"], "\(rerun)")
    }
}
