import Foundation
import JWSForge
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Faults below iapctl: a frozen database server, a full disk.
@Suite("faults: frozen server, full disk", .serialized)
struct FaultTests {
    let t0 = AppleWorld.t0

    /// A private MariaDB server of `scripts/mariadb-test-server` for one test (so freezing it
    /// disturbs no other test), stopped when the value goes away.
    final class PrivateServer {
        let server: TestMySQLServer
        let dir: String
        let pid: pid_t

        init(in folder: String) throws {
            // To a file, waited for with waitpid: the server the script starts in the background
            // inherits its output (a pipe would never end) and outlives it.
            let exportsFile = folder + "/server-exports.sh"
            let status = Self.script("start > '\(exportsFile)' 2>/dev/null", env: ["TMPDIR=\(folder)"])
            let text = (try? String(contentsOfFile: exportsFile, encoding: .utf8)) ?? ""
            let exports = scriptExports(text)
            guard status == 0, let url = exports["IAPCTL_TEST_MYSQL_URL"],
                let password = exports["IAPCTL_TEST_MYSQL_PASSWORD"], let dir = exports["IAPCTL_TEST_MYSQL_DIR"],
                let server = TestMySQLServer(url: url, password: password)
            else { throw HarnessError("could not start a private MariaDB server: \(text)") }
            self.server = server
            self.dir = dir
            let pidText = try String(contentsOfFile: dir + "/mariadbd.pid", encoding: .utf8)
            guard let pid = pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw HarnessError("no pid in \(dir)/mariadbd.pid")
            }
            self.pid = pid
        }

        deinit {
            kill(pid, SIGCONT)
            _ = Self.script("stop >/dev/null 2>&1", env: ["IAPCTL_TEST_MYSQL_DIR=\(dir)"])
        }

        /// Runs `scripts/mariadb-test-server ARGS` through /bin/sh with extra environment; its exit status.
        static func script(_ args: String, env: [String]) -> Int32 {
            let path = CLI.packageRoot.appendingPathComponent("scripts/mariadb-test-server").path
            return shellStatus(env.map { "export '\($0)'; " }.joined() + "exec '\(path)' " + args)
        }
    }

    /// SIGSTOP on the server in the middle of a batch: with `IAPCTL_DB_TIMEOUT=2` notify stops
    /// with exit 69 within seconds, the items committed before are reported and kept, the rest
    /// are not half-applied; a new run against the frozen server fails with 69 too, not hangs.
    @Test(.mysqlOnly, .timeLimit(.minutes(2)))
    func aFrozenServerGivesExit69WithTheCommittedItemsReportedAndKept() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let frozen = try PrivateServer(in: cli.dir.path)
        let database = TestMySQLServer.freshDatabaseName()
        cli.environment["IAPCTL_DB"] = frozen.server.url(database: database)
        cli.environment["IAPCTL_DB_PASSWORD"] = frozen.server.password
        cli.environment["IAPCTL_DB_TIMEOUT"] = "2"
        let tokens = (0..<4).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map {
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                tx: world.transaction(String(5600 + $0.offset), original: String(5600 + $0.offset), token: $0.element))
        }

        let child = try cli.start(["notify", "-o", "ndjson"] + world.trust)
        let (process, input, output, errors) = (child.process, child.input, child.output, child.errors)
        defer { if process.isRunning { process.terminate() } }
        let reader = LineReader(output.fileHandleForReading)
        input.fileHandleForWriting.write(Data((lines[0...1].joined(separator: "\n") + "\n").utf8))
        let first = [reader.next(timeout: 10), reader.next(timeout: 10)]
        #expect(first.allSatisfy { $0?.contains("\"applied\"") == true }, "\(first)")

        #expect(kill(frozen.pid, SIGSTOP) == 0)
        let stopped = Date()
        input.fileHandleForWriting.write(Data((lines[2...3].joined(separator: "\n") + "\n").utf8))
        while process.isRunning, Date().timeIntervalSince(stopped) < 30 { usleep(50_000) }
        #expect(!process.isRunning, "notify still hangs 30 s after the server froze")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 69)
        #expect(Date().timeIntervalSince(stopped) < 15)
        #expect(reader.next(timeout: 1) == nil, "items after the freeze were reported")
        let stderr = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(stderr.contains("2 items") && stderr.contains("re-running the same input is safe"), "\(stderr)")

        // A new run against the frozen server: 69 within the timeout, not a hang.
        let started = Date()
        let status = try cli.run(["db", "status"])
        #expect(status.status == 69, "\(status)")
        #expect(Date().timeIntervalSince(started) < 15)

        #expect(kill(frozen.pid, SIGCONT) == 0)
        let paid = try world.orders().filter { $0["status"] as? String == "paid" }.compactMap { $0["trade_no"] as? String }
        #expect(Set(paid) == ["5600", "5601"])
        // The rest applies on a rerun of the whole input, the first two as duplicates.
        let rerun = try cli.run(["notify", "-o", "ndjson", try cli.write("all.ndjson", lines.joined(separator: "\n"))] + world.trust)
        #expect(try rerun.ndjson().map { $0["verdict"] as? String } == ["duplicate", "duplicate", "applied", "applied"], "\(rerun)")
    }

    /// A full disk (here a file-size limit, RLIMIT_FSIZE) in the middle of a batch: exit 74 with
    /// a hint, the items committed before it reported and kept, nothing half-applied; a rerun
    /// with room applies the rest.
    @Test(.sqliteOnly("a file-size limit on the SQLite files"), .timeLimit(.minutes(1)))
    func aFullDiskIsAnIOErrorWithTheCommittedItemsReported() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<60).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map {
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0,
                tx: world.transaction(String(5800 + $0.offset), original: String(5800 + $0.offset), token: $0.element))
        }
        let files = ["iapctl.db", "iapctl.db-wal"].filter { cli.exists($0) }
        let largest = try files.map { (try FileManager.default.attributesOfItem(atPath: cli.path($0))[.size] as? Int) ?? 0 }.max() ?? 0
        // Room for a few items more than the files hold now, not for 57 more.
        let blocks = (largest + 160 * 1024) / 512
        let child = try cli.start(
            ["-c", "ulimit -f \(blocks); exec \"$0\" \"$@\"", CLI.binary.path, "notify", "-o", "ndjson"] + world.trust,
            executable: URL(fileURLWithPath: "/bin/sh"))
        let (process, input, output, errors) = (child.process, child.input, child.output, child.errors)
        defer { if process.isRunning { process.terminate() } }
        let reader = LineReader(output.fileHandleForReading)
        input.fileHandleForWriting.write(Data((lines[0..<3].joined(separator: "\n") + "\n").utf8))
        let first = (0..<3).map { _ in reader.next(timeout: 10) }
        #expect(first.allSatisfy { $0?.contains("\"applied\"") == true }, "\(first)")
        input.fileHandleForWriting.write(Data((lines[3...].joined(separator: "\n") + "\n").utf8))
        input.fileHandleForWriting.closeFile()
        var rest: [String] = []
        while let line = reader.next(timeout: 10) { rest.append(line) }
        process.waitUntilExit()
        let stderr = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(process.terminationStatus == 74, "\(stderr)")
        #expect(stderr.contains("disk may be full") && stderr.contains("re-run the same input"), "\(stderr)")
        #expect(rest.count < lines.count - 3, "everything was applied: the limit was not reached")
        // What was reported is kept; nothing else is.
        let paid = try world.orders().filter { $0["status"] as? String == "paid" }.count
        #expect(paid == 3 + rest.filter { $0.contains("\"applied\"") }.count)
        let rerun = try cli.run(["notify", "-o", "ndjson", try cli.write("all.ndjson", lines.joined(separator: "\n"))] + world.trust)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try world.orders().filter { $0["status"] as? String == "paid" }.count == lines.count)
    }
}
