import Foundation
import JWSForge
import StoreTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Exactly-once under concurrent delivery, poison items, aborted and simulated batches: on the
/// backend of the run (SQLite, or MariaDB with `IAPCTL_E2E_BACKEND=mysql`).
@Suite("reliability: exactly-once, poison items, atomic and dry-run batches")
struct ReliabilityTests {
    let t0 = AppleWorld.t0

    /// Ledger rows as `uuid verdict` lines (SQLite through the sqlite3 CLI, a server through its
    /// client), in id order; nil when the SQLite CLI is missing.
    static func ledger(_ cli: CLI, where condition: String = "1 = 1") throws -> [String]? {
        let sql = "SELECT notification_uuid, verdict FROM iap_ledger WHERE \(condition) ORDER BY id;"
        let text = cli.server != nil ? try cli.sql(sql) : try CrashSafetyTests.sqlite3(cli.path("iapctl.db"), sql)
        return text?.split(separator: "\n").map { $0.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "|", with: " ") }
    }

    /// Starts `iapctl args…` with stdin from `input` (a file) without waiting; output goes to files.
    static func start(_ cli: CLI, _ args: [String], input: String) throws -> (Process, URL, URL) {
        let id = UUID().uuidString
        let out = URL(fileURLWithPath: cli.path(".burst-out-\(id)"))
        let err = URL(fileURLWithPath: cli.path(".burst-err-\(id)"))
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = args
        process.currentDirectoryURL = cli.dir
        process.environment = cli.environment
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        return (process, out, err)
    }

    /// A subscription bought by `user` with pending order `token`: its INITIAL_BUY notification.
    func purchase(_ world: AppleWorld, id: String, token: String, uuid: String = UUID().uuidString.lowercased()) throws -> String {
        try world.notification("SUBSCRIBED", "INITIAL_BUY", uuid: uuid, signed: t0, tx: world.transaction(id, original: id, token: token))
    }

    // MARK: 1. exactly-once

    /// The same notifications delivered at once to several `notify` processes: each is processed
    /// once (`applied`), every other delivery is a `duplicate` of the notification — in the output
    /// and in the ledger. (A state change processed twice would read `applied, ignored`.)
    @Test func aBurstOfTheSameNotificationsIsProcessedExactlyOnce() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let subscriptions = 40
        let tokens = (0..<subscriptions).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.enumerated().map { ($0.element, "user\($0.offset)") })
        let purchases = try tokens.enumerated().map { try purchase(world, id: String(7000 + $0.offset), token: $0.element) }
        try cli.ok(["notify", "-q", try cli.write("buy.ndjson", purchases.joined(separator: "\n"))] + world.trust)
        var lines: [String] = []
        var uuids: [String] = []
        for i in 0..<subscriptions {
            let uuid = UUID().uuidString.lowercased()
            uuids.append(uuid)
            let tx = world.transaction(String(7000 + i), original: String(7000 + i), token: tokens[i])
            lines.append(
                try world.notification(
                    "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", uuid: uuid, signed: t0 + AppleWorld.day, tx: tx,
                    autoRenew: 0))
        }
        let input = try cli.write("burst.ndjson", lines.joined(separator: "\n") + "\n")
        let processes = 8
        var verdicts: [String: [String]] = [:]
        for round in 0..<2 {
            let started = try (0..<processes).map { _ in
                try Self.start(cli, ["notify", "-o", "ndjson"] + world.trust, input: input)
            }
            for (process, out, err) in started {
                process.waitUntilExit()
                let result = CLI.Result(
                    status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
                    stderr: try String(contentsOf: err, encoding: .utf8))
                #expect(result.status == 0, "\(result)")
                for item in try result.ndjson() {
                    let verdict = item["verdict"] as? String ?? "?"
                    verdicts[item["notification_uuid"] as? String ?? "?", default: []].append(verdict)
                    if verdict == "duplicate" {
                        #expect((item["detail"] as? String ?? "").contains("already processed"), "round \(round): \(item)")
                    }
                }
            }
        }
        let deliveries = 2 * processes
        for uuid in uuids {
            let seen = (verdicts[uuid] ?? []).sorted()
            #expect(seen == ["applied"] + Array(repeating: "duplicate", count: deliveries - 1), "\(uuid): \(seen)")
        }
        if let ledger = try Self.ledger(cli) {
            for uuid in uuids {
                let rows = ledger.filter { $0.hasPrefix(uuid + " ") }.map { String($0.dropFirst(uuid.count + 1)) }.sorted()
                #expect(rows == ["applied"] + Array(repeating: "duplicate", count: deliveries - 1), "ledger of \(uuid): \(rows)")
            }
        }
        #expect(try world.contracts().allSatisfy { "\($0["auto_renew"] ?? "")" == "0" || "\($0["auto_renew"] ?? "")" == "false" })
    }

    // MARK: 2. poison items

    /// Signed items whose stored fields do not fit (ids over 255 characters) are `rejected` on
    /// their own, kept in the ledger, and the batch goes on — the same on both backends, and again
    /// on a rerun.
    @Test func poisonItemsAreRejectedKeptInTheLedgerAndTheBatchGoesOn() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<2).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: [(tokens[0], "alice"), (tokens[1], "bob")])
        let long = String(repeating: "p", count: 300)
        let poisonProduct = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0,
            tx: world.transaction("8100", original: "8100", token: tokens[0], product: "com.example." + long))
        let poisonTransaction = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction(long, original: long, token: tokens[0]))
        let poisonUUID = try purchase(world, id: "8200", token: tokens[1], uuid: String(repeating: "u", count: 10_000))
        let good = [try purchase(world, id: "8300", token: tokens[0]), try purchase(world, id: "8400", token: tokens[1])]
        let batch = [poisonProduct, good[0], poisonTransaction, poisonUUID, good[1]].joined(separator: "\n") + "\n"
        let file = try cli.write("poison.ndjson", batch)

        for run in 0..<2 {
            let result = try cli.run(["notify", "-o", "ndjson", file] + world.trust)
            #expect(result.status == 1, "\(result)")
            let items = try result.ndjson()
            #expect(items.map { $0["line"] as? Int } == [1, 2, 3, 4, 5], "\(result)")
            let expected = run == 0 ? "applied" : "duplicate"
            #expect(items.map { $0["verdict"] as? String } == ["rejected", expected, "rejected", "rejected", expected], "\(result)")
            for i in [0, 2, 3] {
                let error = items[i]["error"] as? String ?? ""
                #expect(error.contains("255"), "line \(i + 1): \(error)")
                #expect(result.stderr.contains("line \(i + 1):"))
            }
            #expect((items[0]["error"] as? String ?? "").contains("productId"))
            #expect((items[2]["error"] as? String ?? "").contains("transactionId"))
            #expect((items[3]["error"] as? String ?? "").contains("notificationUUID"))
        }
        #expect(try world.order(tradeNo: "8300")?["status"] as? String == "paid")
        #expect(try world.order(tradeNo: "8400")?["status"] as? String == "paid")
        #expect(try world.orders().count == 2)
        let status = try cli.ok(["db", "status", "-o", "json"]).jsonObject()
        // 2 runs × (3 rejected + 2 processed): every delivery is kept.
        #expect(status["ledger"] as? Int == 10, "\(status)")
        if let rejected = try Self.ledger(cli, where: "verdict = 'rejected'") {
            #expect(rejected.count == 6, "\(rejected)")
        }
    }

    // MARK: 3. aborted --atomic batches

    /// An `--atomic` batch that aborts reports every line, read or not, as `not-applied`; the line
    /// that caused it carries the reason; stdout and stderr agree; nothing is written.
    @Test func anAbortedAtomicBatchReportsEveryLineAsNotApplied() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<3).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let good = try tokens.enumerated().map { try purchase(world, id: String(9100 + $0.offset), token: $0.element) }
        let before = try world.tables(maskGeneratedNumbers: Set(tokens))
        let ledgerBefore = try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int
        // A malformed line, then an unmatched one (no order, no contract), each aborting its batch.
        let orphan = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("9900", original: "9900"))
        for (bad, reason) in [("not a jws", "rejected"), (orphan, "unmatched")] {
            let batch = [good[0], good[1], bad, good[2]].joined(separator: "\n") + "\n"
            let result = try cli.run(["notify", "--atomic", "-o", "ndjson"] + world.trust, stdin: batch)
            #expect(result.status == 1, "\(result)")
            let items = try result.ndjson()
            #expect(items.map { $0["line"] as? Int } == [1, 2, 3, 4], "\(result)")
            #expect(items.allSatisfy { $0["verdict"] as? String == "not-applied" }, "\(result)")
            #expect(items.allSatisfy { ($0["changes"] as? [Any])?.isEmpty ?? true }, "\(result)")
            let cause = items[2]["error"] as? String ?? ""
            #expect(cause.hasPrefix(reason + ":") && cause.contains("nothing was applied"), "\(cause)")
            for i in [0, 1, 3] {
                #expect((items[i]["error"] as? String ?? "").contains("rolled back at line 3"), "\(items[i])")
            }
            #expect(result.stderr.contains("line 3:"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was applied"), "\(result.stderr)")
            #expect(!result.stderr.contains("applied,") && !result.stderr.contains(": 2 applied"), "\(result.stderr)")
            // The table says the same.
            let table = try cli.run(["notify", "--atomic"] + world.trust, stdin: batch)
            #expect(table.status == 1)
            #expect(!table.stdout.contains(" applied "), "\(table.stdout)")
            #expect(table.stdout.components(separatedBy: "not-applied").count - 1 == 4, "\(table.stdout)")
        }
        #expect(try world.tables(maskGeneratedNumbers: Set(tokens)) == before)
        #expect(try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int == ledgerBefore)
    }

    // MARK: 14.3. dry runs predict the real run

    /// `notify --dry-run` simulates the whole batch in one rolled-back transaction: each line sees
    /// the lines before it, so it predicts exactly the verdicts the real run gives — here a file
    /// of purchases, renewals and a retried delivery, repeated three times — and writes nothing.
    @Test func aDryRunPredictsExactlyWhatTheRealRunGives() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<2).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: [(tokens[0], "alice"), (tokens[1], "bob")])
        var once: [String] = []
        for (i, token) in tokens.enumerated() {
            let original = String(9500 + 10 * i)
            let buy = try purchase(world, id: original, token: token)
            once.append(buy)
            for n in 1...2 {
                once.append(
                    try world.notification(
                        "DID_RENEW", signed: t0 + Int64(n) * 30 * AppleWorld.day,
                        tx: world.transaction(String(9500 + 10 * i + n), original: original, period: Int64(n))))
            }
            once.append(buy)  // Apple's retry of the same notification
        }
        let file = try cli.write("year.ndjson", Array(repeating: once.joined(separator: "\n"), count: 3).joined(separator: "\n"))
        let before = try world.tables(maskGeneratedNumbers: Set(tokens))
        let dry = try cli.run(["notify", "--dry-run", "-o", "ndjson", file] + world.trust)
        #expect(try world.tables(maskGeneratedNumbers: Set(tokens)) == before, "a dry run wrote")
        let dryItems = try dry.ndjson()
        #expect(dryItems.allSatisfy { $0["dry_run"] as? Bool == true })
        let table = try cli.run(["notify", "--dry-run", file] + world.trust)
        #expect(table.stdout.contains("would apply"), "\(table.stdout)")
        #expect(table.stdout.contains("would be duplicate"), "\(table.stdout)")

        let real = try cli.run(["notify", "-o", "ndjson", file] + world.trust)
        let realItems = try real.ndjson()
        #expect(dry.status == real.status, "\(dry)\n\(real)")
        #expect(dryItems.map { $0["verdict"] as? String } == realItems.map { $0["verdict"] as? String })
        #expect(realItems.filter { $0["verdict"] as? String == "applied" }.count == 6)
        #expect(realItems.filter { $0["verdict"] as? String == "duplicate" }.count == realItems.count - 6)
        let summary = { (r: CLI.Result) in r.stderr.split(separator: "\n").first { $0.hasPrefix("notify:") } ?? "" }
        // The same counts; the dry run says what would be.
        let predicted = summary(dry).replacing("would apply", with: "applied")
        #expect(predicted.hasPrefix(summary(real)), "\(summary(dry)) vs \(summary(real))")
    }

    // MARK: 14.10. Ctrl-C

    /// Runs `arguments` with `lines` on an input that stays open, waits until `paid` orders are
    /// paid, sends SIGINT, and returns the exit status, stdout and stderr.
    func interrupted(
        _ world: AppleWorld, _ cli: CLI, _ arguments: [String], lines: [String], paid: Int
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let started = try cli.start(arguments + world.trust)
        let (process, input) = (started.process, started.input)
        defer { if process.isRunning { process.terminate() } }
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, try world.orders().filter({ $0["status"] as? String == "paid" }).count < paid { usleep(100_000) }
        usleep(300_000)  // the results are printed right after the commit
        kill(process.processIdentifier, SIGINT)
        let sent = Date()
        while process.isRunning, Date().timeIntervalSince(sent) < 10 { usleep(50_000) }
        #expect(!process.isRunning, "\(arguments[0]) ignored Ctrl-C")
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let stdout = String(decoding: started.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, stdout, try String(contentsOfFile: started.errors, encoding: .utf8))
    }

    /// SIGINT during a batch whose input is still open: exit 130, the committed items printed
    /// (as a table), and "interrupted after N items: M committed; re-running is safe".
    @Test(.timeLimit(.minutes(1)))
    func ctrlCReportsWhatWasCommittedAndExits130() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<3).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map { try purchase(world, id: String(6800 + $0.offset), token: $0.element) }
        let run = try interrupted(world, cli, ["notify"], lines: lines, paid: 3)
        #expect(run.status == 130)
        #expect(run.stdout.components(separatedBy: "applied").count - 1 == 3, "\(run.stdout)")
        #expect(run.stderr.contains("interrupted after 3 items: 3 committed; re-running is safe"), "\(run.stderr)")
    }

    /// `verify --apply` too: SIGINT while the input is still open reports every applied item (here
    /// as NDJSON, which is written at the end) and the count, and exits 130.
    @Test(.timeLimit(.minutes(1)))
    func ctrlCDuringVerifyApplyReportsWhatWasCommitted() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<2).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map {
            try world.signedTransaction(world.transaction(String(6900 + $0.offset), original: String(6900 + $0.offset), token: $0.element))
        }
        let run = try interrupted(world, cli, ["verify", "--apply", "-o", "ndjson"], lines: lines, paid: 2)
        #expect(run.status == 130)
        let verdicts = run.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.map { $0["verdict"] as? String }
        #expect(verdicts == ["applied", "applied"], "\(run.stdout)")
        #expect(run.stderr.contains("interrupted after 2 items: 2 committed; re-running is safe"), "\(run.stderr)")
    }

    /// `restore --apply` too: SIGINT while the device's list is still arriving reports the
    /// restored items and the count, and exits 130.
    @Test(.timeLimit(.minutes(1)))
    func ctrlCDuringRestoreApplyReportsWhatWasCommitted() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<2).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map {
            try world.signedTransaction(world.transaction(String(6950 + $0.offset), original: String(6950 + $0.offset), token: $0.element))
        }
        let run = try interrupted(world, cli, ["restore", "--user", "alice", "--apply", "-o", "ndjson"], lines: lines, paid: 2)
        #expect(run.status == 130)
        #expect(run.stdout.split(separator: "\n").count == 2, "\(run.stdout)")
        #expect(run.stderr.contains("interrupted after 2 items: 2 committed; re-running is safe"), "\(run.stderr)")
        #expect(try world.orders().filter { $0["status"] as? String == "paid" }.count == 2)
    }

    // MARK: 10. every item has a verdict

    /// `verify --apply -o ndjson`: refused items (malformed, forged, the wrong kind, a poison
    /// item) carry a `verdict` like applied ones.
    @Test func verifyApplyGivesEveryItemAVerdict() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = UUID().uuidString.lowercased()
        try world.database(orders: [(token, "alice")])
        let other = try AppleWorld(cli: cli)
        let lines = [
            try world.signedTransaction(world.transaction("6100", original: "6100", token: token)),
            "not a jws",
            try other.signedTransaction(other.transaction("6200", original: "6200")),
            try purchase(world, id: "6300", token: token),
            try world.signedTransaction(world.transaction(String(repeating: "9", count: 300), original: "6400")),
        ]
        let result = try cli.run(["verify", "--apply", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 1, "\(result)")
        let items = try result.ndjson()
        #expect(items.count == 5, "\(result)")
        #expect(items.map { $0["verdict"] as? String } == ["applied", "rejected", "rejected", "rejected", "rejected"], "\(result)")
    }

    // MARK: 4. concurrent shuffled batches

    /// 16 processes replay the same batch, each shuffled differently, at once: none gives up
    /// (no exit 75 on a deadlock), and the result is each payment once and each contract in its
    /// newest state. 32 subscriptions (128 lines) in CI, 8 processes on SQLite; `IAPCTL_SHUFFLE_SUBSCRIPTIONS=128` (512
    /// lines, full chunks) is the size at which the unordered version gave up.
    @Test(.timeLimit(.minutes(3)))
    func concurrentShuffledBatchesAllSucceed() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let subscriptions = Int(ProcessInfo.processInfo.environment["IAPCTL_SHUFFLE_SUBSCRIPTIONS"] ?? "") ?? 32
        let tokens = (0..<subscriptions).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.enumerated().map { ($0.element, "user\($0.offset)") })
        var lines: [String] = []
        for (i, token) in tokens.enumerated() {
            let original = String(40_000 + 10 * i)
            for n in 0...2 {
                let tx = world.transaction(String(40_000 + 10 * i + n), original: original, token: token, period: Int64(n))
                lines.append(
                    try world.notification(
                        n == 0 ? "SUBSCRIBED" : "DID_RENEW", n == 0 ? "INITIAL_BUY" : nil,
                        signed: t0 + Int64(n) * 30 * AppleWorld.day, tx: tx))
            }
            let last = world.transaction(String(40_000 + 10 * i + 2), original: original, token: token, period: 2)
            lines.append(
                try world.notification(
                    "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 70 * AppleWorld.day, tx: last,
                    autoRenew: 0))
        }
        var generator = SplitMix(seed: 42)
        // SQLite serializes writers (each waits up to its 15 s busy timeout): fewer at once there.
        let processes = E2EBackend.current == .sqlite ? 8 : 16
        let inputs = try (0..<processes).map { p in
            try cli.write("shuffled-\(p).ndjson", lines.shuffled(using: &generator).joined(separator: "\n") + "\n")
        }
        let started = try inputs.map { try Self.start(cli, ["notify", "-q"] + world.trust, input: $0) }
        for (process, _, err) in started {
            process.waitUntilExit()
            let stderr = try String(contentsOf: err, encoding: .utf8)
            #expect(process.terminationStatus == 0, "\(stderr)")
        }
        let orders = try world.orders()
        #expect(orders.count == 3 * subscriptions)
        #expect(Set(orders.compactMap { $0["trade_no"] as? String }).count == 3 * subscriptions)
        let contracts = try world.contracts()
        #expect(contracts.count == subscriptions)
        #expect(
            contracts.allSatisfy { "\($0["auto_renew"] ?? "")" == "0" || "\($0["auto_renew"] ?? "")" == "false" }, "\(contracts.prefix(2))")
        if let ledger = try Self.ledger(cli, where: "verdict = 'applied'") {
            // Each notification changed something at most once.
            #expect(Set(ledger).count == ledger.count, "a notification applied twice")
        }
    }

    // MARK: 5. a pipe that stays open

    /// `tail -f log | iapctl notify`: complete lines are applied and reported while the pipe stays
    /// open, within about the idle timeout, not at EOF or after 512 items.
    @Test(.timeLimit(.minutes(1)))
    func linesOnAPipeThatStaysOpenAreAppliedPromptly() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<4).map { _ in UUID().uuidString.lowercased() }
        try world.database(orders: tokens.map { ($0, "alice") })
        let lines = try tokens.enumerated().map { try purchase(world, id: String(6600 + $0.offset), token: $0.element) }

        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["notify", "-o", "ndjson"] + world.trust
        process.currentDirectoryURL = cli.dir
        process.environment = cli.environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = LineReader(output.fileHandleForReading)

        // Three lines at once, then one more later: each group is reported while stdin stays open.
        for (group, count) in [(lines[0..<3], 3), (lines[3..<4], 1)] {
            let sent = Date()
            input.fileHandleForWriting.write(Data((group.joined(separator: "\n") + "\n").utf8))
            var got: [String] = []
            while got.count < count, let line = reader.next(timeout: 10) { got.append(line) }
            #expect(got.count == count, "only \(got.count) of \(count) lines reported while the pipe is open")
            #expect(Date().timeIntervalSince(sent) < 5)
            #expect(got.allSatisfy { $0.contains("\"applied\"") }, "\(got)")
        }
        // Committed, as another process sees it, before the input ends.
        #expect(try world.orders().filter { $0["status"] as? String == "paid" }.count == 4)
        #expect(process.isRunning)
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}

/// Reads lines from a pipe on a background thread, with a timeout per line.
final class LineReader: @unchecked Sendable {
    private let lock = NSCondition()
    private var lines: [String] = []
    private var ended = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let data = handle.availableData
                lock.lock()
                if data.isEmpty {
                    ended = true
                    lock.broadcast()
                    lock.unlock()
                    return
                }
                pending.append(data)
                while let newline = pending.firstIndex(of: 10) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending = Data(pending[(newline + 1)...])
                }
                lock.broadcast()
                lock.unlock()
            }
        }
    }

    /// The next line, or nil when none came within `timeout` seconds (or the pipe ended).
    func next(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while lines.isEmpty, !ended {
            if !lock.wait(until: deadline) { break }
        }
        return lines.isEmpty ? nil : lines.removeFirst()
    }
}
