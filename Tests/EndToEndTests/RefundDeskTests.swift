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
        let used = (asked - tx.purchaseDate) * 100_000 / (20 * day + 10 * day)
        #expect(body["customerConsented"] as? Bool == true)
        #expect(body["deliveryStatus"] as? String == "DELIVERED")
        #expect(body["consumptionPercentage"] as? Int == Int(used))
        #expect(body["sampleContentProvided"] as? Bool == false)
        #expect(body["refundPreference"] as? String == "DECLINE")
        #expect(body.count == 5)

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
        #expect(try cli.ok(["refunds", "list", "--open", "-o", "json"]).jsonArray().count == 1)
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

    func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
