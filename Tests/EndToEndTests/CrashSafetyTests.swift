import Foundation
import JWSForge
import StoreTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Crash safety of `iapctl notify`: SIGKILL at random moments of a large batch, rerun the batch,
/// and the database equals one clean run — no partial item, no duplicate order, ledger and
/// counts identical, SQLite's `PRAGMA integrity_check` ok.
///
/// Fast by default (CI): 200 notifications, 10 kill cycles. More with
/// `IAPCTL_CRASH_BATCH=… IAPCTL_CRASH_CYCLES=…`; `IAPCTL_CRASH_SEED` replays one schedule.
@Suite("crash safety: SIGKILL during notify loses nothing and doubles nothing", .serialized)
struct CrashSafetyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let batchSize = Int(environment["IAPCTL_CRASH_BATCH"] ?? "") ?? 200
    static let cycles = Int(environment["IAPCTL_CRASH_CYCLES"] ?? "") ?? 10

    /// One signed batch: `batchSize / 4` subscriptions with an order each (a few without, so the
    /// ledger keeps unmatched items), each bought, renewed twice, then expired, refunded or toggled.
    struct Batch {
        var lines: [String] = []
        var tokens: [String] = []
        var transactionIds: Set<String> = []
    }

    static func makeBatch(_ world: AppleWorld, size: Int) throws -> Batch {
        var batch = Batch()
        let day = AppleWorld.day, t0 = AppleWorld.t0
        for s in 0..<max(1, size / 4) {
            let original = String(2_000_000 + s * 10)
            let token = s % 10 == 9 ? nil : String(format: "00000000-0000-4000-8000-%012d", s)
            if let token { batch.tokens.append(token) }
            let tx0 = world.transaction(original, original: original, token: token)
            let tx1 = world.transaction(String(2_000_000 + s * 10 + 1), original: original, token: token, period: 1)
            let tx2 = world.transaction(String(2_000_000 + s * 10 + 2), original: original, token: token, period: 2, revoked: s % 3 == 1)
            batch.transactionIds.formUnion([tx0.transactionId, tx1.transactionId, tx2.transactionId])
            batch.lines.append(try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx0))
            batch.lines.append(try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: tx1))
            batch.lines.append(try world.notification("DID_RENEW", signed: t0 + 60 * day, tx: tx2))
            switch s % 3 {
            case 0: batch.lines.append(try world.notification("EXPIRED", "VOLUNTARY", signed: t0 + 91 * day, tx: tx2, autoRenew: 0))
            case 1: batch.lines.append(try world.notification("REFUND", signed: t0 + 61 * day, tx: tx2, autoRenew: nil))
            default:
                batch.lines.append(
                    try world.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 65 * day, tx: tx2, autoRenew: 0)
                )
            }
        }
        return batch
    }

    /// Everything a run may change, as comparable text.
    static func snapshot(_ world: AppleWorld, env: [String: String], known: Set<String>) throws -> [String] {
        var status = try world.cli.ok(["db", "status", "-o", "json"], env: env).jsonObject()
        status["database"] = nil
        // The ledger logs every delivery (a rerun's duplicates too): compared by `ledgerView` instead.
        status["ledger"] = nil
        status["unmatched"] = nil
        let counts = status.keys.sorted().map { "status \($0)=\(status[$0]!)" }
        let orders = try world.cli.ok(["orders", "list", "-o", "json"], env: env).jsonArray()
        let contracts = try world.cli.ok(["contracts", "list", "-o", "json"], env: env).jsonArray()
        let orderRows = orders.map { o -> String in
            let no = o["no"] as? String ?? "?"
            return [
                "order", known.contains(no) ? no : "<generated>", o["user_id"], o["product_id"], o["status"], o["trade_no"],
                o["origin_no"], o["expires_date_ms"], o["purchase_date_ms"], o["price"],
            ]
            .map { "\($0 ?? "-")" }.joined(separator: " ")
        }
        let contractRows = contracts.map { c -> String in
            ["contract", c["contract_id"], c["user_id"], c["product_id"], c["status"], c["auto_renew"], c["expires_date"]]
                .map { "\($0 ?? "-")" }.joined(separator: " ")
        }
        return counts + (orderRows + contractRows).sorted()
    }

    /// Each transactionId of the batch names at most one order (never two).
    static func tradeNumbers(_ world: AppleWorld, env: [String: String]) throws -> [String: Int] {
        let orders = try world.cli.ok(["orders", "list", "-o", "json"], env: env).jsonArray()
        var counts: [String: Int] = [:]
        for order in orders { if let trade = order["trade_no"] as? String { counts[trade, default: 0] += 1 } }
        return counts
    }

    /// `PRAGMA integrity_check` through the sqlite3 CLI; nil when it is not installed.
    static func integrityCheck(_ path: String) throws -> String? {
        try sqlite3(path, "PRAGMA integrity_check; PRAGMA foreign_key_check;")
    }

    /// The ledger as it must be after any number of deliveries: each notification processed
    /// (applied/ignored/stale…) exactly once, with the same verdict as in a clean run, and every
    /// notification of the batch present. Nil without the sqlite3 CLI.
    static func ledgerView(_ path: String) throws -> String? {
        try sqlite3(
            path,
            """
            SELECT 'processed', notification_uuid, verdict, count(*) FROM iap_ledger
              WHERE verdict NOT IN ('duplicate', 'unmatched', 'rejected') GROUP BY notification_uuid, verdict ORDER BY notification_uuid, verdict;
            SELECT 'received', count(DISTINCT notification_uuid) FROM iap_ledger;
            SELECT 'unmatched uuids', count(DISTINCT notification_uuid) FROM iap_ledger WHERE verdict = 'unmatched';
            """)
    }

    /// Runs SQL with the sqlite3 CLI; nil when it is not installed.
    static func sqlite3(_ path: String, _ sql: String) throws -> String? {
        guard let sqlite3 = Programs.which("sqlite3") else { return nil }
        return try Programs.run(sqlite3, ["-readonly", path, sql]).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts `iapctl args…`, SIGKILLs it after `delay` µs; true when the kill landed before it exited.
    static func killDuring(_ cli: CLI, _ args: [String], env: [String: String], afterMicroseconds delay: UInt32) throws -> Bool {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = args
        process.currentDirectoryURL = cli.dir
        process.environment = cli.environment.merging(env) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(delay)
        let killed = kill(process.processIdentifier, SIGKILL) == 0
        process.waitUntilExit()
        return killed && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// Where one cycle's database lives: a copy of a prepared SQLite file, or a fresh database on the
    /// test server.
    struct Backend {
        var name: String
        /// Makes a database holding the schema and the batch's pending orders; its environment.
        var fresh: (_ label: String) throws -> [String: String]
        /// Problems found by the engine's own integrity check ("ok" when none); nil when unavailable.
        var integrity: (_ env: [String: String]) throws -> String?
        /// ``ledgerView(_:)`` in this backend's SQL client; nil when unavailable.
        var ledger: (_ env: [String: String]) throws -> String?
        var drop: (_ env: [String: String]) -> Void
    }

    static func sqliteBackend(_ world: AppleWorld, tokens: [String]) throws -> Backend {
        let cli = world.cli
        try world.database(orders: tokens.map { ($0, "user-\($0.suffix(4))") })
        let pristine = cli.path("pristine.db")
        try FileManager.default.copyItem(atPath: cli.dbPath, toPath: pristine)
        return Backend(
            name: "SQLite",
            fresh: { label in
                let db = cli.path("\(label).db")
                try FileManager.default.copyItem(atPath: pristine, toPath: db)
                return ["IAPCTL_DB": db]
            },
            integrity: { env in try integrityCheck(env["IAPCTL_DB"]!) },
            ledger: { env in try ledgerView(env["IAPCTL_DB"]!) },
            drop: { env in
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: env["IAPCTL_DB"]! + suffix) }
            })
    }

    /// Fresh databases on the run's test server (MariaDB or PostgreSQL), checked with its client.
    static func serverBackend(_ world: AppleWorld, tokens: [String]) throws -> Backend {
        let server = try #require(E2EBackend.testServer)
        let postgres = E2EBackend.current == .postgres
        let from = try world.cli.write(
            "orders.ndjson",
            tokens.map { #"{"user":"user-\#($0.suffix(4))","product":"\#(AppleWorld.product)","no":"\#($0)"}"# }.joined(separator: "\n")
                + "\n")
        var names: [String: String] = [:]
        func database(_ env: [String: String]) -> String { names[env["IAPCTL_DB"]!]! }
        return Backend(
            name: postgres ? "PostgreSQL" : "MariaDB",
            fresh: { _ in
                let name = TestMySQLServer.freshDatabaseName()
                let env = server.environment(database: name)
                names[env["IAPCTL_DB"]!] = name
                try world.cli.ok(["db", "init"], env: env)
                try world.cli.ok(["orders", "create", "--from", from], env: env)
                return env
            },
            integrity: { env in
                if postgres {
                    // PostgreSQL has no table check a user may run; an index a crash left half-built
                    // is marked invalid. (Its WAL makes the tables themselves all or nothing.)
                    let invalid = try server.run(
                        "SELECT indexrelid::regclass FROM pg_index WHERE NOT indisvalid OR NOT indisready",
                        database: database(env)
                    ).trimmingCharacters(in: .whitespacesAndNewlines)
                    return invalid.isEmpty ? "ok" : "invalid indexes: \(invalid)"
                }
                // InnoDB has no integrity_check; CHECK TABLE reports per table.
                let out = try server.run("CHECK TABLE orders, member_contracts, iap_ledger, iap_audit", database: database(env))
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return out.split(separator: "\n").allSatisfy { $0.hasSuffix("\tOK") } ? "ok" : out
            },
            ledger: { env in
                try server.run(
                    """
                    SELECT 'processed', notification_uuid, verdict, count(*) FROM iap_ledger
                      WHERE verdict NOT IN ('duplicate', 'unmatched', 'rejected') GROUP BY notification_uuid, verdict ORDER BY notification_uuid, verdict;
                    SELECT 'received', count(DISTINCT notification_uuid) FROM iap_ledger;
                    SELECT 'unmatched uuids', count(DISTINCT notification_uuid) FROM iap_ledger WHERE verdict = 'unmatched';
                    """, database: database(env))
            },
            drop: { env in server.drop(database(env)) })
    }

    @Test(.sqliteOnly("copies database files between cycles"))
    func sigkillAtRandomPointsThenRerunEqualsOneCleanRun() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let batch = try Self.makeBatch(world, size: Self.batchSize)
        try Self.crashCycles(world, batch: batch, backend: try Self.sqliteBackend(world, tokens: batch.tokens))
    }

    /// Runs on the MariaDB and PostgreSQL passes of scripts/test (`IAPCTL_E2E_BACKEND=mysql`, `postgres`).
    @Test(.serverOnly("a fresh database on the server per cycle"))
    func sigkillOnTheServerThenRerunEqualsOneCleanRun() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let batch = try Self.makeBatch(world, size: Self.batchSize)
        try Self.crashCycles(world, batch: batch, backend: try Self.serverBackend(world, tokens: batch.tokens))
    }

    static func crashCycles(_ world: AppleWorld, batch: Batch, backend: Backend) throws {
        let cli = world.cli
        let input = try cli.write("batch.ndjson", batch.lines.joined(separator: "\n") + "\n")
        let notify = ["notify", "-q", "-o", "ndjson", input] + world.trust

        // The reference: one clean run.
        let clean = try backend.fresh("clean")
        defer { backend.drop(clean) }
        let started = Date()
        let reference = try cli.run(notify, env: clean)
        let duration = Date().timeIntervalSince(started)
        // Exit 1: the tokenless subscriptions stay unmatched (recorded for replay); nothing failed.
        // With -q a run that exits non-zero still says why, in one line.
        #expect(reference.status == 1 && reference.stderr.split(separator: "\n").count == 1, "\(reference)")
        #expect(reference.stderr.contains("unmatched") && reference.stderr.contains("(exit 1)"))
        let verdicts = Set(try reference.ndjson().compactMap { $0["verdict"] as? String })
        // `ignored`: a REFUND of a period whose DID_RENEW already carried the refunded transaction
        // finds the facts already decided (the engine derives rows from facts).
        #expect(verdicts.isSubset(of: ["applied", "duplicate", "stale", "unmatched", "ignored"]), "\(verdicts)")
        let known = Set(batch.tokens)
        let expected = try snapshot(world, env: clean, known: known)
        let expectedLedger = try backend.ledger(clean)
        if let expectedLedger {
            #expect(expectedLedger.contains("processed") && expectedLedger.contains("received"), "ledger query failed: \(expectedLedger)")
        }
        #expect(try tradeNumbers(world, env: clean).values.allSatisfy { $0 == 1 })

        let seed = UInt64(environment["IAPCTL_CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix(seed: seed)
        // Kills fall inside 80% of the reference run (reruns are faster: most items are duplicates).
        var window = UInt32(max(0.05, duration * 0.8) * 1_000_000)
        var landed = 0, kills = 0
        for cycle in 0..<cycles {
            let env = try backend.fresh("crash-\(cycle)")
            defer { backend.drop(env) }
            // One or two kills (the second interrupts a resumed run), then a full rerun.
            for _ in 0..<(1 + cycle % 2) {
                let delay = UInt32.random(in: 0...window, using: &random)
                let args = cycle % 4 == 3 ? notify + ["--atomic"] : notify
                kills += 1
                if try killDuring(cli, args, env: env, afterMicroseconds: delay) {
                    landed += 1
                } else {
                    // The run had finished: aim earlier from now on (machines differ in speed).
                    window = max(20_000, window / 4 * 3)
                }
                if let check = try backend.integrity(env) {
                    #expect(check == "ok", "\(backend.name) seed \(seed) cycle \(cycle): integrity after SIGKILL: \(check)")
                }
                // No transaction ever names two orders, even mid-batch.
                let partial = try tradeNumbers(world, env: env)
                #expect(
                    partial.values.allSatisfy { $0 == 1 },
                    "\(backend.name) seed \(seed) cycle \(cycle): duplicate orders \(partial.filter { $0.value > 1 })")
            }
            let rerun = try cli.run(notify, env: env)
            #expect(rerun.status == reference.status, "\(backend.name) seed \(seed) cycle \(cycle): rerun failed: \(rerun.stderr)")
            let state = try snapshot(world, env: env, known: known)
            #expect(
                state == expected,
                "\(backend.name) seed \(seed) cycle \(cycle): database differs from a clean run; extra \(state.filter { !expected.contains($0) }), missing \(expected.filter { !state.contains($0) })"
            )
            if let check = try backend.integrity(env) {
                #expect(check == "ok", "\(backend.name) seed \(seed) cycle \(cycle): integrity: \(check)")
            }
            if let ledger = try backend.ledger(env) {
                #expect(ledger == expectedLedger, "\(backend.name) seed \(seed) cycle \(cycle): ledger differs from a clean run")
            }
        }
        // Most kills must land while notify runs, or the test proves little.
        #expect(
            landed >= kills / 3,
            "\(backend.name) seed \(seed): only \(landed) of \(kills) kills landed before notify finished (window \(window) µs)")
        let integrity = try backend.integrity(clean) ?? "skipped (no SQL client)"
        let ledger = expectedLedger == nil ? "skipped (no SQL client)" : "compared"
        print(
            "crash safety \(backend.name): seed \(seed), \(batch.lines.count) notifications, \(cycles) cycles, \(landed)/\(kills) SIGKILLs landed mid-run, clean run \(Int(duration * 1000)) ms, integrity \(integrity), ledger \(ledger)"
        )
    }

    @Test(.sqliteOnly("copies database files"))
    func sigkillDuringAtomicBatchIsAllOrNothing() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let batch = try Self.makeBatch(world, size: 36)  // every item matches an order: --atomic commits
        let input = try cli.write("batch.ndjson", batch.lines.joined(separator: "\n") + "\n")
        try world.database(orders: batch.tokens.map { ($0, "u") })
        let before = try Self.snapshot(world, env: ["IAPCTL_DB": cli.dbPath], known: Set(batch.tokens))
        let pristine = cli.path("pristine.db")
        try FileManager.default.copyItem(atPath: cli.dbPath, toPath: pristine)
        let clean = cli.path("clean.db")
        try FileManager.default.copyItem(atPath: pristine, toPath: clean)
        let args = ["notify", "-q", "--atomic", input] + world.trust
        try cli.ok(args, env: ["IAPCTL_DB": clean])
        let after = try Self.snapshot(world, env: ["IAPCTL_DB": clean], known: Set(batch.tokens))
        for delay: UInt32 in [20_000, 80_000, 150_000, 300_000] {
            let db = cli.path("atomic-\(delay).db")
            try FileManager.default.copyItem(atPath: pristine, toPath: db)
            _ = try Self.killDuring(cli, args, env: ["IAPCTL_DB": db], afterMicroseconds: delay)
            let state = try Self.snapshot(world, env: ["IAPCTL_DB": db], known: Set(batch.tokens))
            #expect(state == before || state == after, "after SIGKILL at \(delay) µs an --atomic batch is half applied")
        }
    }
}
