import Foundation
import JWSForge
import Testing

/// `iapctl apple reconcile` end to end: the built binary against the loopback App Store Server API
/// stand-in, with disagreements planted between the database and what Apple answers.
@Suite("apple reconcile: the database made to agree with Apple, end to end")
struct AppleReconcileTests {
    typealias Route = (env: String, method: String, path: String, query: [String: Any], responses: [AppleAPIServer.Response])

    let t0 = AppleWorld.t0
    let day = AppleWorld.day
    static let pro = "com.example.app.pro"

    func setUp() throws -> (CLI, AppleWorld, AppleAPIServer) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        return (cli, world, server)
    }

    /// The `apple` options for the world's Sandbox items.
    func sandbox(_ world: AppleWorld) -> [String] { ["--environment", "sandbox", "--root-ca", world.rootPath] }

    func token(_ original: String) -> String { "3c1f6b0e-7a52-4d8e-9f10-00000000\(original)" }

    /// `tx` as Apple signs it in an answer at `signed`.
    func signed(_ world: AppleWorld, _ tx: TransactionPayload, at signed: Int64) throws -> String {
        var tx = tx
        tx.signedDate = signed
        return try world.signedTransaction(tx)
    }

    /// Get Transaction History of `original`: `pages` of signed transactions, linked by revision tokens.
    func history(_ original: String, _ pages: [[String]]) -> [Route] {
        let path = "/inApps/v2/history/\(original)"
        let page = { (index: Int) -> [String: Any] in
            [
                "revision": "r\(index + 1)", "hasMore": index < pages.count - 1, "bundleId": AppleWorld.bundleId,
                "environment": "Sandbox", "signedTransactions": pages[index],
            ]
        }
        var routes: [Route] = (1..<max(pages.count, 1)).map { ("sandbox", "GET", path, ["revision": "r\($0)"], [.ok(page($0))]) }
        routes.append(("sandbox", "GET", path, [:], [.ok(page(0))]))
        return routes
    }

    /// Get All Subscription Statuses of `original`: its `status`, latest transaction and renewal info.
    func status(_ original: String, _ status: Int, latest: String, renewal: String?, before: [AppleAPIServer.Response] = [])
        -> Route
    {
        var item: [String: Any] = ["status": status, "originalTransactionId": original, "signedTransactionInfo": latest]
        if let renewal { item["signedRenewalInfo"] = renewal }
        let body: [String: Any] = [
            "environment": "Sandbox", "bundleId": AppleWorld.bundleId,
            "data": [["subscriptionGroupIdentifier": "g1", "lastTransactions": [item]]],
        ]
        return ("sandbox", "GET", "/inApps/v1/subscriptions/\(original)", [:], before + [.ok(body)])
    }

    func renewal(
        _ world: AppleWorld, _ original: String, autoRenew: Int64 = 1, signed: Int64, grace: Int64? = nil,
        retry: Bool? = nil, intent: Int64? = nil, product: String = AppleWorld.product
    ) throws -> String {
        try world.pki.sign(
            payload: RenewalInfoPayload(
                originalTransactionId: original, autoRenewProductId: product, productId: product, autoRenewStatus: autoRenew,
                expirationIntent: intent, isInBillingRetryPeriod: retry, signedDate: signed, environment: "Sandbox",
                renewalDate: signed + 30 * day, gracePeriodExpiresDate: grace
            ).json)
    }

    /// Orders for `originals` (user `u<original>`), each subscription bought (INITIAL_BUY notified).
    func bought(_ cli: CLI, _ world: AppleWorld, _ originals: [String]) throws {
        try world.database(orders: originals.map { (token($0), "u" + $0) })
        for original in originals {
            let buy = try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction(original, original: original, token: token(original)))
            try cli.ok(["notify"] + world.trust, stdin: buy)
        }
    }

    func ledgerCount(_ cli: CLI) throws -> Int? {
        try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int
    }

    /// NDJSON output as comparable lines: generated order numbers masked, the dry-run mark removed.
    func comparable(_ result: CLI.Result) throws -> [String] {
        let uuid = try NSRegularExpression(pattern: "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        return result.lines.map { line in
            let plain = line.replacingOccurrences(of: ",\"dry_run\":true", with: "")
            return uuid.stringByReplacingMatches(
                in: plain, range: NSRange(plain.startIndex..., in: plain), withTemplate: "<uuid>")
        }
    }

    @Test func everyKindOfDisagreementIsPredictedFixedAndThenGone() throws {
        let (cli, world, server) = try setUp()
        let originals = ["1000", "2000", "3000", "4000", "5000", "6000", "7000", "8000", "9000"]
        try bought(cli, world, originals)
        // 2000: the database saw a refund that Apple later reversed.
        let refund = try world.notification(
            "REFUND", signed: t0 + 2 * day, tx: world.transaction("2000", original: "2000", token: token("2000"), revoked: true))
        try cli.ok(["notify"] + world.trust, stdin: refund)

        var routes: [Route] = []
        // 1000 missed refund (and a 429 that is waited out).
        let refunded = try signed(world, world.transaction("1000", original: "1000", token: token("1000"), revoked: true), at: t0 + 3 * day)
        routes += history("1000", [[refunded]])
        routes.append(
            status(
                "1000", 5, latest: refunded, renewal: try renewal(world, "1000", autoRenew: 0, signed: t0 + 3 * day),
                before: [.apple(429, "apiTooManyRequestsException", retryAfterMs: 300)]))
        // 2000 missed refund reversal.
        let reversed = try signed(world, world.transaction("2000", original: "2000", token: token("2000")), at: t0 + 5 * day)
        routes += history("2000", [[reversed]])
        routes.append(status("2000", 1, latest: reversed, renewal: try renewal(world, "2000", signed: t0 + 5 * day)))
        // 3000 missed renewal, history in two pages.
        let first3 = try signed(world, world.transaction("3000", original: "3000", token: token("3000")), at: t0 + 31 * day)
        let renewed = try signed(world, world.transaction("3001", original: "3000", period: 1), at: t0 + 31 * day)
        routes += history("3000", [[first3], [renewed]])
        routes.append(status("3000", 1, latest: renewed, renewal: try renewal(world, "3000", signed: t0 + 31 * day)))
        // 4000 missed expiry.
        let first4 = try signed(world, world.transaction("4000", original: "4000", token: token("4000")), at: t0 + 31 * day)
        routes += history("4000", [[first4]])
        routes.append(
            status("4000", 2, latest: first4, renewal: try renewal(world, "4000", autoRenew: 0, signed: t0 + 31 * day, intent: 1)))
        // 5000 billing grace period; 6000 billing retry.
        let first5 = try signed(world, world.transaction("5000", original: "5000", token: token("5000")), at: t0 + 30 * day + 7_200_000)
        routes += history("5000", [[first5]])
        routes.append(
            status(
                "5000", 4, latest: first5,
                renewal: try renewal(world, "5000", signed: t0 + 30 * day + 7_200_000, grace: t0 + 36 * day, retry: true)))
        let first6 = try signed(world, world.transaction("6000", original: "6000", token: token("6000")), at: t0 + 31 * day)
        routes += history("6000", [[first6]])
        routes.append(status("6000", 3, latest: first6, renewal: try renewal(world, "6000", signed: t0 + 31 * day, retry: true)))
        // 7000 auto-renew turned off.
        let first7 = try signed(world, world.transaction("7000", original: "7000", token: token("7000")), at: t0 + 5 * day)
        routes += history("7000", [[first7]])
        routes.append(status("7000", 1, latest: first7, renewal: try renewal(world, "7000", autoRenew: 0, signed: t0 + 5 * day)))
        // 8000 upgraded to the pro product (a transaction the database never saw).
        let first8 = try signed(world, world.transaction("8000", original: "8000", token: token("8000")), at: t0 + 10 * day)
        var upgrade = world.transaction("8001", original: "8000", product: Self.pro)
        upgrade.purchaseDate = t0 + 10 * day
        upgrade.expiresDate = t0 + 40 * day
        let upgraded = try signed(world, upgrade, at: t0 + 10 * day)
        routes += history("8000", [[first8, upgraded]])
        routes.append(
            status("8000", 1, latest: upgraded, renewal: try renewal(world, "8000", signed: t0 + 10 * day, product: Self.pro)))
        // 9000 agrees with Apple.
        let first9 = try signed(world, world.transaction("9000", original: "9000", token: token("9000")), at: t0 + day)
        routes += history("9000", [[first9]])
        routes.append(status("9000", 1, latest: first9, renewal: try renewal(world, "9000", signed: t0 + day)))
        try server.routes(routes)

        let before = try world.tables(maskGeneratedNumbers: Set(originals.map(token)))
        let ledger = try ledgerCount(cli)
        let started = Date()
        let dry = try cli.run(["apple", "reconcile", "--all", "-o", "ndjson"] + sandbox(world))
        #expect(dry.status == 1, "\(dry)")
        #expect(Date().timeIntervalSince(started) >= 0.25, "the 429 was waited out")
        #expect(dry.stderr.contains("rate limit (429)"), "\(dry.stderr)")
        #expect(
            dry.stderr.contains("9 subscriptions: 8 would change, 1 agrees with Apple; nothing was written"), "\(dry.stderr)")
        #expect(try world.tables(maskGeneratedNumbers: Set(originals.map(token))) == before, "a dry run writes nothing")
        #expect(try ledgerCount(cli) == ledger)
        let dryRows = try dry.ndjson()
        #expect(dryRows.allSatisfy { $0["dry_run"] as? Bool == true })
        let differing = Set(dryRows.compactMap { $0["original_transaction_id"] as? String })
        #expect(differing == Set(originals.dropLast()), "\(dryRows)")
        // Pagination: both pages of 3000's history were asked for, the second with the first's revision.
        let pages = try server.requests().filter { ($0["path"] as? String)?.hasSuffix("/history/3000") == true }
        #expect(pages.compactMap { ($0["query"] as? [String: [String]])?["revision"] } == [["r1"]])

        // Every format of the same dry run.
        let table = try cli.run(["apple", "reconcile", "--all", "-o", "table"] + sandbox(world))
        #expect(table.status == 1)
        #expect(table.stdout.contains("would apply") && table.stdout.contains("subscription status"), "\(table)")
        #expect(
            table.lines.contains { $0.contains("subscription status  8000      8001") }, "the contract beside the transaction: \(table)")
        let json = try cli.run(["apple", "reconcile", "--all", "-o", "json"] + sandbox(world))
        #expect(try json.jsonArray().count == dryRows.count)
        let csv = try cli.run(["apple", "reconcile", "--all", "-o", "csv"] + sandbox(world))
        #expect(csv.lines.first?.hasPrefix("line,verdict,") == true)
        #expect(csv.lines.count >= dryRows.count + 1)

        let applied = try cli.run(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(applied.status == 0, "an --apply that wrote every change succeeded: \(applied)")
        #expect(try comparable(applied) == comparable(dry), "the dry run predicts the real run line by line")
        #expect(applied.stderr.contains("apple reconcile: 9 subscriptions: 8 changed, 1 agrees with Apple\n"), "\(applied.stderr)")

        func contract(_ id: String) throws -> [String: Any] { try #require(try world.contract(id), "contract \(id)") }
        #expect(try world.order(tradeNo: "1000")?["status"] as? String == "refunded")
        #expect(try contract("1000")["status"] as? String == "revoked")
        #expect(try world.order(tradeNo: "2000")?["status"] as? String == "paid")
        #expect(try contract("2000")["status"] as? String == "active")
        #expect(try world.order(tradeNo: "3001")?["status"] as? String == "paid")
        #expect(try contract("3000")["expires_date"] as? String == "2025-03-02T00:00:00Z")
        #expect(try contract("4000")["status"] as? String == "expired")
        #expect(try contract("5000")["status"] as? String == "grace_period")
        #expect(try contract("6000")["status"] as? String == "billing_retry")
        #expect(try contract("7000")["auto_renew"] as? Bool == false)
        #expect(try contract("8000")["product_id"] as? String == Self.pro)
        #expect(try world.order(tradeNo: "8001") != nil)
        #expect(try contract("9000")["status"] as? String == "active")
        // The engine's changes are audited as the command's, each with the ledger item that caused it,
        // kept as Apple sent it: a transaction as its JWS, a status as its lastTransactions item.
        let audits = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { $0["command"] as? String == "apple reconcile" }
        #expect(!audits.isEmpty)
        let ledgerIds = Set(audits.compactMap { $0["ledger_id"] as? Int }).sorted()
        let raws = try ledgerIds.map { try cli.ok(["audit", "raw", String($0)]).stdout }
        #expect(raws.contains(refunded))
        #expect(raws.contains { $0.hasPrefix("{") && $0.contains("\"status\":2") && $0.contains("\"signedRenewalInfo\"") })
        let count = try #require(try ledgerCount(cli))
        // explain names the source, and so the authority, of what decided each field: Apple pulled.
        let explained = try cli.ok(["contracts", "explain", "6000", "-o", "json"]).jsonObject()
        let fields = try #require(explained["fields"] as? [[String: Any]])
        let status = try #require(fields.first { $0["field"] as? String == "status" })
        #expect(status["source"] as? String == "apple_api" && status["authority"] as? String == "Apple pulled", "\(status)")
        #expect(try cli.ok(["contracts", "explain", "6000"]).stdout.contains("Apple pulled"))

        // Now the database agrees: nothing to report, nothing written.
        let again = try cli.run(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.isEmpty)
        #expect(try ledgerCount(cli) == count)
        #expect(try cli.run(["apple", "reconcile", "--contract", "3000"] + sandbox(world)).status == 0)
    }

    @Test func aSubscriptionTheDatabaseNeverSawIsFoundByTransactionAndOrderId() throws {
        let (cli, world, server) = try setUp()
        let bob = token("9100")
        try world.database(orders: [(bob, "bob")])
        let tx = try signed(world, world.transaction("9100", original: "9100", token: bob), at: t0 + day)
        var routes = history("9100", [[tx]])
        routes.append(status("9100", 1, latest: tx, renewal: try renewal(world, "9100", signed: t0 + day)))
        routes.append(("sandbox", "GET", "/inApps/v1/transactions/9100", [:], [.ok(["signedTransactionInfo": tx])]))
        routes.append(("production", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [tx]])]))
        try server.routes(routes)

        let unknown = try cli.run(["apple", "reconcile", "--user", "bob"] + sandbox(world))
        #expect(unknown.status == 3, "\(unknown)")
        #expect(unknown.stderr.contains("user bob has no contracts"))

        let found = try cli.run(["apple", "reconcile", "--transaction", "9100", "--apply", "-o", "json"] + sandbox(world))
        #expect(found.status == 0, "\(found)")
        let rows = try found.jsonArray()
        #expect(rows.first?["verdict"] as? String == "applied")
        #expect(try world.order(no: bob)?["status"] as? String == "paid")
        #expect(try world.order(no: bob)?["trade_no"] as? String == "9100")
        #expect(try world.contract("9100")?["user_id"] as? String == "bob")

        #expect(try cli.run(["apple", "reconcile", "--user", "bob"] + sandbox(world)).status == 0)
        let byOrderId = try cli.run([
            "apple", "reconcile", "--order-id", "MK5TTTVWJH", "--environment", "auto", "--root-ca", world.rootPath, "--app-apple-id", "1",
        ])
        // Look Up Order ID is Production's: the Sandbox items it returned here do not verify as Production's.
        #expect(byOrderId.status == 2, "\(byOrderId)")
        let usage = try cli.run(["apple", "reconcile", "--contract", "9100", "--all"] + sandbox(world))
        #expect(usage.status == 64, "\(usage)")
        #expect(try cli.run(["apple", "reconcile", "--contract", "9100", "--status", "active"] + sandbox(world)).status == 64)
    }

    @Test func anItemThatDoesNotVerifyIsRefusedAndKeptOnlyWhenApplied() throws {
        let (cli, world, server) = try setUp()
        try bought(cli, world, ["1000"])
        let stranger = try AppleWorld(cli: cli)
        let forged = try signed(stranger, world.transaction("1001", original: "1000", period: 1), at: t0 + 31 * day)
        let good = try signed(world, world.transaction("1000", original: "1000", token: token("1000")), at: t0 + day)
        var routes = history("1000", [[good, forged]])
        routes.append(status("1000", 1, latest: good, renewal: try renewal(world, "1000", signed: t0 + day)))
        try server.routes(routes)
        let ledger = try ledgerCount(cli)

        let dry = try cli.run(["apple", "reconcile", "--contract", "1000", "-o", "ndjson"] + sandbox(world))
        #expect(dry.status == 2, "\(dry)")
        #expect(try dry.ndjson().map { $0["verdict"] as? String } == ["rejected"])
        #expect(try ledgerCount(cli) == ledger)
        let applied = try cli.run(["apple", "reconcile", "--contract", "1000", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(applied.status == 2, "\(applied)")
        #expect(try ledgerCount(cli) == (ledger ?? 0) + 1)
        #expect(try world.order(tradeNo: "1001") == nil, "nothing of the refused item was applied")
    }

    /// The orders and contracts tables, the ledger's size: what a summary's counts are checked against.
    func state(_ cli: CLI, _ world: AppleWorld) throws -> (tables: [String], ledger: Int?) {
        (try world.tables(), try ledgerCount(cli))
    }

    @Test func aSubscriptionWithOnlyARefusedItemIsCountedAsRefusedNeverAsChanged() throws {
        let (cli, world, server) = try setUp()
        try bought(cli, world, ["1000", "2000"])
        let stranger = try AppleWorld(cli: cli)
        // 1000: Apple's answer agrees, plus one item that does not verify. 2000: a missed refund, plus one.
        let good = try signed(world, world.transaction("1000", original: "1000", token: token("1000")), at: t0 + day)
        let forged1 = try signed(stranger, world.transaction("1001", original: "1000", period: 1), at: t0 + 31 * day)
        var routes = history("1000", [[good, forged1]])
        routes.append(status("1000", 1, latest: good, renewal: try renewal(world, "1000", signed: t0 + day)))
        let refunded = try signed(world, world.transaction("2000", original: "2000", token: token("2000"), revoked: true), at: t0 + 3 * day)
        let forged2 = try signed(stranger, world.transaction("2001", original: "2000", period: 1), at: t0 + 31 * day)
        routes += history("2000", [[refunded, forged2]])
        routes.append(status("2000", 5, latest: refunded, renewal: try renewal(world, "2000", autoRenew: 0, signed: t0 + 3 * day)))
        try server.routes(routes)
        let before = try state(cli, world)

        let one = try cli.run(["apple", "reconcile", "--contract", "1000", "--apply"] + sandbox(world))
        #expect(one.status == 2, "\(one)")
        #expect(
            one.stderr.contains("apple reconcile: 1 subscription: 0 changed, 0 agree with Apple, 1 with items refused"),
            "nothing was written but the refused item: \(one.stderr)")
        #expect(!one.stderr.contains("brought in line"), "\(one.stderr)")
        let afterOne = try state(cli, world)
        #expect(afterOne.tables == before.tables, "no order or contract changed")
        #expect(afterOne.ledger == (before.ledger ?? 0) + 1, "the refused item is kept as rejected")

        let dry = try cli.run(["apple", "reconcile", "--user", "u2000"] + sandbox(world))
        #expect(dry.status == 2, "\(dry)")
        #expect(
            dry.stderr.contains("(dry run): 1 subscription: 1 would change, 0 agree with Apple, 1 with items refused"),
            "\(dry.stderr)")
        #expect(try state(cli, world) == afterOne, "a dry run writes nothing")
        // With -q the one summary line names the exit status the run has.
        let quiet = try cli.run(["apple", "reconcile", "--user", "u2000", "-q", "-o", "ndjson"] + sandbox(world))
        #expect(quiet.status == 2, "\(quiet)")
        #expect(quiet.stderr.contains("nothing was written (--apply writes) (exit 2)"), "\(quiet.stderr)")
        let both = try cli.run(["apple", "reconcile", "--user", "u2000", "--apply"] + sandbox(world))
        #expect(both.status == 2, "\(both)")
        #expect(both.stderr.contains(": 1 subscription: 1 changed, 0 agree with Apple, 1 with items refused"), "\(both.stderr)")
        #expect(try world.contract("2000")?["status"] as? String == "revoked", "the change counted was written")
        #expect(try world.order(tradeNo: "2001") == nil, "nothing of the refused item was applied")
    }

    @Test func aSubscriptionOfNoUserIsCountedAsUnmatchedNeverAsChanged() throws {
        let (cli, world, server) = try setUp()
        try bought(cli, world, ["1000"])
        // 9300: a purchase whose appAccountToken names no order; nobody's contract.
        let stray = try signed(world, world.transaction("9300", original: "9300", token: token("9300")), at: t0 + day)
        var routes = history("9300", [[stray]])
        routes.append(status("9300", 1, latest: stray, renewal: try renewal(world, "9300", signed: t0 + day)))
        routes.append(("sandbox", "GET", "/inApps/v1/transactions/9300", [:], [.ok(["signedTransactionInfo": stray])]))
        try server.routes(routes)
        let before = try state(cli, world)

        let dry = try cli.run(["apple", "reconcile", "--transaction", "9300", "-o", "ndjson"] + sandbox(world))
        #expect(dry.status == 3, "\(dry)")
        #expect(
            dry.stderr.contains("(dry run): 1 subscription: 0 would change, 0 agree with Apple, 1 unmatched"), "\(dry.stderr)")
        let applied = try cli.run(["apple", "reconcile", "--transaction", "9300", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(applied.status == 3, "\(applied)")
        #expect(try applied.ndjson().allSatisfy { $0["verdict"] as? String == "unmatched" }, "\(applied.stdout)")
        #expect(
            applied.stderr.contains("apple reconcile: 1 subscription: 0 changed, 0 agree with Apple, 1 unmatched"),
            "\(applied.stderr)")
        #expect(!applied.stderr.contains("brought in line"), "\(applied.stderr)")
        #expect(try world.tables() == before.tables, "no order or contract was written for it")
        #expect(try world.contract("9300") == nil)
    }

    @Test func anInterruptedAllRunResumesFromItsCheckpoint() throws {
        let (cli, world, server) = try setUp()
        let originals = ["1000", "2000", "3000"]
        try bought(cli, world, originals)
        var answers: [String: (history: [Route], status: Route)] = [:]
        for original in originals {
            let refunded = try signed(
                world, world.transaction(original, original: original, token: token(original), revoked: true), at: t0 + 3 * day)
            answers[original] = (
                history(original, [[refunded]]),
                status(original, 5, latest: refunded, renewal: try renewal(world, original, autoRenew: 0, signed: t0 + 3 * day))
            )
        }
        func routes(failing: String?) throws {
            var all: [Route] = []
            for original in originals {
                let answer = try #require(answers[original])
                var status = answer.status
                if original == failing { status.responses = [.apple(500, "apiException")] }
                all += answer.history + [status]
            }
            try server.routes(all)
        }
        // Apple fails for the second subscription: the run stops there, the first one is committed.
        try routes(failing: "2000")
        let stopped = try cli.run(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(stopped.status == 69, "\(stopped)")
        #expect(Set(try stopped.ndjson().compactMap { $0["original_transaction_id"] as? String }) == ["1000"], "\(stopped)")
        #expect(stopped.stderr.contains("running it again continues there"), "\(stopped.stderr)")
        #expect(try world.contract("1000")?["status"] as? String == "revoked")
        #expect(try world.contract("2000")?["status"] as? String == "active")

        // A dry run starts where the checkpoint says and leaves it.
        try routes(failing: nil)
        let preview = try cli.run(["apple", "reconcile", "--all", "-o", "ndjson"] + sandbox(world))
        #expect(preview.status == 1, "\(preview)")
        #expect(preview.stderr.contains("resuming after subscription 1000"), "\(preview.stderr)")

        let before = try server.requests().count
        let resumed = try cli.run(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("resuming after subscription 1000"), "\(resumed.stderr)")
        #expect(try comparable(resumed) == comparable(preview))
        let asked = try server.requests().dropFirst(before).compactMap { $0["path"] as? String }
        #expect(!asked.contains { $0.hasSuffix("/1000") }, "\(asked)")
        #expect(Set(try resumed.ndjson().compactMap { $0["original_transaction_id"] as? String }) == ["2000", "3000"])
        for original in originals { #expect(try world.contract(original)?["status"] as? String == "revoked") }

        // The finished run removed the checkpoint: the next one takes every contract again, and agrees.
        let again = try cli.run(["apple", "reconcile", "--all", "--apply"] + sandbox(world))
        #expect(again.status == 0, "\(again)")
        #expect(!again.stderr.contains("resuming"))
        #expect(again.stderr.contains("3 subscriptions: 0 changed, 3 agree with Apple"), "\(again.stderr)")
    }

    @Test(.timeLimit(.minutes(1)))
    func ctrlCStopsAllBetweenSubscriptionsAndTheRerunContinues() throws {
        let (cli, world, server) = try setUp()
        let originals = ["1000", "2000", "3000"]
        try bought(cli, world, originals)
        var routes: [Route] = []
        for original in originals {
            let refunded = try signed(
                world, world.transaction(original, original: original, token: token(original), revoked: true), at: t0 + 3 * day)
            routes += history(original, [[refunded]])
            var answer = status(
                original, 5, latest: refunded, renewal: try renewal(world, original, autoRenew: 0, signed: t0 + 3 * day))
            if original == "2000" { answer.responses[0].delayMs = 1_500 }
            routes.append(answer)
        }
        try server.routes(routes)
        let started = try cli.start(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        let process = started.process
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, try !server.requests().contains(where: { $0["path"] as? String == "/inApps/v1/subscriptions/2000" }) {
            usleep(50_000)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let stdout = String(decoding: started.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = try String(contentsOfFile: started.errors, encoding: .utf8)
        #expect(process.terminationStatus == 130, "\(stdout)\n\(stderr)")
        #expect(stderr.contains("interrupted after 2 items: 2 committed"), "\(stderr)")
        // The subscription being asked about when Ctrl-C came is finished; the next one is not started.
        #expect(try world.contract("2000")?["status"] as? String == "revoked")
        #expect(try world.contract("3000")?["status"] as? String == "active")
        #expect(try !server.requests().contains { ($0["path"] as? String)?.hasSuffix("/3000") == true })

        let resumed = try cli.run(["apple", "reconcile", "--all", "--apply", "-o", "ndjson"] + sandbox(world))
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("resuming after subscription 2000"), "\(resumed.stderr)")
        #expect(Set(try resumed.ndjson().compactMap { $0["original_transaction_id"] as? String }) == ["3000"])
        #expect(try world.contract("3000")?["status"] as? String == "revoked")
    }

    @Test func anOrderIdOfAReceiptEmailNamesItsSubscriptionsInProduction() throws {
        let (cli, world, server) = try setUp()
        let carol = token("9200")
        try world.database(orders: [(carol, "carol")])
        var purchase = world.transaction("9200", original: "9200", token: carol)
        purchase.environment = "Production"
        let tx = try signed(world, purchase, at: t0 + day)
        var routes = history("9200", [[tx]]).map { route -> Route in
            var route = route
            route.env = "production"
            return route
        }
        var answer = status("9200", 1, latest: tx, renewal: nil)
        answer.env = "production"
        routes.append(answer)
        routes.append(("production", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [tx]])]))
        routes.append(("production", "GET", "/inApps/v1/lookup/NOPE", [:], [.ok(["status": 1])]))
        try server.routes(routes)
        let production = ["--environment", "production", "--root-ca", world.rootPath, "--app-apple-id", "1234"]

        let invalid = try cli.run(["apple", "reconcile", "--order-id", "NOPE"] + production)
        #expect(invalid.status == 3, "\(invalid)")
        #expect(invalid.stderr.contains("order ID NOPE is invalid"))
        let found = try cli.run(["apple", "reconcile", "--order-id", "MK5TTTVWJH", "--apply", "-o", "ndjson"] + production)
        #expect(found.status == 0, "\(found)")
        #expect(try found.ndjson().first?["original_transaction_id"] as? String == "9200")
        #expect(try world.order(no: carol)?["trade_no"] as? String == "9200")
        #expect(try world.contract("9200")?["environment"] as? String == "Production")
        #expect(try cli.run(["apple", "reconcile", "--order-id", "MK5TTTVWJH"] + production).status == 0)
    }
}
