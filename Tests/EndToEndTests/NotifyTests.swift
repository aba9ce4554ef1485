import Foundation
import JWSForge
import Testing

@Suite("notify and verify --apply: the one engine, end to end")
struct NotifyTests {
    let token = "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    @Test func subscribedPaysTheOrderAndCreatesTheContract() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: jws + "\n")
        #expect(result.status == 0, "\(result)")
        let items = try result.ndjson()
        #expect(items.count == 1)
        #expect(items[0]["line"] as? Int == 1)
        #expect(items[0]["verdict"] as? String == "applied")
        #expect(items[0]["notification_type"] as? String == "SUBSCRIBED")
        #expect(items[0]["transaction_id"] as? String == "1000")
        #expect((items[0]["changes"] as? [Any])?.count == 2)
        #expect(result.stderr.contains("1 applied"))
        let order = try #require(try world.order(no: token))
        #expect(order["status"] as? String == "paid")
        #expect(order["trade_no"] as? String == "1000")
        let contract = try #require(try world.contract("1000"))
        #expect(contract["user_id"] as? String == "alice")
        #expect(contract["status"] as? String == "active")
    }

    @Test(arguments: [true, false])
    func whicheverOfClientAndAppleComesSecondFindsTheWorkDone(clientFirst: Bool) throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let tx = world.transaction("1000", original: "1000", token: token)
        let clientJWS = try world.signedTransaction(tx)
        let appleJWS = try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0 + 1000, tx: tx)
        let client = { try cli.run(["verify", "--apply", "-o", "json"] + world.trust, stdin: clientJWS) }
        let apple = { try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: appleJWS) }

        let first = try clientFirst ? client() : apple()
        #expect(first.status == 0, "\(first)")
        let afterFirst = try world.tables(maskGeneratedNumbers: [token])
        let second = try clientFirst ? apple() : client()
        #expect(second.status == 0, "\(second)")
        if clientFirst {
            #expect(try second.ndjson().first?["verdict"] as? String == "duplicate")
        } else {
            let apply = try #require(try second.jsonObject()["apply"] as? [String: Any])
            #expect(apply["verdict"] as? String == "duplicate")
        }
        #expect(try world.tables(maskGeneratedNumbers: [token]) == afterFirst)
        #expect(try world.orders().count == 1)
    }

    @Test func renewalsDuplicatesAndALateOlderEvent() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let renewUUID = UUID().uuidString.lowercased()
        let lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token)),
            try world.notification(
                "DID_RENEW", uuid: renewUUID, signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1)),
            try world.notification(
                "DID_RENEW", uuid: renewUUID, signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1)),
            try world.notification(
                "EXPIRED", "VOLUNTARY", signed: t0 + 61 * day, tx: world.transaction("1001", original: "1000", period: 1), autoRenew: 0),
            try world.notification(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: t0 + 40 * day,
                tx: world.transaction("1001", original: "1000", period: 1)),
        ]
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        let verdicts = try result.ndjson().map { $0["verdict"] as? String }
        #expect(verdicts == ["applied", "applied", "duplicate", "applied", "stale"])
        #expect(try world.orders().count == 2)
        let renewal = try #require(try world.order(tradeNo: "1001"))
        #expect(renewal["user_id"] as? String == "alice")
        #expect(renewal["status"] as? String == "paid")
        #expect(try world.contract("1000")?["status"] as? String == "expired")
    }

    @Test func unmatchedIsKeptAndReplayedAfterTheOrderExists() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database()
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let first = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: jws)
        #expect(first.status == 3, "\(first)")
        #expect(try first.ndjson().first?["verdict"] as? String == "unmatched")
        #expect(try world.orders().isEmpty)
        let status = try cli.ok(["db", "status", "-o", "json"]).jsonObject()
        #expect("\(status)".contains("unmatched"))

        try cli.ok(["orders", "create", "--user", "bob", "--product", AppleWorld.product, "--no", token])
        let replay = try cli.run(["notify", "--replay-unmatched", "-o", "ndjson"] + world.trust)
        #expect(replay.status == 0, "\(replay)")
        #expect(try replay.ndjson().first?["verdict"] as? String == "applied")
        #expect(try world.order(no: token)?["status"] as? String == "paid")
        #expect(try world.contract("1000")?["user_id"] as? String == "bob")
        let again = try cli.run(["notify", "--replay-unmatched"] + world.trust)
        #expect(again.status == 0)
        #expect(again.stderr.contains("no unmatched"))
    }

    @Test func forgedAndMalformedInputIsRejectedAndChangesNothing() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let payload = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let before = try world.tables(maskGeneratedNumbers: [token])

        // Another CA with Apple's OIDs, not the trusted root.
        let other = try AppleWorld(cli: cli, pki: TestPKI.make())
        let forged = try other.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: other.transaction("1000", original: "1000", token: token))
        // The payload edited after signing.
        let parts = payload.split(separator: ".").map(String.init)
        var edited = Array(Data(base64URL: parts[1])!)
        if let i = edited.firstIndex(of: UInt8(ascii: "S")) { edited[i] = UInt8(ascii: "T") }
        let tampered = [parts[0], Data(edited).base64URLEncoded(), parts[2]].joined(separator: ".")

        for (input, expected) in [
            (forged, Int32(2)), (tampered, 2), ("garbage", 65), ("a.b.c", 65), ("{\"signedPayload\": 5}", 65),
            ("x'; DROP TABLE orders;--", 65),
        ] {
            let result = try cli.run(["notify"] + world.trust, stdin: input)
            #expect(result.status == expected, "\(input.prefix(40)): \(result)")
            #expect(result.stdout.contains("rejected"))
        }
        // Wrong app, wrong environment.
        let wrongBundle = try cli.run(
            ["notify", "--root-ca", world.rootPath, "--bundle-id", "com.other.app", "--environment", "Sandbox"], stdin: payload)
        #expect(wrongBundle.status == 2)
        let wrongEnv = try cli.run(
            ["notify", "--root-ca", world.rootPath, "--bundle-id", AppleWorld.bundleId, "--app-apple-id", "1234567890"], stdin: payload)
        #expect(wrongEnv.status == 2)
        // Each error is printed once: the table shows it, stderr does not repeat it.
        #expect(wrongEnv.stdout.contains("--environment Sandbox"))
        #expect(!wrongEnv.stderr.contains("--environment Sandbox"))
        // Invalid UTF-8 and a huge line.
        let bytes = try cli.write("bad.bin", "")
        try Data([0xff, 0xfe, 0x2e, 0x00, 0x0a]).write(to: URL(fileURLWithPath: bytes))
        #expect(try cli.run(["notify", bytes] + world.trust).status == 65)
        let huge = String(repeating: "A", count: 3 << 20)
        let hugeResult = try cli.run(["notify"] + world.trust, stdin: huge + "\n")
        #expect(hugeResult.status == 65)
        #expect(hugeResult.stdout.contains("longer than"))

        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
    }

    @Test func aBatchWithABadLineAppliesTheRestAndExits1() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token)),
            "not a jws",
            "{\"signedPayload\": \""
                + (try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1)))
                + "\"}",
        ]
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 1, "\(result)")
        let items = try result.ndjson()
        #expect(items.map { $0["verdict"] as? String } == ["applied", "rejected", "applied"])
        #expect(items[1]["line"] as? Int == 2)
        #expect(items[1]["error"] as? String != nil)
        #expect(result.stderr.contains("line 2"))
        #expect(try world.orders().count == 2)
    }

    @Test func atomicBatchIsAllOrNothing() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let good = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let before = try world.tables(maskGeneratedNumbers: [token])
        let result = try cli.run(["notify", "--atomic"] + world.trust, stdin: good + "\nnot a jws\n")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("nothing was applied"))
        // The summary counts every line as what became of it (its parts add up to the items).
        #expect(result.stderr.contains("notify: 2 items: 2 not-applied; --atomic: nothing was applied"), "\(result.stderr)")
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
        let ledger = try cli.ok(["db", "status", "-o", "json"]).stdout
        #expect(try #require(try JSONSerialization.jsonObject(with: Data(ledger.utf8)) as? [String: Any]).description.contains("ledger"))

        let ok = try cli.run(["notify", "--atomic"] + world.trust, stdin: good + "\n")
        #expect(ok.status == 0, "\(ok)")
        #expect(try world.order(no: token)?["status"] as? String == "paid")
    }

    @Test func dryRunShowsTheChangesAndWritesNothing() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let before = try world.tables(maskGeneratedNumbers: [token])
        let result = try cli.run(["notify", "--dry-run", "-o", "ndjson"] + world.trust, stdin: jws)
        #expect(result.status == 0, "\(result)")
        let item = try #require(try result.ndjson().first)
        #expect(item["verdict"] as? String == "applied")
        #expect("\(item["changes"] ?? "")".contains("paid"))
        #expect(result.stderr.contains("dry run"))
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
        // And verify --apply --dry-run likewise.
        let client = try cli.run(
            ["verify", "--apply", "--dry-run", "-o", "json"] + world.trust,
            stdin: try world.signedTransaction(world.transaction("1000", original: "1000", token: token)))
        #expect(client.status == 0, "\(client)")
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
        let apply = try #require(try client.jsonObject()["apply"] as? [String: Any], "\(client.stdout)")
        #expect(apply["verdict"] as? String == "applied" && apply["dry_run"] as? Bool == true, "\(apply)")
        // Its table line says what would be done; the run that writes says what it did.
        let signed = try world.signedTransaction(world.transaction("1000", original: "1000", token: token))
        let table = try cli.run(["verify", "--apply", "--dry-run"] + world.trust, stdin: signed)
        #expect(table.stdout.contains("apply (dry run): would apply: "), "\(table.stdout)")
        #expect(!table.stdout.contains(": applied: "), "\(table.stdout)")
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
        let done = try cli.run(["verify", "--apply"] + world.trust, stdin: signed)
        #expect(done.stdout.contains("  apply: applied: "), "\(done.stdout)")
        #expect(try world.order(no: token)?["status"] as? String == "paid", "what it said it applied was written")
    }

    @Test func notificationHistoryResponseReplaysAsIs() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        let a = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let b = try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1))
        let history = """
            {
              "hasMore": false,
              "paginationToken": "x",
              "notificationHistory": [
                {"signedPayload": "\(a)", "sendAttemptResult": "SUCCESS"},
                {"signedPayload": "\(b)", "sendAttemptResult": "TIMED_OUT"}
              ]
            }
            """
        let file = try cli.write("history.json", history)
        let result = try cli.run(["notify", file, "-o", "ndjson"] + world.trust)
        #expect(result.status == 0, "\(result)")
        #expect(try result.ndjson().map { $0["verdict"] as? String } == ["applied", "applied"])
        #expect(try world.orders().count == 2)
    }

    @Test func twoProcessesReplayingOneBatchAtOnceMakeOneOrderPerTransaction() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        var lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        ]
        // Renewals up to 20 periods after t0 (later ones would be signed in the future: refused).
        for n in 1...20 {
            lines.append(
                try world.notification(
                    "DID_RENEW", signed: t0 + Int64(n) * 30 * day, tx: world.transaction("\(1000 + n)", original: "1000", period: Int64(n)))
            )
        }
        let batch = lines.joined(separator: "\n")
        let args = ["notify", "-q"] + world.trust
        let runner = UncheckedBox(cli)
        let results = try [0, 1].concurrentMap { _ in try runner.value.run(args, stdin: batch) }
        for r in results { #expect(r.status == 0, "\(r)") }
        let orders = try world.orders()
        #expect(orders.count == 21)
        #expect(Set(orders.compactMap { $0["trade_no"] as? String }).count == 21)
    }
}

extension Array {
    /// Runs `transform` on every element at once, on separate threads.
    func concurrentMap<T>(_ transform: @escaping @Sendable (Element) throws -> T) throws -> [T] where Element: Sendable, T: Sendable {
        let box = ResultBox<T>(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in
            box.set(i, Result { try transform(self[i]) })
        }
        return try box.values.map { try $0!.get() }
    }
}

/// Hands a non-Sendable value to threads that only call its thread-safe methods.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

final class ResultBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var values: [Result<T, Error>?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: Result<T, Error>) {
        lock.lock()
        values[i] = value
        lock.unlock()
    }
}

extension Data {
    init?(base64URL: String) {
        var s = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        self.init(base64Encoded: s)
    }

    func base64URLEncoded() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// One owner per contract, through the binary: a transaction naming another user's order while
/// the subscription is someone else's is refused as `conflict` (exit 4), changes nothing, and is kept.
@Suite("Engine ownership, end to end")
struct OwnershipE2ETests {
    @Test func aTransactionNamingAnotherUsersOrderIsAConflict() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let alice = "a1000000-0000-4000-8000-000000000001"
        let bob = "b2000000-0000-4000-8000-000000000001"
        try world.database(orders: [(alice, "alice"), (bob, "bob")])
        let buy = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: world.transaction("1000", original: "1000", token: alice))
        try cli.ok(["notify", "-q"] + world.trust, stdin: buy)
        let before = try world.tables(maskGeneratedNumbers: [alice, bob])
        let hijack = try world.signedTransaction(world.transaction("1001", original: "1000", token: bob, period: 1))
        let refused = try cli.run(["verify", "--apply", "-o", "ndjson"] + world.trust, stdin: hijack)
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.stdout.contains("conflict"), "\(refused)")
        #expect(try world.tables(maskGeneratedNumbers: [alice, bob]) == before)
        #expect(try world.order(no: bob)?["status"] as? String == "pending")
        let show = try cli.ok(["orders", "show", "1000", "-o", "json"]).stdout
        #expect(show.contains("conflict"), "kept in the ledger")
    }
}
