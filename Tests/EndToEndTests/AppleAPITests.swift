import AppStoreAPI
import Foundation
import JWSForge
import Testing

/// `iapctl apple …` end to end: the built binary against the loopback App Store Server API stand-in
/// (`AppleAPIServer`), which checks every JWT as Apple does.
@Suite("apple: the App Store Server API, end to end")
struct AppleAPITests {
    let token = "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    /// A CLI, a world whose items the server hands out, and the server.
    func setUp(bundleId: String = AppleWorld.bundleId) throws -> (CLI, AppleWorld, AppleAPIServer) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli, bundleId: bundleId)
        for (name, value) in server.environment { cli.environment[name] = value }
        return (cli, world, server)
    }

    /// alice's subscription 1000 with its purchase applied and its first renewal (the second notification,
    /// returned) never received.
    func plantGap(_ cli: CLI, _ world: AppleWorld) throws -> (first: String, missed: String) {
        try world.database(orders: [(token, "alice")])
        let first = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: token))
        let missed = try world.notification(
            "DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1))
        try cli.ok(["notify"] + world.trust, stdin: first)
        return (first, missed)
    }

    /// Options for decoded output of the world's Sandbox items.
    func sandbox(_ world: AppleWorld) -> [String] { ["--environment", "sandbox", "--root-ca", world.rootPath] }

    @Test func lookupPrintsTheSignedTransactionsAndFeedsRestore() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000", token: token))
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [jws]])])
        ])
        let lookup = try cli.ok(["apple", "lookup", "MK5TTTVWJH"] + sandbox(world))
        #expect(lookup.lines == [jws])
        let request = try #require(try server.requests().first)
        #expect(request["env"] as? String == "sandbox")
        #expect(request["method"] as? String == "GET")
        #expect(request["tokenProblem"] is NSNull)
        let claims = try #require(request["claims"] as? [String: Any])
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == AppleWorld.bundleId)
        #expect(claims["iss"] as? String == AppleAPIServer.issuerId)
        let iat = try #require(claims["iat"] as? Int), exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 300)

        let restore = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + world.trust, stdin: lookup.stdout)
        #expect(restore.status == 0, "\(restore)")
        #expect(try restore.ndjson().first?["verdict"] as? String == "restorable")

        let decoded = try cli.ok(["apple", "lookup", "MK5TTTVWJH", "-o", "json"] + sandbox(world)).jsonArray()
        #expect(decoded.first?["transaction_id"] as? String == "1000")
        #expect(decoded.first?["app_account_token"] as? String == token)
    }

    /// On a terminal `apple lookup` shows the decoded purchase, not screens of base64; a pipe
    /// still gets one JWS per line.
    @Test(.enabled(if: Examples.hasPython)) func lookupOnATerminalShowsThePurchase() throws {
        let (cli, world, server) = try setUp()
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000", token: token))
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [jws]])])
        ])
        for columns in [80, 120] {
            let r = try Examples.onTerminal(
                ["apple", "lookup", "MK5TTTVWJH"] + sandbox(world), input: "", columns: columns,
                environment: cli.environment)
            #expect(r.status == 0, "\(r.screen)")
            #expect(r.screen.contains("TRANSACTION") && r.screen.contains("1000"), "\(r.screen)")
            #expect(r.screen.contains(AppleWorld.product) || r.screen.contains("…"), "\(r.screen)")
            #expect(!r.screen.contains(String(jws.prefix(40))), "\(columns): base64 on screen")
        }
        #expect(try cli.ok(["apple", "lookup", "MK5TTTVWJH"] + sandbox(world)).lines == [jws])
    }

    @Test func anInvalidOrderIdIsNotFound() throws {
        let (cli, world, server) = try setUp()
        try server.routes([("sandbox", "GET", "/inApps/v1/lookup/NOPE", [:], [.ok(["status": 1])])])
        let result = try cli.run(["apple", "lookup", "NOPE"] + sandbox(world))
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("order ID NOPE is invalid"))
        #expect(result.stdout.isEmpty)
    }

    @Test func transactionHistoryFollowsRevisionsAndReusesTheToken() throws {
        let (cli, world, server) = try setUp()
        let a = try world.signedTransaction(world.transaction("1000", original: "1000"))
        let b = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        let c = try world.signedTransaction(world.transaction("1002", original: "1000", period: 2))
        let page = { (items: [String], more: Bool, revision: String) -> [String: Any] in
            [
                "revision": revision, "hasMore": more, "bundleId": AppleWorld.bundleId, "environment": "Sandbox",
                "signedTransactions": items,
            ]
        }
        try server.routes([
            ("sandbox", "GET", "/inApps/v2/history/1000", ["revision": "r1"], [.ok(page([c], false, "r2"))]),
            ("sandbox", "GET", "/inApps/v2/history/1000", [:], [.ok(page([a, b], true, "r1"))]),
        ])
        let result = try cli.ok(
            ["apple", "transactions", "history", "1000", "--product", "p1", "--product", "p2", "--revoked"] + sandbox(world))
        #expect(result.lines == [a, b, c])
        let requests = try server.requests()
        #expect(requests.count == 2)
        let first = try #require(requests[0]["query"] as? [String: [String]])
        #expect(first["productId"] == ["p1", "p2"])
        #expect(first["sort"] == ["ASCENDING"])
        #expect(first["revoked"] == ["true"])
        #expect(first["revision"] == nil)
        #expect((requests[1]["query"] as? [String: [String]])?["revision"] == ["r1"])
        #expect(requests[0]["token"] as? String == requests[1]["token"] as? String)

        let table = try cli.ok(["apple", "transactions", "history", "1000", "-o", "csv"] + sandbox(world))
        #expect(table.lines.count == 4)
        #expect(table.lines[3].hasPrefix("1002,1000,"))
    }

    @Test func notificationHistoryPipedIntoNotifyFillsThePlantedGap() throws {
        let (cli, world, server) = try setUp()
        let (first, missed) = try plantGap(cli, world)
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-01-31T00:00:00Z")
        try server.routes([
            (
                "sandbox", "POST", "/inApps/v1/notifications/history", ["paginationToken": "p2"],
                [
                    .ok([
                        "hasMore": false,
                        "notificationHistory": [
                            ["signedPayload": missed, "sendAttempts": [["attemptDate": t0, "sendAttemptResult": "NO_RESPONSE"]]]
                        ],
                    ])
                ]
            ),
            (
                "sandbox", "POST", "/inApps/v1/notifications/history", [:],
                [
                    .ok([
                        "hasMore": true, "paginationToken": "p2",
                        "notificationHistory": [
                            ["signedPayload": first, "sendAttempts": [["attemptDate": t0, "sendAttemptResult": "SUCCESS"]]]
                        ],
                    ])
                ]
            ),
        ])
        let history = try cli.ok(
            ["apple", "notifications", "history", "--since", "2d", "--only-failures", "--environment", "sandbox"])
        #expect(history.lines == [first, missed])
        let requests = try server.requests()
        #expect(requests.count == 2)
        let body = try #require(requests[0]["body"] as? [String: Any])
        let start = try #require(body["startDate"] as? Int64), end = try #require(body["endDate"] as? Int64)
        #expect(end - start >= 2 * day && end - start < 2 * day + 60_000)
        #expect(body["onlyFailures"] as? Bool == true)
        #expect(requests[0]["contentType"] as? String == "application/json")
        #expect((requests[1]["query"] as? [String: [String]])?["paginationToken"] == ["p2"])

        let notify = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: history.stdout)
        #expect(notify.status == 0, "\(notify)")
        #expect(try notify.ndjson().map { $0["verdict"] as? String } == ["duplicate", "applied"])
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-03-02T00:00:00Z")
    }

    @Test func notificationHistoryApplyReplaysOnlyTheGapAndPrintsTheReport() throws {
        let (cli, world, server) = try setUp()
        let (first, missed) = try plantGap(cli, world)
        let items: [[String: Any]] = [first, missed].map { ["signedPayload": $0, "sendAttempts": [] as [Any]] }
        try server.routes([
            ("sandbox", "POST", "/inApps/v1/notifications/history", [:], [.ok(["hasMore": false, "notificationHistory": items])])
        ])
        let report = try cli.run(
            ["apple", "notifications", "history", "--since", "7d", "--gap-report", "-o", "ndjson"] + sandbox(world))
        #expect(report.status == 1, "\(report)")
        #expect(try report.ndjson().map { $0["verdict"] as? String } == ["missing"])
        let table = try cli.run(["apple", "notifications", "history", "--since", "7d", "--gap-report", "-o", "table"] + sandbox(world))
        #expect(table.stdout.contains("DID_RENEW") && table.stdout.contains("1001"), "\(table)")
        let apply = try cli.run(["apple", "notifications", "history", "--since", "7d", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(apply.status == 0, "\(apply)")
        #expect(try apply.ndjson().map { $0["verdict"] as? String } == ["applied"])
        #expect(apply.stderr.contains("1 applied"))
        #expect(try world.contract("1000")?["expires_date"] as? String == "2025-03-02T00:00:00Z")
        let again = try cli.run(["apple", "notifications", "history", "--since", "7d", "--gap-report"] + sandbox(world))
        #expect(again.status == 0, "\(again)")
    }

    @Test func subscriptionStatusesDecodedAfterVerification() throws {
        let (cli, world, server) = try setUp()
        let tx = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        let renewal = try world.pki.sign(payload: world.renewal("1000", autoRenew: 0, signed: t0 + 30 * day).json)
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v1/subscriptions/1000", [:],
                [
                    .ok([
                        "environment": "Sandbox", "bundleId": AppleWorld.bundleId,
                        "data": [
                            [
                                "subscriptionGroupIdentifier": "g1",
                                "lastTransactions": [
                                    [
                                        "status": 1, "originalTransactionId": "1000", "signedTransactionInfo": tx,
                                        "signedRenewalInfo": renewal,
                                    ]
                                ],
                            ]
                        ],
                    ])
                ]
            )
        ])
        let raw = try cli.ok(["apple", "subscriptions", "status", "1000", "--status", "1", "--status", "2"] + sandbox(world))
        #expect(raw.lines == [tx])
        #expect((try server.requests()[0]["query"] as? [String: [String]])?["status"] == ["1", "2"])
        let decoded = try cli.ok(["apple", "subscriptions", "status", "1000", "-o", "json"] + sandbox(world)).jsonArray()
        #expect(decoded.first?["status_name"] as? String == "active")
        #expect(decoded.first?["auto_renew"] as? Bool == false)
        #expect(decoded.first?["transaction_id"] as? String == "1001")
    }

    @Test func anItemThatDoesNotVerifyIsAnErrorNeverPrinted() throws {
        let (cli, world, server) = try setUp()
        let stranger = try PayloadBuilder(pki: TestPKI.make(), bundleId: AppleWorld.bundleId, environment: "Sandbox")
        let forged = try stranger.pki.sign(payload: world.transaction("1000", original: "1000").json)
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/transactions/1000", [:], [.ok(["signedTransactionInfo": forged])])
        ])
        let result = try cli.run(["apple", "transactions", "get", "1000", "-o", "table"] + sandbox(world))
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("does not verify"))
    }

    @Test func autoTriesSandboxWhenProductionDoesNotKnowTheTransaction() throws {
        let (cli, world, server) = try setUp()
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000"))
        try server.routes([
            ("production", "GET", "/inApps/v1/transactions/1000", [:], [.apple(404, "transactionIdNotFoundError")]),
            ("sandbox", "GET", "/inApps/v1/transactions/1000", [:], [.ok(["signedTransactionInfo": jws])]),
        ])
        let result = try cli.ok(["apple", "transactions", "get", "1000", "-o", "ndjson", "--root-ca", world.rootPath])
        #expect(try result.ndjson().first?["transaction_id"] as? String == "1000")
        #expect(try server.requests().map { $0["env"] as? String } == ["production", "sandbox"])
        let unknown = try cli.run(["apple", "transactions", "get", "999"])
        #expect(unknown.status == 3, "\(unknown)")
        #expect(unknown.stderr.contains("Apple error 4040010: Transaction id not found."))
    }

    @Test func applesErrorsBecomeExitCodes() throws {
        let (cli, world, server) = try setUp()
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/transactions/400", [:], [.apple(400, "invalidTransactionIdError")]),
            ("sandbox", "GET", "/inApps/v1/transactions/500", [:], [.apple(500, "apiException")]),
        ])
        let invalid = try cli.run(["apple", "transactions", "get", "400"] + sandbox(world))
        #expect(invalid.status == 65, "\(invalid)")
        #expect(invalid.stderr.contains("Apple error 4000006: Invalid transaction id."))
        let down = try cli.run(["apple", "transactions", "get", "500"] + sandbox(world))
        #expect(down.status == 69, "\(down)")
        #expect(down.stderr.contains("after 3 retries"))
        #expect(try server.requests().filter { $0["path"] as? String == "/inApps/v1/transactions/500" }.count == 4)
    }

    /// A mistyped id is a usage error before any connection: an order ID is letters and digits, a
    /// transactionId digits, and an order ID given where a transactionId goes is pointed to `apple lookup`.
    @Test func idsOfTheWrongShapeAreRefusedBeforeAnyRequest() throws {
        let (cli, world, server) = try setUp()
        let badOrder = try cli.run(["apple", "lookup", "bad id!"] + sandbox(world))
        #expect(badOrder.status == 64, "\(badOrder)")
        #expect(badOrder.stderr.contains("'bad id!' is not an order ID"), "\(badOrder.stderr)")
        #expect(badOrder.stderr.contains("MK5TTTVWJH"))
        let orderAsTransaction = try cli.run(["apple", "transactions", "history", "MK5TTTVWJH"] + sandbox(world))
        #expect(orderAsTransaction.status == 64, "\(orderAsTransaction)")
        #expect(orderAsTransaction.stderr.contains("'MK5TTTVWJH' is not a transactionId"))
        #expect(orderAsTransaction.stderr.contains("iapctl apple lookup MK5TTTVWJH"))
        for line in [
            ["apple", "transactions", "get", "12 34"], ["apple", "refunds", "history", "1.5"],
            ["apple", "subscriptions", "status", "t1000"], ["apple", "app-transaction", "1e5"],
            ["apple", "notifications", "history", "--since", "1d", "--transaction", "abc"],
            ["apple", "finish-transaction", "x", "--reason", "r"],
        ] {
            let result = try cli.run(line + sandbox(world))
            #expect(result.status == 64, "\(line): \(result)")
            #expect(result.stderr.contains("is not a transactionId"), "\(line): \(result.stderr)")
        }
        #expect(try server.requests().isEmpty)
    }

    @Test func retryableErrorsAreRetried() throws {
        let (cli, world, server) = try setUp()
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000"))
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v1/transactions/1000", [:],
                [
                    .apple(500, "apiException"),
                    AppleAPIServer.Response(
                        status: 404, json: ["errorCode": 4040002, "errorMessage": "Account not found. Please try again."]),
                    .ok(["signedTransactionInfo": jws]),
                ]
            )
        ])
        let result = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(result.status == 0, "\(result)")
        #expect(result.lines == [jws])
        #expect(result.stderr.contains("retry 2 of 3"))
        #expect(try server.requests().count == 3)
    }

    @Test func aServerThatDoesNotAnswerInTimeIsUnavailable() throws {
        let (cli, world, server) = try setUp()
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/transactions/1", [:], [AppleAPIServer.Response(status: 200, json: [:], delayMs: 3000)])
        ])
        let result = try cli.run(["apple", "transactions", "get", "1", "--timeout", "1"] + sandbox(world))
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("did not answer in time"))
        #expect(result.stderr.contains("after 3 retries") || result.stderr.contains("retry 3 of 3"))
    }

    /// The requestIdentifier of each request `extend` sent, in order.
    func requestIdentifiers(_ server: AppleAPIServer) throws -> [String] {
        try server.requests().compactMap { ($0["body"] as? [String: Any])?["requestIdentifier"] as? String }
    }

    @Test func eachExtendRunIsANewWriteAndItsRetriesKeepItsRequestIdentifier() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            (
                "sandbox", "PUT", "/inApps/v1/subscriptions/extend/1000", [:],
                [.apple(500, "apiException"), .apple(200, "extendSubscriptionRenewalDateResponse")]
            )
        ])
        let args = ["apple", "extend", "1000", "--days", "3", "--reason-code", "3", "--reason", "outage", "--environment", "sandbox"]
        let first = try cli.run(args)
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("retry 1 of 3"))
        let retried = try requestIdentifiers(server)
        #expect(retried.count == 2)
        #expect(retried[0] == retried[1], "a retry within one run is the same write")
        let months = try cli.run(args)
        #expect(months.status == 0, "\(months)")
        let all = try requestIdentifiers(server)
        #expect(all.count == 3)
        #expect(all[2] != all[0], "the same days and reason asked for again is another extension")
        #expect(all.allSatisfy { $0.count == 36 })
    }

    @Test func aWriteStoppedByTheDeadlineSaysHowToRepeatItOnPurpose() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            (
                "sandbox", "PUT", "/inApps/v1/subscriptions/extend/1000", [:],
                [AppleAPIServer.Response(status: 200, json: ["success": true], delayMs: 3000)]
            )
        ])
        let result = try cli.run([
            "apple", "extend", "1000", "--days", "3", "--reason-code", "3", "--reason", "outage", "--environment",
            "sandbox", "--deadline", "1",
        ])
        #expect(result.status == 69, "\(result)")
        let id = try #require(try requestIdentifiers(server).first)
        #expect(result.stderr.contains("run the same command with --request-id \(id)"), "\(result)")
    }

    @Test func aFrozenServerStopsTheCommandAtItsDeadline() throws {
        let (cli, world, server) = try setUp()
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/transactions/1", [:], [AppleAPIServer.Response(status: 200, json: [:], delayMs: 4000)])
        ])
        let started = Date()
        let result = try cli.run(["apple", "transactions", "get", "1", "--deadline", "1"] + sandbox(world))
        let took = Date().timeIntervalSince(started)
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("no answer from Apple within the 1.0 s deadline, after 1 attempt"), "\(result)")
        #expect(result.stderr.contains("raise --deadline (IAPCTL_APPLE_DEADLINE"), "\(result)")
        #expect(took < 3.5, "stopped at the deadline, not after the server's 4 s or every retry (took \(took) s)")
        #expect(try server.requests().count == 1)
    }

    @Test func a429WithoutRetryAfterSaysIapctlBacksOffOnItsOwn() throws {
        let (cli, world, server) = try setUp()
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000"))
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v1/transactions/1000", [:],
                [.apple(429, "apiTooManyRequestsException"), .ok(["signedTransactionInfo": jws])]
            )
        ])
        let result = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("waiting 20 ms, iapctl's own backoff: Apple sent no Retry-After (wait 1 of 5)"), "\(result)")
        #expect(!result.stderr.contains("as its Retry-After says"))
    }

    @Test func appTransactionInfoByAnyIdOfTheCustomer() throws {
        let (cli, world, server) = try setUp()
        let app = """
            {"receiptType":"Sandbox","appAppleId":1234,"bundleId":"\(AppleWorld.bundleId)","applicationVersion":"3",\
            "originalApplicationVersion":"1","originalPurchaseDate":\(t0),"receiptCreationDate":\(t0),\
            "appTransactionId":"704000000000001","originalPlatform":"iOS"}
            """
        let jws = try world.pki.sign(payload: app)
        try server.routes([
            ("sandbox", "GET", "/inApps/v1/transactions/appTransactions/1000", [:], [.ok(["signedAppTransactionInfo": jws])]),
            (
                "sandbox", "GET", "/inApps/v1/transactions/appTransactions/704000000000001", [:],
                [.ok(["signedAppTransactionInfo": jws])]
            ),
            ("sandbox", "GET", "/inApps/v1/transactions/appTransactions/2000", [:], [.apple(404, "appTransactionDoesNotExistError")]),
        ])
        let raw = try cli.ok(["apple", "app-transaction", "1000"] + sandbox(world))
        #expect(raw.lines == [jws])
        let decoded = try cli.ok(["apple", "app-transaction", "704000000000001", "-o", "json"] + sandbox(world)).jsonArray()
        #expect(decoded.first?["app_transaction_id"] as? String == "704000000000001")
        #expect(decoded.first?["original_platform"] as? String == "iOS")
        #expect(decoded.first?["environment"] as? String == "Sandbox")
        let none = try cli.run(["apple", "app-transaction", "2000"] + sandbox(world))
        #expect(none.status == 3, "\(none)")
        #expect(none.stderr.contains("Apple error 4040019: No AppTransaction exists for the customer."))
        #expect(
            try server.requests().map { $0["path"] as? String } == [
                "/inApps/v1/transactions/appTransactions/1000", "/inApps/v1/transactions/appTransactions/704000000000001",
                "/inApps/v1/transactions/appTransactions/2000",
            ])
    }

    @Test func ordersShowFindsThePurchasesOfAnAppTransactionId() throws {
        let (cli, world, _) = try setUp()
        try world.database(orders: [(token, "alice")])
        var tx = world.transaction("1000", original: "1000", token: token)
        tx.appTransactionId = "704000000000001"
        try cli.ok(["notify"] + world.trust, stdin: try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx))
        let shown = try cli.ok(["orders", "show", "704000000000001", "-o", "json"]).jsonObject()
        let orders = try #require(shown["orders"] as? [[String: Any]])
        #expect(orders.count == 1)
        #expect(orders.first?["origin_no"] as? String == "1000")
        let unknown = try cli.run(["orders", "show", "704000000000002"])
        #expect(unknown.status == 3, "\(unknown)")
        #expect(unknown.stderr.contains("iapctl apple transactions history 704000000000002 | iapctl restore --user USER"))
    }

    @Test func transactionHistoryFiltersBySubscriptionGroupAndOwnership() throws {
        let (cli, world, server) = try setUp()
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v2/history/704000000000001", [:],
                [.ok(["revision": "r1", "hasMore": false, "signedTransactions": [] as [String]])]
            )
        ])
        try cli.ok(
            [
                "apple", "transactions", "history", "704000000000001", "--subscription-group", "g1", "--subscription-group", "g2",
                "--ownership", "FAMILY_SHARED",
            ] + sandbox(world))
        let query = try #require(try server.requests().first?["query"] as? [String: [String]])
        #expect(query["subscriptionGroupIdentifier"] == ["g1", "g2"])
        #expect(query["inAppOwnershipType"] == ["FAMILY_SHARED"])
        let bad = try cli.run(["apple", "transactions", "history", "1000", "--ownership", "SHARED"] + sandbox(world))
        #expect(bad.status == 64, "\(bad)")
        #expect(try server.requests().count == 1)
    }

    @Test func refundHistoryFollowsRevisions() throws {
        let (cli, world, server) = try setUp()
        let a = try world.signedTransaction(world.transaction("1000", original: "1000", revoked: true))
        let b = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1, revoked: true))
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v2/refund/lookup/1000", ["revision": "x1"],
                [.ok(["revision": "x2", "hasMore": false, "signedTransactions": [b]])]
            ),
            (
                "sandbox", "GET", "/inApps/v2/refund/lookup/1000", [:],
                [.ok(["revision": "x1", "hasMore": true, "signedTransactions": [a]])]
            ),
        ])
        let result = try cli.ok(["apple", "refunds", "history", "1000", "-o", "ndjson"] + sandbox(world))
        #expect(try result.ndjson().map { $0["transaction_id"] as? String } == ["1000", "1001"])
        #expect(try result.ndjson().allSatisfy { $0["revocation_date"] is String })
        #expect(try server.requests().count == 2)
    }

    @Test func testNotificationStatusPrintsThePayloadAndSaysWhetherItArrived() throws {
        let (cli, world, server) = try setUp()
        let path = "/inApps/v1/notifications/test/8cd2974c-f905-492a-bf9a-b2f47c791d19"
        try server.routes([("sandbox", "GET", path, [:], [.apple(200, "getTestNotificationStatusResponse")])])
        let raw = try cli.run(["apple", "notifications", "test-status", "8cd2974c-f905-492a-bf9a-b2f47c791d19"] + sandbox(world))
        #expect(raw.status == 0, "\(raw)")
        #expect(raw.lines == ["signed_payload"])
        #expect(raw.stderr.contains("delivered"))
        // Apple's example payload is a placeholder, not a JWS: decoding it is an error, never printed.
        let decoded = try cli.run(
            ["apple", "notifications", "test-status", "8cd2974c-f905-492a-bf9a-b2f47c791d19", "-o", "json"] + sandbox(world))
        #expect(decoded.status == 65, "\(decoded)")
        #expect(decoded.stdout.isEmpty)
    }

    @Test func aRateLimitIsWaitedOutWithinTheBoundAndReportedBeyondIt() throws {
        let (cli, world, server) = try setUp()
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000"))
        try server.routes([
            (
                "sandbox", "GET", "/inApps/v1/transactions/1000", [:],
                [.apple(429, "apiTooManyRequestsException", retryAfterMs: 400), .ok(["signedTransactionInfo": jws])]
            ),
            ("sandbox", "GET", "/inApps/v1/transactions/2000", [:], [.apple(429, "apiTooManyRequestsException", retryAfterMs: 600_000)]),
        ])
        let started = Date()
        let waited = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(waited.status == 0, "\(waited)")
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(waited.stderr.contains("rate limit (429)"))
        let limited = try cli.run(["apple", "transactions", "get", "2000", "--max-wait", "5"] + sandbox(world))
        #expect(limited.status == 75, "\(limited)")
        #expect(limited.stderr.contains("Apple says to try again at"))
        #expect(limited.stderr.contains("more than the 5.0 s iapctl waits"))
    }

    @Test func aRefusedTokenSaysWhichSettingIsLikely() throws {
        let (cli, world, server) = try setUp(bundleId: "com.example.other")
        let result = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(result.status == 78, "\(result)")
        #expect(result.stderr.contains("401"))
        #expect(result.stderr.contains("bundle id (--bundle-id com.example.app)"))
        #expect(try server.requests().map { $0["tokenProblem"] as? String } == ["bid"])
        let production = try cli.run(["apple", "transactions", "get", "1000", "--environment", "production"])
        #expect(production.status == 78)
        #expect(production.stderr.contains("never released"))
    }

    @Test func theServerRefusesExpiredForeignAndBadlySignedTokensAsAppleDoes() throws {
        let (cli, world, server) = try setUp()
        let transport = CurlTransport(caFile: server.dir.appendingPathComponent("tls.crt").path)
        let key = try APIKey(pem: Array(try Data(contentsOf: URL(fileURLWithPath: server.keyPath))), keyId: AppleAPIServer.keyId)
        let now = Int64(Date().timeIntervalSince1970)
        func status(issuer: String = AppleAPIServer.issuerId, bundle: String = AppleWorld.bundleId, at time: Int64) throws -> Int {
            let token = try TokenIssuer(key: key, issuerId: issuer, bundleId: bundle) { time }.token()
            let request = HTTPRequest(
                method: "GET", url: "https://127.0.0.1:\(server.port)/sandbox/inApps/v1/transactions/1",
                headers: [("Authorization", "Bearer " + token)])
            return try transport.send(request).status
        }
        #expect(try status(at: now) == 404)  // accepted; no such transaction
        #expect(try status(at: now - 3600) == 401)  // expired
        #expect(try status(at: now + 600) == 401)  // issued in the future
        #expect(try status(bundle: "com.example.other", at: now) == 401)
        #expect(try status(issuer: "00000000-0000-0000-0000-000000000000", at: now) == 401)
        #expect(
            try server.requests().compactMap { $0["tokenProblem"] as? String } == [
                "expired or too long", "expired or too long", "bid", "iss",
            ])

        // The right key id with another key: the signature does not verify.
        try AppleAPIServer.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", server.keyPath])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: server.keyPath)
        let forged = try cli.run(["apple", "transactions", "get", "1"] + sandbox(world))
        #expect(forged.status == 78, "\(forged)")
        #expect(try server.requests().last?["tokenProblem"] as? String == "signature")
    }

    @Test func anUntrustedServerCertificateIsNeverAccepted() throws {
        let (cli, world, server) = try setUp()
        cli.environment["IAPCTL_APPLE_API_CA_FILE"] = nil
        let result = try cli.run(["apple", "transactions", "get", "1"] + sandbox(world))
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("TLS with 127.0.0.1:\(server.port) failed"))
        #expect(!result.stderr.contains("retry"))
        #expect(try server.requests().isEmpty)
    }

    @Test func theKeyFileMustBeThereAndPrivate() throws {
        let (cli, world, server) = try setUp()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: server.keyPath)
        let open = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(open.status == 78, "\(open)")
        #expect(open.stderr.contains("chmod 600"))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: server.keyPath)
        let group = try cli.run(["apple", "transactions", "get", "1000"] + sandbox(world))
        #expect(group.status == 78, "\(group)")
        #expect(group.stderr.contains("readable by its group (mode 640)") && group.stderr.contains("chmod 600"))
        let missing = try cli.run(["apple", "transactions", "get", "1000", "--key-file", cli.path("nope.p8")] + sandbox(world))
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("cannot read the key file"))
        let garbage = try cli.write("AuthKey_2X9R4HXF34.p8", "not a key")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: garbage)
        let bad = try cli.run(["apple", "transactions", "get", "1000", "--key-file", garbage] + sandbox(world))
        #expect(bad.status == 78)
        #expect(!bad.stderr.contains("not a key"))
        #expect(try server.requests().isEmpty)
    }

    @Test func theKeySettingsComeFromTheConfigFileToo() throws {
        let (cli, world, server) = try setUp()
        for name in ["IAPCTL_APPLE_KEY_FILE", "IAPCTL_APPLE_KEY_ID", "IAPCTL_APPLE_ISSUER_ID", "IAPCTL_BUNDLE_ID"] {
            cli.environment[name] = nil
        }
        let jws = try world.signedTransaction(world.transaction("1000", original: "1000"))
        try server.routes([("sandbox", "GET", "/inApps/v1/transactions/1000", [:], [.ok(["signedTransactionInfo": jws])])])
        let config = try cli.write(
            "iapctl.json",
            """
            {"apple-key-file": "\(server.keyPath)", "apple-key-id": "\(AppleAPIServer.keyId)",
             "apple-issuer-id": "\(AppleAPIServer.issuerId)", "bundle-id": "\(AppleWorld.bundleId)",
             "apple-environment": "sandbox"}
            """)
        let result = try cli.run(["apple", "transactions", "get", "1000", "--config", config])
        #expect(result.status == 0, "\(result)")
        #expect(result.lines == [jws])
        #expect(!result.stdout.contains("PRIVATE KEY") && !result.stderr.contains("PRIVATE KEY"))
        let missing = try cli.run(["apple", "transactions", "get", "1000", "--bundle-id", AppleWorld.bundleId])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("settings are incomplete: --key-file, --key-id, --issuer-id not set"))
    }

    /// Without settings every missing one is named in one error; the key id comes from the key file's
    /// name `AuthKey_KEYID.p8`; `apple settings` says which are set and from where, without a request.
    @Test func missingSettingsAreNamedTogetherAndCheckedOffline() throws {
        let (cli, _, server) = try setUp()
        for name in ["IAPCTL_APPLE_KEY_FILE", "IAPCTL_APPLE_KEY_ID", "IAPCTL_APPLE_ISSUER_ID", "IAPCTL_BUNDLE_ID"] {
            cli.environment[name] = nil
        }
        let none = try cli.run(["apple", "reconcile", "--all"])
        #expect(none.status == 78, "\(none)")
        #expect(
            none.stderr.contains("settings are incomplete: --key-file, --key-id, --issuer-id, --bundle-id not set"),
            "\(none.stderr)")
        #expect(none.stderr.contains("iapctl apple settings"))
        let unset = try cli.run(["apple", "settings"])
        #expect(unset.status == 78, "\(unset)")
        #expect(unset.stdout.contains("--key-file:   not set"), "\(unset.stdout)")
        // Key file and issuer given; the key id is the file name's; only the bundle id is missing.
        cli.environment["IAPCTL_APPLE_KEY_FILE"] = server.keyPath
        let partial = try cli.run(["apple", "settings", "--issuer-id", AppleAPIServer.issuerId])
        #expect(partial.status == 78, "\(partial)")
        #expect(partial.stdout.contains("--key-file:   \(server.keyPath)  (IAPCTL_APPLE_KEY_FILE)"), "\(partial.stdout)")
        #expect(partial.stdout.contains("--key-id:     \(AppleAPIServer.keyId)  (the key file's name)"))
        #expect(partial.stdout.contains("--issuer-id:  \(AppleAPIServer.issuerId)  (--issuer-id)"))
        #expect(partial.stdout.contains("--bundle-id:  not set"))
        #expect(partial.stderr.contains("--bundle-id not set"), "\(partial.stderr)")
        let complete = try cli.run(
            ["apple", "settings", "--issuer-id", AppleAPIServer.issuerId, "--bundle-id", AppleWorld.bundleId])
        #expect(complete.status == 0, "\(complete)")
        #expect(complete.stdout.contains("nothing was sent to Apple"))
        #expect(try server.requests().isEmpty)
    }

    @Test func notificationHistoryRefusesAWindowApplesHistoryDoesNotHave() throws {
        let (cli, world, server) = try setUp()
        let result = try cli.run(["apple", "notifications", "history", "--since", "200d"] + sandbox(world))
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("180 days"))
        #expect(try server.requests().isEmpty)
    }

    @Test func extendShowsTheExactRequestInADryRunAndAuditsApplesAnswer() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            ("sandbox", "PUT", "/inApps/v1/subscriptions/extend/1000", [:], [.apple(200, "extendSubscriptionRenewalDateResponse")])
        ])
        let args = ["apple", "extend", "1000", "--days", "7", "--reason-code", "3", "--reason", "outage", "--environment", "sandbox"]
        let dry = try cli.ok(args + ["--dry-run"])
        #expect(dry.lines.first == "PUT https://127.0.0.1:\(server.port)/sandbox/inApps/v1/subscriptions/extend/1000")
        let body = try #require(dry.lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(body["extendByDays"] as? Int == 7)
        #expect(body["extendReasonCode"] as? Int == 3)
        let requestId = try #require(body["requestIdentifier"] as? String)
        #expect(try server.requests().isEmpty)

        #expect(dry.stderr.contains("the requestIdentifier is new on each run; to send this one, add --request-id \(requestId)"))

        let sent = try cli.ok(args + ["-o", "json", "--request-id", requestId])
        let answer = try #require(try sent.jsonArray().first)
        #expect(answer["success"] as? Bool == true)
        #expect(sent.stderr.contains("(requestIdentifier \(requestId))"))
        let requests = try server.requests()
        #expect(requests.count == 1)
        #expect((requests[0]["body"] as? [String: Any])?["requestIdentifier"] as? String == requestId)
        let audit = try #require(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().first)
        #expect(audit["command"] as? String == "apple extend")
        #expect(audit["reason"] as? String == "outage")
        let shown = try cli.ok(["audit", "show", "\(audit["id"] ?? 0)", "-o", "json"]).stdout
        #expect(shown.contains("2312412"))
    }

    @Test func setAppAccountTokenAndConsumptionSendApplesBodiesAndAuditRefusals() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            ("sandbox", "PUT", "/inApps/v1/transactions/1000/appAccountToken", [:], [.empty]),
            ("sandbox", "PUT", "/inApps/v1/transactions/2000/appAccountToken", [:], [.apple(400, "familyTransactionNotSupportedError")]),
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/1001", [:], [AppleAPIServer.Response(status: 202)]),
        ])
        try server.products(["1001": "Consumable"])
        try cli.ok(["apple", "set-app-account-token", "1000", "--token", token, "--reason", "web flow", "--environment", "sandbox"])
        let refused = try cli.run([
            "apple", "set-app-account-token", "2000", "--token", token, "--reason", "web flow", "--environment", "sandbox",
        ])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("4000185"))
        // Named, with what it means and what to do.
        #expect(refused.stderr.contains("FamilyTransactionNotSupportedError"), "\(refused)")
        #expect(refused.stderr.contains("family organizer"), "\(refused)")
        try cli.ok([
            "apple", "consumption", "1001", "--customer-consented", "--delivery-status", "DELIVERED",
            "--consumption-percentage", "25000", "--refund-preference", "DECLINE", "--reason", "T-5", "--environment", "sandbox",
        ])
        let bodies = try server.requests().map { $0["body"] as? [String: Any] }
        #expect(bodies[0]?["appAccountToken"] as? String == token)
        #expect(bodies[2]?["customerConsented"] as? Bool == true)
        #expect(bodies[2]?["deliveryStatus"] as? String == "DELIVERED")
        #expect(bodies[2]?["consumptionPercentage"] as? Int == 25000)
        #expect(bodies[2]?["sampleContentProvided"] as? Bool == false)
        let audit = try cli.ok(["audit", "list", "-o", "json"]).jsonArray()
        #expect(audit.count == 3)
        #expect(Set(audit.compactMap { $0["command"] as? String }) == ["apple set-app-account-token", "apple consumption"])
    }

    @Test func finishTransactionPostsAndAuditsApplesAnswer() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([("sandbox", "POST", "/inApps/v1/transactions/1000/finish", [:], [.empty])])
        let args = ["apple", "finish-transaction", "1000", "--reason", "delivered by the web shop", "--environment", "sandbox"]
        let dry = try cli.ok(args + ["--dry-run"])
        #expect(dry.lines.first == "POST https://127.0.0.1:\(server.port)/sandbox/inApps/v1/transactions/1000/finish")
        #expect(try server.requests().isEmpty)
        let sent = try cli.run(args)
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stderr.contains("Apple finished transaction 1000"))
        #expect(try server.requests().map { $0["method"] as? String } == ["POST"])
        let audit = try #require(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().first)
        #expect(audit["command"] as? String == "apple finish-transaction")
        #expect(audit["reason"] as? String == "delivered by the web shop")
        let unknown = try cli.run(["apple", "finish-transaction", "999", "--reason", "x", "--environment", "sandbox"])
        #expect(unknown.status == 3, "\(unknown)")
    }

    @Test func aWriteInAutoGoesToSandboxWhenProductionDoesNotKnowTheId() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            ("production", "PUT", "/inApps/v1/transactions/1000/appAccountToken", [:], [.apple(404, "transactionIdNotFoundError")]),
            ("sandbox", "PUT", "/inApps/v1/transactions/1000/appAccountToken", [:], [.empty]),
        ])
        try cli.ok(["apple", "set-app-account-token", "1000", "--token", token, "--reason", "web flow"])
        #expect(try server.requests().map { $0["env"] as? String } == ["production", "sandbox"])
        let audit = try #require(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().first)
        let shown = try cli.ok(["audit", "show", "\(audit["id"] ?? 0)", "-o", "json"]).stdout
        #expect(shown.contains("Sandbox"))
    }

    @Test func massExtensionTestNotificationsAndTheirStatus() throws {
        let (cli, world, server) = try setUp()
        try world.database()
        try server.routes([
            (
                "production", "POST", "/inApps/v1/subscriptions/extend/mass", [:],
                [.apple(200, "extendRenewalDateForAllActiveSubscribersResponse")]
            ),
            (
                "production", "GET", "/inApps/v1/subscriptions/extend/mass/com.example.product/20fba8a0-2b80-4a7d-a17f-85c1854727f8", [:],
                [.apple(200, "getStatusOfSubscriptionRenewalDateExtensionsResponse")]
            ),
            ("production", "POST", "/inApps/v1/notifications/test", [:], [.apple(200, "requestTestNotificationResponse")]),
        ])
        try cli.ok([
            "apple", "extend", "--all-active", "--product", "com.example.product", "--storefront", "USA", "--days", "3",
            "--reason-code", "1", "--reason", "goodwill",
        ])
        let mass = try #require(try server.requests().first?["body"] as? [String: Any])
        #expect(mass["productId"] as? String == "com.example.product")
        #expect(mass["storefrontCountryCodes"] as? [String] == ["USA"])
        let status = try cli.ok(["apple", "extend-status", "com.example.product", "20fba8a0-2b80-4a7d-a17f-85c1854727f8", "-o", "json"])
        #expect(try status.jsonArray().first?["succeeded_count"] as? Int == 30)
        let test = try cli.ok(["apple", "notifications", "test"])
        #expect(test.lines == ["ce3af791-365e-4c60-841b-1674b43c1609"])
    }
}

@Suite("docs/apple-setup.md examples")
struct AppleSetupGuideTests {
    @Test func theGuideExamplesRunAsShown() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        try world.database(orders: [("3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01", "u42")])
        let jws = try world.signedTransaction(
            world.transaction("1000", original: "1000", token: "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"))
        try server.routes([
            ("*", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [jws]])])
        ])
        func line(_ text: String) -> [String] {
            #expect(Guide.appleSetup.contains(text), "docs/apple-setup.md no longer shows: \(text)")
            return text.split(separator: " ").dropFirst().map { String($0).replacingOccurrences(of: "\"", with: "") }
        }
        let lookup = try cli.ok(line("iapctl apple lookup MK5TTTVWJH") + ["--environment", "sandbox"])
        let restore = try cli.run(
            line("iapctl restore --user u42") + world.trust + ["-o", "ndjson"], stdin: lookup.stdout)
        #expect(try restore.ndjson().first?["verdict"] as? String == "restorable", "\(restore)")
        let dry = try cli.ok(
            line("iapctl apple extend 2000000100000001 --days 7 --reason-code 3 --reason \"outage\" --dry-run"))
        #expect(dry.lines.first?.hasPrefix("PUT https://127.0.0.1:") == true)
        #expect(dry.lines.first?.hasSuffix("/production/inApps/v1/subscriptions/extend/2000000100000001") == true)
        #expect(try server.requests().count == 1)
    }
}
