import Foundation
import JWSForge
import Testing

/// Walks of Apple's paginated answers stay bounded whatever Apple answers: the loopback stand-in
/// serves hostile answers (a pagination token or revision that repeats, `hasMore` for ever, slow
/// pages, answers of megabytes) and each run stops quickly with a clear error.
@Suite("apple: paginated walks bounded under hostile answers, end to end")
struct AppleBoundsTests {
    let sync = AppleNotificationSyncTests()
    let reconcile = AppleReconcileTests()

    /// A notification-history page that always says hasMore, with a new token each time (`s0`, `s1`, …).
    func endless(delayMs: Int? = nil) -> AppleAPIServer.Response {
        AppleAPIServer.Response(
            status: 200, json: ["hasMore": true, "notificationHistory": [] as [Any]], delayMs: delayMs,
            sequence: "paginationToken")
    }

    @Test func aRepeatedPaginationTokenStopsSyncWithExit65BeforeThatPageAndKeepsTheLastCheckpoint() throws {
        let (cli, world, server) = try sync.setUp()
        let items = try sync.lifecycle(world, hoursAgo: [5, 4])
        // Page 2 names itself as the next page: p2 for ever.
        try sync.plant(server, [sync.page([items[0]], more: 2), sync.page([items[1]], more: 2)])
        let started = Date()
        let result = try sync.sync(cli, world, ["--since", "1d"])
        #expect(result.status == 65, "\(result)")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(result.stderr.contains("page 2 repeats the paginationToken 'p2' of page 1"), "\(result)")
        #expect(try sync.requests(server).map(\.token) == [nil, "p2"])
        // Page 1 is committed with its checkpoint; page 2 is not applied.
        #expect(try result.ndjson().map { $0["verdict"] as? String } == ["applied"])
        let through = try #require(try sync.status(cli).first?["through"] as? String)
        #expect(result.stderr.contains("checkpoint notification-history:Sandbox now \(through)"), "\(result)")
        #expect(try sync.ledger(cli) == 1)
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-01-31T00:00:00Z")
    }

    @Test func hasMoreForEverStopsAtThePageCap() throws {
        let (cli, world, server) = try sync.setUp()
        try server.routes([("sandbox", "POST", sync.path, [:], [endless()])])
        let result = try sync.sync(cli, world, ["--since", "1d", "--max-pages", "3"])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("more than 3 pages (the page cap); stopped after page 3"), "\(result)")
        #expect(try sync.requests(server).map(\.token) == [nil, "s0", "s1"])
        // Every page read was committed: the checkpoint is where they left it.
        #expect(try sync.status(cli).count == 1)

        // The same cap holds for `apple notifications history` (its own walk).
        let history = try cli.run([
            "apple", "notifications", "history", "--since", "1d", "--environment", "sandbox", "--max-pages", "2",
        ])
        #expect(history.status == 65, "\(history)")
        #expect(history.stderr.contains("more than 2 pages"), "\(history)")
    }

    @Test func theWalkDeadlineDoesNotStartAfreshWithEachAnswer() throws {
        let (cli, world, server) = try sync.setUp()
        // Each answer comes well within --deadline (60 s), but they never end.
        try server.routes([("sandbox", "POST", sync.path, [:], [endless(delayMs: 300)])])
        let started = Date()
        let result = try sync.sync(cli, world, ["--since", "1d", "--walk-deadline", "1"])
        #expect(result.status == 69, "\(result)")
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(result.stderr.contains("the walk took longer than its total deadline of 1.0 s"), "\(result)")
        #expect(result.stderr.contains("--walk-deadline"), "\(result)")
        #expect((2...5).contains(try sync.requests(server).count))
    }

    @Test(arguments: [false, true])
    func anAnswerLargerThanTheCapIsRefused(chunked: Bool) throws {
        let (cli, world, server) = try sync.setUp()
        let huge = AppleAPIServer.Response(
            status: 200, json: ["hasMore": false, "notificationHistory": [] as [Any]], padBytes: 5 << 20, chunked: chunked)
        try server.routes([("sandbox", "POST", sync.path, [:], [huge])])
        let result = try sync.sync(cli, world, ["--since", "1d"])
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("the answer is larger than 4 MiB"), "\(result)")
        #expect(try sync.status(cli).isEmpty)
    }

    @Test func manyPagesWhoseSumPassesTheAnswerCapAreFineOnePageAtATime() throws {
        let (cli, world, server) = try sync.setUp()
        // Six pages of 3 MiB each: together far past the 4 MiB cap of one answer.
        var routes: [(env: String, method: String, path: String, query: [String: Any], responses: [AppleAPIServer.Response])] = []
        for index in (0..<6).reversed() {
            var json: [String: Any] = ["hasMore": index < 5, "notificationHistory": [] as [Any]]
            if index < 5 { json["paginationToken"] = "p\(index + 2)" }
            let response = AppleAPIServer.Response(status: 200, json: json, padBytes: 3 << 20)
            routes.append(("sandbox", "POST", sync.path, index == 0 ? [:] : ["paginationToken": "p\(index + 1)"], [response]))
        }
        try server.routes(routes)
        let result = try sync.sync(cli, world, ["--since", "1d"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("6 pages"), "\(result)")
    }

    @Test func aRepeatedRevisionStopsReconcileWithExit65AndWritesNothing() throws {
        let (cli, world, server) = try reconcile.setUp()
        try reconcile.bought(cli, world, ["1000"])
        let tx = try reconcile.signed(
            world, world.transaction("1000", original: "1000", token: reconcile.token("1000")), at: AppleWorld.t0 + AppleWorld.day)
        let renewal = try reconcile.renewal(world, "1000", autoRenew: 0, signed: AppleWorld.t0 + AppleWorld.day)
        let looping: [String: Any] = [
            "revision": "r1", "hasMore": true, "bundleId": AppleWorld.bundleId, "environment": "Sandbox",
            "signedTransactions": [tx],
        ]
        try server.routes([
            reconcile.status("1000", 1, latest: tx, renewal: renewal),
            ("sandbox", "GET", "/inApps/v2/history/1000", [:], [.ok(looping)]),
        ])
        let ledger = try reconcile.ledgerCount(cli)
        let tables = try world.tables()
        let result = try cli.run(["apple", "reconcile", "--contract", "1000", "--apply"] + reconcile.sandbox(world))
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("page 2 repeats the revision 'r1' of page 1"), "\(result)")
        #expect(try server.requests().filter { ($0["path"] as? String)?.hasPrefix("/inApps/v2/history") == true }.count == 2)
        #expect(try reconcile.ledgerCount(cli) == ledger)
        #expect(try world.tables() == tables)

        // `apple transactions history` walks the same way.
        let history = try cli.run(["apple", "transactions", "history", "1000", "--environment", "sandbox"])
        #expect(history.status == 65, "\(history)")
        #expect(history.stderr.contains("repeats the revision 'r1'"), "\(history)")
    }
}
