import Foundation
import JWSForge
import Testing

/// `iapctl refunds …` and RESCIND_CONSENT end to end: requests kept by `notify`, listed with their
/// deadline, answered from the database against the loopback App Store Server API stand-in, linked to
/// the answer's audit row and to Apple's REFUND; `doctor`'s deadline warning.
@Suite("refunds: the refund-request desk, end to end")
struct RefundDeskTests {
    let token = "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"
    let hour: Int64 = 3_600_000
    let day = AppleWorld.day
    /// The wall clock (the desk's deadlines are measured against it), rounded to the second.
    let now = Int64(Date().timeIntervalSince1970) * 1000

    func setUp() throws -> (CLI, AppleWorld, AppleAPIServer) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli, bundleId: AppleWorld.bundleId)
        for (name, value) in server.environment { cli.environment[name] = value }
        return (cli, world, server)
    }

    /// alice's subscription `id`: bought 10 days ago, a 30-day period.
    func purchase(_ id: String, _ world: AppleWorld) -> TransactionPayload {
        TransactionPayload(
            transactionId: id, originalTransactionId: id, bundleId: AppleWorld.bundleId, productId: AppleWorld.product,
            purchaseDate: now - 10 * day, originalPurchaseDate: now - 10 * day, expiresDate: now + 20 * day,
            appAccountToken: token, signedDate: now - 10 * day, environment: "Sandbox")
    }

    func notify(_ cli: CLI, _ world: AppleWorld, _ jws: String) throws -> [String: Any] {
        try #require(try cli.ok(["notify", "-o", "ndjson"] + world.trust, stdin: jws + "\n").ndjson().first)
    }

    @Test func aRequestIsAnsweredFromTheDatabaseAuditedAndLinkedToTheRefund() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        let tx = purchase("1000", world)
        _ = try notify(
            cli, world, try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: tx.signedDate, tx: tx))
        let asked = now - hour
        let kept = try notify(
            cli, world,
            try world.builder.consumptionRequest(
                uuid: "c0000000-0000-4000-8000-000000000001", signedDate: asked, transaction: tx))
        #expect(kept["verdict"] as? String == "ignored", "\(kept)")
        #expect((kept["detail"] as? String)?.contains("refunds answer 1000") == true, "\(kept)")
        #expect((kept["detail"] as? String)?.contains(iso(asked + 12 * hour)) == true, "\(kept)")
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/1000", [:], [AppleAPIServer.Response(status: 202)])
        ])
        try server.products(["1000": "Auto-Renewable Subscription"])

        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "open")
        #expect(listed["transaction_id"] as? String == "1000")
        #expect(listed["user_id"] as? String == "alice")
        #expect(listed["product_id"] as? String == AppleWorld.product)
        #expect(listed["reason"] as? String == "UNINTENDED_PURCHASE")
        #expect(listed["deadline_at"] as? String == iso(asked + 12 * hour))
        #expect(listed["answered_at"] is NSNull)

        // The dry run (the default) sends nothing and shows the body; --apply needs the operator's consent.
        let dry = try cli.ok(["refunds", "answer", "1000", "--environment", "sandbox"])
        #expect(dry.stdout.contains("\"deliveryStatus\":\"DELIVERED\""), "\(dry)")
        #expect(!dry.stdout.contains("customerConsented"), "\(dry)")
        #expect(dry.stderr.contains("--customer-consented"), "\(dry)")
        let unconsented = try cli.run(["refunds", "answer", "1000", "--apply", "--environment", "sandbox"])
        #expect(unconsented.status == 64, "\(unconsented)")
        #expect(try server.requests().isEmpty)

        try cli.ok([
            "refunds", "answer", "1000", "--customer-consented", "--refund-preference", "DECLINE", "--apply",
            "--environment", "sandbox", "--actor", "sam",
        ])
        let sent = try server.requests()
        #expect(sent.count == 1)
        let body = try #require(sent.first?["body"] as? [String: Any])
        #expect(body["customerConsented"] as? Bool == true)
        #expect(body["deliveryStatus"] as? String == "DELIVERED")
        // An auto-renewable subscription: Apple computes the consumption, none is sent.
        #expect(body["consumptionPercentage"] == nil)
        #expect(body["sampleContentProvided"] as? Bool == false)
        #expect(body["refundPreference"] as? String == "DECLINE")
        #expect(body.count == 4)

        let audit = try #require(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().first)
        #expect(audit["command"] as? String == "refunds answer")
        let answered = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(answered["status"] as? String == "answered")
        #expect(answered["answered_by"] as? String == "sam")
        #expect(answered["audit_id"] as? Int == audit["id"] as? Int)
        #expect(answered["outcome"] is NSNull)
        let redacted = try #require(try cli.ok(["refunds", "list", "--redact", "-o", "json"]).jsonArray().first)
        #expect(redacted["user_id"] as? String != "alice")
        #expect(redacted["answered_by"] as? String != "sam")
        #expect(redacted["transaction_id"] as? String != "1000")
        let again = try cli.run([
            "refunds", "answer", "1000", "--customer-consented", "--apply", "--environment", "sandbox",
        ])
        #expect(again.status == 4, "\(again)")
        #expect(try server.requests().count == 1)

        var refunded = tx
        refunded.revocationDate = now
        refunded.revocationReason = 0
        refunded.signedDate = now
        let refund = try notify(cli, world, try world.notification("REFUND", signed: now, tx: refunded))
        let linked = try #require(try cli.ok(["refunds", "list", "-o", "ndjson"]).ndjson().first)
        #expect(linked["outcome"] as? String == "refunded")
        #expect(linked["outcome_ledger_id"] as? Int != nil)
        #expect(linked["status"] as? String == "answered")
        #expect(refund["verdict"] as? String == "applied")
        #expect(try cli.ok(["refunds", "list", "--open", "-o", "json"]).jsonArray().isEmpty)
    }

    @Test func doctorWarnsOfARequestNearItsDeadlineWithNoAnswer() throws {
        let (cli, world, _) = try setUp()
        try world.database(orders: [(token, "alice")])
        let tx = purchase("2000", world)
        _ = try notify(cli, world, try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: tx.signedDate, tx: tx))
        let clean = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(clean.status == 0, "\(clean)")
        // Asked 10 hours ago: 2 hours left.
        _ = try notify(
            cli, world,
            try world.builder.consumptionRequest(
                uuid: "c0000000-0000-4000-8000-000000000002", signedDate: now - 10 * hour, transaction: tx,
                reason: "OTHER"))
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(doctor.status == 1, "\(doctor)")
        let findings = try #require(try doctor.jsonObject()["findings"] as? [[String: Any]])
        #expect(findings.count == 1)
        #expect(findings.first?["check"] as? String == "refund-request-due")
        #expect(findings.first?["key"] as? String == "2000")
        #expect((findings.first?["fix"] as? String)?.hasPrefix("iapctl refunds answer 2000") == true)
        #expect((findings.first?["problem"] as? String)?.contains("1 h") == true, "\(findings)")
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "due-soon")
        #expect(listed["reason"] as? String == "OTHER")
    }

    @Test func theOldestDeadlineComesFirstAndAMissedOneIsSaidSo() throws {
        let (cli, world, _) = try setUp()
        try world.database(orders: [(token, "alice")])
        let tx = purchase("3000", world)
        _ = try notify(cli, world, try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: tx.signedDate, tx: tx))
        for (uuid, signed) in [
            ("c0000000-0000-4000-8000-000000000004", now - hour), ("c0000000-0000-4000-8000-000000000003", now - 13 * hour),
        ] {
            _ = try notify(
                cli, world, try world.builder.consumptionRequest(uuid: uuid, signedDate: signed, transaction: tx))
        }
        let rows = try cli.ok(["refunds", "list", "-o", "csv"]).lines
        #expect(rows.count == 3)
        #expect(rows[1].contains("missed"), "\(rows)")
        #expect(rows[2].contains("open"), "\(rows)")
        let open = try cli.run(["refunds", "list", "--open", "-o", "json"])
        #expect(try open.jsonArray().count == 1)
        // The closing count agrees with the rows shown, then gives the whole.
        #expect(open.stderr.contains("1 still to answer, of 2 refund requests (1 open, 1 missed)"), "\(open.stderr)")
        // The oldest request is answered first; its deadline is in the past and said so.
        let dry = try cli.run(["refunds", "answer", "3000", "--environment", "sandbox"])
        #expect(dry.stderr.contains("Apple's deadline passed at \(iso(now - 13 * hour + 12 * hour))"), "\(dry)")
        #expect(!dry.stderr.contains("Apple waits until"), "\(dry)")
    }

    @Test func rescindConsentIsKeptWithItsOwnDetailAndListed() throws {
        let (cli, world, _) = try setUp()
        try world.database()
        let jws = try world.builder.rescindConsent(
            uuid: "d0000000-0000-4000-8000-000000000001", signedDate: now - hour, appTransactionId: "704289572311",
            originalPurchaseDate: now - 100 * day)
        let kept = try notify(cli, world, jws)
        #expect(kept["verdict"] as? String == "ignored")
        #expect((kept["detail"] as? String)?.contains("consent") == true, "\(kept)")
        #expect((kept["detail"] as? String)?.contains("carries no transaction") == false, "\(kept)")
        let listed = try cli.ok(["refunds", "consents", "-o", "json"]).jsonArray()
        #expect(listed.count == 1)
        #expect(listed.first?["app_transaction_id"] as? String == "704289572311")
        #expect(listed.first?["environment"] as? String == "Sandbox")
        #expect(listed.first?["user_id"] is NSNull, "no kept transaction carries that appTransactionId: \(listed)")
        // A re-delivery is listed once.
        _ = try notify(cli, world, jws)
        #expect(try cli.ok(["refunds", "consents", "-o", "json"]).jsonArray().count == 1)
        // Once a purchase whose signed transaction carries the appTransactionId is known, the
        // withdrawal names its user (the ids allow it).
        try cli.ok(["orders", "create", "--user", "alice", "--product", AppleWorld.product, "--no", token])
        var bought = world.transaction("5000", original: "5000", token: token)
        bought.appTransactionId = "704289572311"
        _ = try notify(cli, world, try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: bought))
        let mapped = try cli.ok(["refunds", "consents", "-o", "json"]).jsonArray()
        #expect(mapped.first?["user_id"] as? String == "alice", "\(mapped)")
        #expect(mapped.first?["original_transaction_ids"] as? String == "5000", "\(mapped)")
    }

    /// alice's subscription `id` bought, and Apple's refund request for it signed an hour ago
    /// (`reason`), kept by `notify`; the stand-in knows the purchase as a subscription.
    func requested(
        _ id: String, _ uuid: String, reason: String = "UNINTENDED_PURCHASE", _ cli: CLI, _ world: AppleWorld,
        _ server: AppleAPIServer
    ) throws {
        let tx = purchase(id, world)
        _ = try notify(cli, world, try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: tx.signedDate, tx: tx))
        _ = try notify(
            cli, world, try world.builder.consumptionRequest(uuid: uuid, signedDate: now - hour, transaction: tx, reason: reason))
    }

    /// The PUTs of Send Consumption Information the stand-in received.
    func consumptionPuts(_ server: AppleAPIServer) throws -> [[String: Any]] {
        try server.requests().filter {
            ($0["method"] as? String) == "PUT" && (($0["path"] as? String) ?? "").contains("/consumption/")
        }
    }

    @Test func theStandInRefusesAPercentageForASubscriptionAndTheDeskNeverSendsOne() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("4000", "c0000000-0000-4000-8000-000000000040", cli, world, server)
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/4000", [:], [AppleAPIServer.Response(status: 202)]),
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/4001", [:], [AppleAPIServer.Response(status: 202)]),
        ])
        try server.products(["4000": "Auto-Renewable Subscription", "4001": "Auto-Renewable Subscription"])
        let byHandArgs = [
            "--customer-consented", "--delivery-status", "DELIVERED", "--consumption-percentage", "25000", "--reason", "T-9",
            "--environment", "sandbox",
        ]
        // Sent by hand for a transaction the database does not know: said so, sent as given, and
        // Apple (the stand-in, as Apple documents it) refuses it, named.
        let unknown = try cli.run(["apple", "consumption", "4001"] + byHandArgs)
        #expect(unknown.status == 65, "\(unknown)")
        #expect(unknown.stderr.contains("does not know the product type of transaction 4001"), "\(unknown)")
        #expect(unknown.stderr.contains("4000209"), "\(unknown)")
        #expect(unknown.stderr.contains("ConsumptionPercentageAutoRenewableSubscriptionError"), "\(unknown)")
        #expect(try consumptionPuts(server).count == 1)
        // By hand for one the database knows as a subscription: refused before sending, the rule named.
        let byHand = try cli.run(["apple", "consumption", "4000"] + byHandArgs)
        #expect(byHand.status == 65, "\(byHand)")
        #expect(byHand.stderr.contains("ConsumptionPercentageAutoRenewableSubscriptionError"), "\(byHand)")
        #expect(!byHand.stderr.contains("4000209"), "not sent: \(byHand)")
        #expect(try consumptionPuts(server).count == 1, "nothing sent")
        // The desk refuses it before sending, naming the rule and the fix.
        let refused = try cli.run([
            "refunds", "answer", "4000", "--customer-consented", "--consumption-percentage", "25000", "--apply",
            "--environment", "sandbox",
        ])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("auto-renewable subscription"), "\(refused)")
        #expect(refused.stderr.contains("leave out the consumption percentage"), "\(refused)")
        #expect(try consumptionPuts(server).count == 1, "nothing sent")
        // GRANT_PRORATED for a subscription: Apple computes the share; accepted without one.
        try cli.ok([
            "refunds", "answer", "4000", "--customer-consented", "--refund-preference", "GRANT_PRORATED", "--apply",
            "--environment", "sandbox",
        ])
        let sent = try #require(try consumptionPuts(server).last?["body"] as? [String: Any])
        #expect(sent["consumptionPercentage"] == nil && sent["refundPreference"] as? String == "GRANT_PRORATED")
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "answered", "\(listed)")
    }

    @Test func twoAnswersStartedAtOnceSendOnce() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("5000", "c0000000-0000-4000-8000-000000000050", cli, world, server)
        // Apple answers slowly: both runs are under way together.
        var slow = AppleAPIServer.Response(status: 202)
        slow.delayMs = 1500
        try server.routes([("sandbox", "PUT", "/inApps/v2/transactions/consumption/5000", [:], [slow])])
        try server.products(["5000": "Auto-Renewable Subscription"])
        let args = ["refunds", "answer", "5000", "--customer-consented", "--apply", "--environment", "sandbox"]
        let runner = UncheckedBox(cli)
        let results = try [0, 1].concurrentMap { _ in try runner.value.run(args) }
        #expect(results.map(\.status).sorted() == [0, 4], "\(results)")
        #expect(try consumptionPuts(server).count == 1)
        let audit = try cli.ok(["audit", "list", "-o", "json"]).jsonArray()
        #expect(audit.filter { $0["command"] as? String == "refunds answer" }.count == 1, "\(audit)")
        let loser = try #require(results.first { $0.status == 4 })
        #expect(loser.stderr.contains("5000"), "\(loser)")
    }

    @Test func aClaimWhoseSenderDiedIsShownAndSentAgainOnlyWhenAskedTo() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("5500", "c0000000-0000-4000-8000-000000000055", cli, world, server)
        var stuck = AppleAPIServer.Response(status: 202)
        stuck.delayMs = 20_000
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/5500", [:], [stuck, AppleAPIServer.Response(status: 202)])
        ])
        try server.products(["5500": "Auto-Renewable Subscription"])
        let args = ["refunds", "answer", "5500", "--customer-consented", "--apply", "--environment", "sandbox"]
        let started = try cli.start(args)
        let deadline = Date().addingTimeInterval(15)
        while try consumptionPuts(server).isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        kill(started.process.processIdentifier, SIGKILL)
        started.process.waitUntilExit()
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "claimed", "\(listed)")
        #expect((listed["claimed_by"] as? String)?.contains("pid") == true, "\(listed)")
        let again = try cli.run(args)
        #expect(again.status == 4, "\(again)")
        #expect(again.stderr.contains("--resend-claimed"), "\(again)")
        #expect(try consumptionPuts(server).count == 1)
        try cli.ok(args + ["--resend-claimed"])
        #expect(try consumptionPuts(server).count == 2)
        let answered = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(answered["status"] as? String == "answered", "\(answered)")
    }

    @Test func anAnswerAppleRefusedIsRecordedAndMayBeSentAgain() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("5700", "c0000000-0000-4000-8000-000000000057", cli, world, server)
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/5700", [:], [AppleAPIServer.Response(status: 202)])
        ])
        // Apple does not know the transaction (yet): 404, recorded with the claim.
        let args = ["refunds", "answer", "5700", "--customer-consented", "--apply", "--environment", "sandbox"]
        let unknown = try cli.run(args)
        #expect(unknown.status == 3, "\(unknown)")
        let refused = try #require(try cli.ok(["refunds", "list", "--open", "-o", "json"]).jsonArray().first)
        #expect(refused["status"] as? String == "refused", "\(refused)")
        #expect((refused["apple_error"] as? String)?.hasPrefix("4040010") == true, "\(refused)")
        try server.products(["5700": "Auto-Renewable Subscription"])
        try cli.ok(args)
        #expect(try consumptionPuts(server).count == 2)
        let answered = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(answered["status"] as? String == "answered", "\(answered)")
        #expect(try cli.run(args).status == 4)
    }

    static let policy = """
        {"customer_consented": true,
         "rules": [
           {"name": "legal", "when": {"reason": "LEGAL"}, "answer": {"refund_preference": "GRANT_FULL"}},
           {"name": "unintended", "when": {"reason": ["UNINTENDED_PURCHASE"], "product_type": "AUTO_RENEWABLE"},
            "answer": {"refund_preference": "DECLINE"}},
           {"name": "rest", "when": {}, "answer": "none"}
         ]}
        """

    @Test func thePolicyAnswersEachRequestOnceRunTwiceAndByTwoProcessesAtOnce() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("6001", "c0000000-0000-4000-8000-000000000061", reason: "LEGAL", cli, world, server)
        try requested("6002", "c0000000-0000-4000-8000-000000000062", cli, world, server)
        try requested("6003", "c0000000-0000-4000-8000-000000000063", reason: "OTHER", cli, world, server)
        var slow = AppleAPIServer.Response(status: 202)
        slow.delayMs = 700
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/6001", [:], [slow]),
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/6002", [:], [slow]),
        ])
        try server.products([
            "6001": "Auto-Renewable Subscription", "6002": "Auto-Renewable Subscription", "6003": "Auto-Renewable Subscription",
        ])
        _ = try cli.write("policy.json", Self.policy)
        let args = ["refunds", "answer", "--all", "--policy", "policy.json", "--environment", "sandbox"]

        // The dry run says what each rule would do and sends nothing.
        let dry = try cli.ok(args + ["-o", "json"]).jsonArray()
        #expect(
            Set(dry.map { "\($0["transaction_id"] ?? ""):\($0["rule"] ?? ""):\($0["action"] ?? "")" }) == [
                "6001:legal:would-send", "6002:unintended:would-send", "6003:rest:would-skip",
            ])
        #expect(try consumptionPuts(server).isEmpty)

        // Two cron runs overlapping: each request answered once.
        let runner = UncheckedBox(cli)
        let results = try [0, 1].concurrentMap { _ in try runner.value.run(args + ["--apply", "-o", "json"]) }
        for result in results { #expect(result.status == 0, "\(result)") }
        let puts = try consumptionPuts(server)
        #expect(puts.count == 2, "\(puts)")
        #expect(Set(puts.compactMap { $0["path"] as? String }).count == 2)
        let bodies = Dictionary(
            uniqueKeysWithValues: puts.map {
                (($0["path"] as? String ?? "").split(separator: "/").last.map(String.init) ?? "", $0["body"] as? [String: Any])
            })
        #expect(bodies["6001"]??["refundPreference"] as? String == "GRANT_FULL")
        #expect(bodies["6002"]??["refundPreference"] as? String == "DECLINE")
        #expect(bodies["6001"]??["customerConsented"] as? Bool == true)

        // Run again: nothing is open, nothing sent.
        let again = try cli.ok(args + ["--apply", "-o", "json"])
        #expect(try again.jsonArray().isEmpty, "\(again)")
        #expect(try consumptionPuts(server).count == 2)

        // Every answer audited with its rule; the skip too.
        let audit = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { $0["command"] as? String == "refunds answer" }
        #expect(audit.count == 3, "\(audit)")
        let reasons = audit.compactMap { $0["reason"] as? String }
        for rule in ["legal", "unintended", "rest"] {
            #expect(reasons.filter { $0.contains("rule \(rule) ") }.count == 1, "\(reasons)")
        }
        // `refunds list` shows the rule, and later Apple's outcome linked to the answer.
        var refunded = purchase("6001", world)
        refunded.revocationDate = now
        refunded.revocationReason = 0
        refunded.signedDate = now
        _ = try notify(cli, world, try world.notification("REFUND", signed: now, tx: refunded))
        let listed = try cli.ok(["refunds", "list", "-o", "json"]).jsonArray()
        let byTx = Dictionary(uniqueKeysWithValues: listed.map { ($0["transaction_id"] as? String ?? "", $0) })
        #expect(byTx["6001"]?["rule"] as? String == "legal")
        #expect(byTx["6001"]?["status"] as? String == "answered")
        #expect(byTx["6001"]?["outcome"] as? String == "refunded")
        #expect(byTx["6002"]?["rule"] as? String == "unintended")
        #expect(byTx["6003"]?["rule"] as? String == "rest")
        #expect(byTx["6003"]?["status"] as? String == "skipped")
        // A person may still answer what a rule left unanswered, once.
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/6003", [:], [AppleAPIServer.Response(status: 202)])
        ])
        let byHand = ["refunds", "answer", "6003", "--customer-consented", "--apply", "--environment", "sandbox"]
        try cli.ok(byHand)
        #expect(try consumptionPuts(server).count == 3)
        #expect(try cli.run(byHand).status == 4)
        #expect(try consumptionPuts(server).count == 3)
    }

    @Test func aPolicyWithoutConsentOrWithAMistakeSendsNothing() throws {
        let (cli, world, server) = try setUp()
        try world.database(orders: [(token, "alice")])
        try requested("7000", "c0000000-0000-4000-8000-000000000070", cli, world, server)
        try server.products(["7000": "Auto-Renewable Subscription"])
        _ = try cli.write("unconsented.json", #"{"rules": [{"name": "all", "answer": {"refund_preference": "DECLINE"}}]}"#)
        let unconsented = try cli.run(["refunds", "answer", "--all", "--policy", "unconsented.json", "--apply"])
        #expect(unconsented.status == 64, "\(unconsented)")
        #expect(unconsented.stderr.contains("customer_consented"), "\(unconsented)")
        _ = try cli.write("bad.json", #"{"customer_consented": true, "rules": [{"name": "x", "when": {"colour": 1}, "answer": "none"}]}"#)
        let bad = try cli.run(["refunds", "answer", "--all", "--policy", "bad.json", "--apply"])
        #expect(bad.status == 65, "\(bad)")
        #expect(bad.stderr.contains("rule 'x'") && bad.stderr.contains("colour"), "\(bad)")
        #expect(try server.requests().isEmpty)
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "open")
    }

    func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
