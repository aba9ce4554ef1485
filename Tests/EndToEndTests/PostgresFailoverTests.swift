import Foundation
import JWSForge
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Failover through libpq's multi-host connections: a primary and a streaming standby
/// (`scripts/postgres-test-server start-pair`), `iapctl notify` on
/// `?host=PRIMARY,STANDBY&target_session_attrs=read-write`, the primary's postmaster killed
/// (SIGKILL) while a batch streams in and the standby promoted. The test starts and stops the pair
/// itself; it runs with `IAPCTL_TEST_POSTGRES_FAILOVER=1` (scripts/test sets it after
/// `scripts/setup --test` installed PostgreSQL), on any `IAPCTL_E2E_BACKEND`.
@Suite("PostgreSQL failover: the primary killed mid-batch, the standby promoted", .serialized, .postgresFailover)
struct PostgresFailoverTests {
    static let subscriptions = 90
    static let groupSize = 30

    /// The run ends with 75 naming what happened; the same command run again on the new primary
    /// applies the rest; at the end each notification is applied once in the ledger, and the
    /// orders and contracts equal those of one clean run of the same input on one server.
    @Test(.timeLimit(.minutes(3)))
    func aKilledPrimaryEndsTheRunWith75AndARerunOnThePromotedStandbyFinishesExactlyOnce() throws {
        signal(SIGPIPE, SIG_IGN)  // the killed run may close its input while the test still writes
        let began = Date()
        let pair = try TestPostgresPair.start()
        let paired = Date()
        defer { pair.stop() }

        let cli = try pair.cli()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<Self.subscriptions).map { _ in UUID().uuidString.lowercased() }
        try Self.prepare(cli, world: world, tokens: tokens)
        // A first purchase and a renewal per subscription: 180 notifications, made now.
        var lines: [String] = []
        var uuids: [String] = []
        for period in 0..<Int64(2) {
            for (i, token) in tokens.enumerated() {
                let uuid = UUID().uuidString.lowercased()
                let original = String(91_000 + i)
                let tx = world.transaction(
                    period == 0 ? original : String(92_000 + i), original: original, token: token, period: period)
                lines.append(
                    try world.notification(
                        period == 0 ? "SUBSCRIBED" : "DID_RENEW",
                        period == 0 ? "INITIAL_BUY" : nil, uuid: uuid,
                        signed: AppleWorld.t0 + period * 30 * AppleWorld.day, tx: tx))
                uuids.append(uuid)
            }
        }
        let input = lines.joined(separator: "\n") + "\n"

        // The batch streams in by groups; the primary dies after a random group, at a random
        // moment (between two chunks, or inside one's transaction).
        let killAfterGroup = Int.random(in: 1...3)
        let killDelay = Double.random(in: 0..<1.0)
        let prepared = Date()
        let started = try cli.start(["notify", "-o", "ndjson"] + world.trust)
        var killed = Date()
        let reader = LineReader(started.output.fileHandleForReading)
        let writer = started.input.fileHandleForWriting.fileDescriptor
        var written = 0
        // One more group after the kill: the run meets the dead primary even when it was idle.
        for (index, group) in stride(from: 0, to: lines.count, by: Self.groupSize).enumerated()
        where index <= killAfterGroup + 1 {
            let end = min(group + Self.groupSize, lines.count)
            guard Self.write(lines[group..<end], to: writer) else { break }
            written = end
            if index == killAfterGroup {
                Thread.sleep(forTimeInterval: killDelay)
                try pair.script("kill-primary")
                killed = Date()
                try pair.script("promote")
            } else {
                Thread.sleep(forTimeInterval: 0.3)  // the chunk ends when the input pauses
            }
        }
        started.input.fileHandleForWriting.closeFile()
        started.process.waitUntilExit()
        let ended = Date()
        var reported: [String] = []
        while let line = reader.next(timeout: 5) { reported.append(line) }
        let stderr = (try? String(contentsOfFile: started.errors, encoding: .utf8)) ?? ""
        let where_ = "killed after group \(killAfterGroup) + \(Int(killDelay * 1000)) ms; \(written) lines written"
        #expect(started.process.terminationStatus == 75, "\(where_)\n\(stderr)")
        // What happened, and what to do.
        #expect(
            stderr.contains("connection to the server was lost") || stderr.contains("ended the session")
                || stderr.contains("read-only"), "\(stderr)")
        #expect(stderr.contains("run the same command again"), "\(stderr)")

        let appliedFirst = Set(
            try reported.compactMap { line -> String? in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return object["verdict"] as? String == "applied" ? object["notification_uuid"] as? String : nil
            })
        #expect(appliedFirst.count < uuids.count, "the run ended before the kill: \(where_)")
        // Asynchronous replication: a commit the old primary acknowledged may not have reached the
        // standby. The rerun of the same input is what makes the new primary whole.
        let onNewPrimary = Set(try Self.appliedInLedger(cli, pair: pair).keys)
        let lostTail = appliedFirst.subtracting(onNewPrimary)
        print(
            "failover: \(where_); first run reported \(appliedFirst.count) applied, the promoted standby has "
                + "\(onNewPrimary.count); \(lostTail.count) reported but not replicated; the run ended "
                + "\(String(format: "%.1f", ended.timeIntervalSince(killed))) s after the kill; pair started in "
                + "\(String(format: "%.1f", paired.timeIntervalSince(began))) s, input made in "
                + "\(String(format: "%.1f", prepared.timeIntervalSince(paired))) s\n\(stderr)")

        // The same command again: libpq skips the dead host and connects to the promoted standby.
        let rerunStarted = Date()
        let rerun = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: input)
        let rerunTook = Date().timeIntervalSince(rerunStarted)
        #expect(rerun.status == 0, "\(rerun)")
        let verdicts = try rerun.ndjson().map { ($0["notification_uuid"] as? String ?? "?", $0["verdict"] as? String ?? "?") }
        #expect(verdicts.map(\.0) == uuids)
        for (uuid, verdict) in verdicts {
            #expect(verdict == (onNewPrimary.contains(uuid) ? "duplicate" : "applied"), "\(uuid)")
        }

        // Each notification applied exactly once; nothing else applied.
        let applied = try Self.appliedInLedger(cli, pair: pair)
        #expect(Set(applied.keys) == Set(uuids))
        #expect(applied.values.allSatisfy { $0 == 1 }, "\(applied.filter { $0.value != 1 })")

        // The money tables equal a clean run of the same input on one server.
        let clean = try pair.cli()
        let cleanWorld = try AppleWorld(cli: clean, pki: world.pki)
        try Self.prepare(clean, world: cleanWorld, tokens: tokens)
        let once = try clean.run(["notify", "-o", "ndjson"] + cleanWorld.trust, stdin: input)
        #expect(once.status == 0, "\(once)")
        let known = Set(tokens)
        let tables = try world.tables(maskGeneratedNumbers: known)
        #expect(tables.count == 2 * Self.subscriptions + Self.subscriptions, "\(tables.count) rows")
        #expect(tables == (try cleanWorld.tables(maskGeneratedNumbers: known)))
        let whole = Date().timeIntervalSince(began)
        print("failover: rerun took \(String(format: "%.1f", rerunTook)) s; the whole test \(String(format: "%.1f", whole)) s")
    }

    /// `db init` and one pending order per token.
    static func prepare(_ cli: CLI, world: AppleWorld, tokens: [String]) throws {
        try cli.ok(["db", "init"])
        let rows = tokens.enumerated().map { i, token in
            "{\"user\":\"user\(i)\",\"product\":\"\(AppleWorld.product)\",\"no\":\"\(token)\"}"
        }
        try cli.ok(["orders", "create", "--from", try cli.write("orders.ndjson", rows.joined(separator: "\n") + "\n")])
    }

    /// How many `applied` ledger rows each notification has, on the pair's current primary.
    static func appliedInLedger(_ cli: CLI, pair: TestPostgresPair) throws -> [String: Int] {
        let text = try pair.server.run(
            "SELECT notification_uuid, count(*) FROM iap_ledger WHERE verdict = 'applied' GROUP BY 1",
            database: pair.database(of: cli))
        var counts: [String: Int] = [:]
        for row in text.split(separator: "\n") {
            let fields = row.split(separator: "\t")
            guard fields.count == 2, let n = Int(fields[1]) else { continue }
            counts[String(fields[0])] = n
        }
        return counts
    }

    /// Writes `lines` to the pipe; false when the reader has gone (the run ended).
    static func write(_ lines: ArraySlice<String>, to fd: Int32) -> Bool {
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}

/// A primary and a streaming standby of `scripts/postgres-test-server start-pair`, stopped (and
/// removed) by ``stop()``.
struct TestPostgresPair {
    /// The exports of `start-pair`.
    let environment: [String: String]
    /// The pair's URL (both hosts, `target_session_attrs=read-write`) and password, reached with psql.
    let server: TestPostgresServer

    static let script = CLI.packageRoot.appendingPathComponent("scripts/postgres-test-server").path

    static func start() throws -> TestPostgresPair {
        let output = try run([script, "start-pair"], environment: [:])
        let exports = scriptExports(output)
        let url = try #require(exports["IAPCTL_TEST_POSTGRES_PAIR_URL"], "start-pair printed no URL: \(output)")
        let password = try #require(exports["IAPCTL_TEST_POSTGRES_PAIR_PASSWORD"])
        return TestPostgresPair(environment: exports, server: TestPostgresServer(url: url, password: password))
    }

    /// `scripts/postgres-test-server COMMAND` on this pair.
    func script(_ command: String) throws {
        _ = try Self.run([Self.script, command], environment: environment)
    }

    func stop() {
        _ = try? Self.run([Self.script, "stop-pair"], environment: environment)
    }

    /// A ``CLI`` whose `--db` is a fresh database on the pair (`db init` creates it).
    func cli() throws -> CLI {
        let cli = try CLI()
        cli.environment["IAPCTL_DB"] = server.url(database: TestPostgresServer.freshDatabaseName())
        cli.environment["PGPASSWORD"] = server.password
        cli.environment["IAPCTL_DB_PASSWORD"] = nil
        return cli
    }

    /// The database a ``cli()`` uses.
    func database(of cli: CLI) throws -> String {
        let url = try #require(cli.environment["IAPCTL_DB"])
        let path = try #require(url.split(separator: "?").first?.split(separator: "/").last)
        return String(path)
    }

    /// Runs `arguments` with TMPDIR=/tmp (the server's user must enter the folder); its stdout, or
    /// a thrown error with its stderr. Its output goes to files, not pipes: the servers it starts
    /// inherit the descriptors, and a pipe would never reach its end while they run.
    private static func run(_ arguments: [String], environment: [String: String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pair-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let err = folder.appendingPathComponent("err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            .merging(["TMPDIR": "/tmp"]) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let output = try String(contentsOf: out, encoding: .utf8)
        guard process.terminationStatus == 0 else {
            throw HarnessError(
                "\(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): "
                    + ((try? String(contentsOf: err, encoding: .utf8)) ?? ""))
        }
        return output
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the failover test only with `IAPCTL_TEST_POSTGRES_FAILOVER=1` (scripts/test sets it).
    static var postgresFailover: Self {
        .enabled(
            if: ProcessInfo.processInfo.environment["IAPCTL_TEST_POSTGRES_FAILOVER"] == "1",
            Comment(
                rawValue: "PostgreSQL failover: starts its own primary and standby; run with "
                    + "IAPCTL_TEST_POSTGRES_FAILOVER=1 (scripts/test does, after scripts/setup --test installed PostgreSQL)"))
    }
}
