import Foundation
import JWSForge
import Testing

/// `iapctl apple notifications sync` end to end: the built binary against the loopback App Store
/// Server API stand-in, items signed by the test's own CA, the checkpoint in the database.
@Suite("apple notifications sync: Notification History from a checkpoint, end to end")
struct AppleNotificationSyncTests {
    let token = "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"
    let path = "/inApps/v1/notifications/history"
    /// NotificationSync's overlap and lag (10 minutes, 1 minute).
    let overlap: Int64 = 600_000
    let lag: Int64 = 60_000
    let now = Int64(Date().timeIntervalSince1970 * 1000)

    /// A CLI, a world with alice's pending order, and the server.
    func setUp() throws -> (CLI, AppleWorld, AppleAPIServer) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        try world.database(orders: [(token, "alice")])
        return (cli, world, server)
    }

    /// alice's purchase and renewals of subscription 1000, signed `hoursAgo` hours ago each.
    func lifecycle(_ world: AppleWorld, hoursAgo: [Int64]) throws -> [String] {
        try hoursAgo.enumerated().map { n, hours in
            let period = Int64(n)
            return try world.notification(
                period == 0 ? "SUBSCRIBED" : "DID_RENEW", period == 0 ? "INITIAL_BUY" : nil, uuid: "sync-\(n)",
                signed: now - hours * 3_600_000,
                tx: world.transaction("100\(n)", original: "1000", token: period == 0 ? token : nil, period: period))
        }
    }

    /// History pages: the first without a token, page i with `p<i>`; a page given as a response is served as is.
    func plant(_ server: AppleAPIServer, _ pages: [AppleAPIServer.Response]) throws {
        var routes: [(env: String, method: String, path: String, query: [String: Any], responses: [AppleAPIServer.Response])] = []
        for index in pages.indices.reversed() {
            routes.append(("sandbox", "POST", path, index == 0 ? [:] : ["paginationToken": "p\(index + 1)"], [pages[index]]))
        }
        try server.routes(routes)
    }

    func page(_ items: [String], more: Int? = nil) -> AppleAPIServer.Response {
        var json: [String: Any] = [
            "hasMore": more != nil, "notificationHistory": items.map { ["signedPayload": $0, "sendAttempts": [] as [Any]] },
        ]
        if let more { json["paginationToken"] = "p\(more)" }
        return .ok(json)
    }

    func sync(_ cli: CLI, _ world: AppleWorld, _ extra: [String] = []) throws -> CLI.Result {
        try cli.run(["apple", "notifications", "sync", "-o", "ndjson", "--environment", "sandbox", "--root-ca", world.rootPath] + extra)
    }

    /// The history requests' (startDate, endDate, paginationToken), in order.
    func requests(_ server: AppleAPIServer) throws -> [(start: Int64, end: Int64, token: String?)] {
        try server.requests().filter { $0["path"] as? String == path }.map {
            let body = try #require($0["body"] as? [String: Any])
            let token = ($0["query"] as? [String: [String]])?["paginationToken"]?.first
            return (try #require(body["startDate"] as? Int64), try #require(body["endDate"] as? Int64), token)
        }
    }

    func ledger(_ cli: CLI) throws -> Int { try #require(try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int) }

    func status(_ cli: CLI) throws -> [[String: Any]] {
        try cli.ok(["apple", "notifications", "sync", "--status", "--environment", "sandbox", "-o", "json"]).jsonArray()
    }

    @Test func theFirstRunAppliesEveryPageAndTheNextStartsAtTheCheckpointApplyingNothingTwice() throws {
        let (cli, world, server) = try setUp()
        let items = try lifecycle(world, hoursAgo: [5, 4, 3])
        try plant(server, [page([items[0]], more: 2), page([items[1]])])
        #expect(try status(cli).isEmpty)

        let first = try sync(cli, world, ["--since", "1d"])
        #expect(first.status == 0, "\(first)")
        #expect(try first.ndjson().map { $0["verdict"] as? String } == ["applied", "applied"])
        #expect(try first.ndjson().map { $0["line"] as? Int } == [1, 2])
        #expect(first.stderr.contains("2 applied") && first.stderr.contains("2 pages"), "\(first)")
        let firstRequests = try requests(server)
        #expect(firstRequests.map(\.token) == [nil, "p2"])
        let end = firstRequests[0].end
        #expect(end - firstRequests[0].start == 86_400_000 - lag)
        #expect(abs(end - (now - lag)) < 60_000)
        let saved = try status(cli)
        #expect(saved.first?["checkpoint"] as? String == "notification-history:Sandbox")
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-03-02T00:00:00Z")
        #expect(try ledger(cli) == 2)

        // Apple lists the last one again (the overlap) and a new renewal.
        try plant(server, [page([items[1], items[2]])])
        let second = try sync(cli, world)
        #expect(second.status == 0, "\(second)")
        #expect(try second.ndjson().map { $0["verdict"] as? String } == ["duplicate", "applied"])
        let secondRequest = try #require(try requests(server).last)
        #expect(secondRequest.start == end - overlap)
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-04-01T00:00:00Z")
        // The one read again is neither applied nor stored twice.
        #expect(try ledger(cli) == 3)
    }

    @Test func aRunStoppedByAFailingSecondPageResumesWithoutAGap() throws {
        let (cli, world, server) = try setUp()
        let items = try lifecycle(world, hoursAgo: [5, 4])
        try plant(server, [page([items[0]], more: 2), .apple(500, "apiException")])
        let stopped = try sync(cli, world, ["--since", "1d"])
        #expect(stopped.status == 69, "\(stopped)")
        // What was committed is reported before the error.
        #expect(try stopped.ndjson().map { $0["verdict"] as? String } == ["applied"])
        #expect(stopped.stderr.contains("stopped after 1 item"), "\(stopped)")
        #expect(try world.order(no: token)?["status"] as? String == "paid")
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-01-31T00:00:00Z")

        try plant(server, [page([items[0]], more: 2), page([items[1]])])
        let resumed = try sync(cli, world)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try resumed.ndjson().map { $0["verdict"] as? String } == ["duplicate", "applied"])
        // It starts where page 1 ended (its newest notification, 5 hours ago), less the overlap.
        let start = try #require(try requests(server).filter { $0.token == nil }.last?.start)
        #expect(start == now - 5 * 3_600_000 - overlap)
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-03-02T00:00:00Z")
        #expect(try ledger(cli) == 2)
    }

    @Test func aNotificationThatDoesNotVerifyIsKeptReportedAndExits2() throws {
        let (cli, world, server) = try setUp()
        let items = try lifecycle(world, hoursAgo: [5])
        let stranger = try AppleWorld(cli: cli)
        let forged = try stranger.notification(
            "DID_RENEW", uuid: "forged", signed: now - 3_600_000, tx: stranger.transaction("1009", original: "1000", period: 1))
        try plant(server, [page([items[0], forged])])
        let result = try sync(cli, world, ["--since", "1d"])
        #expect(result.status == 2, "\(result)")
        #expect(try result.ndjson().map { $0["verdict"] as? String } == ["applied", "rejected"])
        #expect(result.stderr.contains("error: line 2:"), "\(result)")
        #expect(result.stderr.contains("read this window again with --since"), "\(result)")
        #expect(try ledger(cli) == 2)
        // Read again (the overlap): the refused bytes are kept once.
        _ = try sync(cli, world)
        #expect(try ledger(cli) == 2)
    }

    @Test func aDryRunShowsWhatWouldBeAppliedAndMovesNothing() throws {
        let (cli, world, server) = try setUp()
        let items = try lifecycle(world, hoursAgo: [5, 4])
        try plant(server, [page([items[0]], more: 2), page([items[1]])])
        let dry = try sync(cli, world, ["--since", "1d", "--dry-run"])
        #expect(dry.status == 0, "\(dry)")
        let rows = try dry.ndjson()
        #expect(rows.map { $0["verdict"] as? String } == ["applied", "applied"])
        #expect(rows.allSatisfy { $0["dry_run"] as? Bool == true })
        #expect(dry.stderr.contains("dry run: nothing was written"), "\(dry)")
        // Its summary says what would be done, never `applied`: nothing was.
        #expect(dry.stderr.contains("apple notifications sync: 2 items: 2 would apply;"), "\(dry.stderr)")
        #expect(!dry.stderr.contains(" applied"), "\(dry.stderr)")
        #expect(try status(cli).isEmpty)
        #expect(try ledger(cli) == 0)
        #expect(try world.order(no: token)?["status"] as? String == "pending")

        let table = try cli.run(
            [
                "apple", "notifications", "sync", "--since", "1d", "--dry-run", "-o", "table", "--environment", "sandbox",
                "--root-ca", world.rootPath,
            ])
        #expect(table.stdout.contains("would apply"), "\(table)")
        let csv = try sync(cli, world, ["--since", "1d", "--dry-run", "-o", "csv"])
        #expect(csv.lines.first?.hasPrefix("line,verdict,notification_uuid,") == true, "\(csv)")
        #expect(csv.lines.count == 3)
        #expect(try status(cli).isEmpty)
    }

    @Test func statusShowsTheCheckpointResetDeletesItAndAFirstRunWithoutSinceReadsOneDay() throws {
        let (cli, world, server) = try setUp()
        try plant(server, [page([])])
        let first = try sync(cli, world)
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("no checkpoint notification-history:Sandbox yet"), "\(first)")
        let request = try #require(try requests(server).first)
        #expect(request.end - request.start == 86_400_000 - lag)
        let saved = try #require(try status(cli).first)
        #expect(saved["next_start"] != nil && saved["through"] != nil)
        let table = try cli.ok(["apple", "notifications", "sync", "--status", "--environment", "sandbox"])
        #expect(table.stdout.contains("notification-history:Sandbox"))
        // A local look-up needs none of the Apple settings, not even the bundle id.
        var bare = cli.environment
        for name in ["IAPCTL_APPLE_KEY_FILE", "IAPCTL_APPLE_KEY_ID", "IAPCTL_APPLE_ISSUER_ID", "IAPCTL_BUNDLE_ID"] {
            bare[name] = nil
        }
        let kept = cli.environment
        cli.environment = bare
        let offline = try cli.run(["apple", "notifications", "sync", "--status", "--environment", "sandbox"])
        cli.environment = kept
        #expect(offline.status == 0, "\(offline)")
        #expect(offline.stdout.contains("notification-history:Sandbox"))

        let reset = try cli.run(["apple", "notifications", "sync", "--reset", "--environment", "sandbox"])
        #expect(reset.status == 0, "\(reset)")
        #expect(reset.stderr.contains("checkpoint notification-history:Sandbox deleted"), "\(reset)")
        #expect(try status(cli).isEmpty)
        let both = try cli.run(["apple", "notifications", "sync", "--reset", "--since", "1d"])
        #expect(both.status == 64, "\(both)")
        let old = try sync(cli, world, ["--since", "181d"])
        #expect(old.status == 64, "\(old)")
        #expect(old.stderr.contains("180 days"))
    }
}

extension AppleNotificationSyncTests {
    @Test func theGuideLinesRunAsShown() throws {
        let (cli, _, server) = try setUp()
        cli.environment["IAPCTL_APP_APPLE_ID"] = "1234567890"
        try server.routes([("production", "POST", path, [:], [page([])])])
        func line(_ text: String) -> [String] {
            #expect(Guide.appleSetup.contains(text), "docs/apple-setup.md no longer shows: \(text)")
            return text.split(separator: " ").dropFirst().map(String.init)
        }
        let first = try cli.run(line("iapctl apple notifications sync --since 7d --environment production"))
        #expect(first.status == 0, "\(first)")
        let request = try #require(try requests(server).first)
        #expect(request.end - request.start == 7 * 86_400_000 - lag)
        let status = try cli.ok(line("iapctl apple notifications sync --status"))
        #expect(status.stdout.contains("notification-history:Production"), "\(status)")
        // The crontab line, its settings from a config file: nothing new, nothing printed.
        let cron =
            "*/5 * * * * iapctl apple notifications sync -q -o ndjson --config /etc/iapctl/iapctl.json >> /var/log/iapctl-sync.ndjson"
        #expect(Guide.appleSetup.contains(cron), "docs/apple-setup.md no longer shows: \(cron)")
        cli.environment["IAPCTL_APP_APPLE_ID"] = nil
        let config = try cli.write("iapctl.json", #"{"app-apple-id": "1234567890"}"#)
        let words = cron.split(separator: " ").map(String.init)
        let args = words[6..<words.firstIndex(of: ">>")!].map { $0 == "/etc/iapctl/iapctl.json" ? config : $0 }
        let quiet = try cli.run(args)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet)")
        #expect(try requests(server).last?.start == request.end - overlap)
    }
}
