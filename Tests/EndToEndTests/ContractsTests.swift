import Foundation
import Testing

/// `contracts list|show|update`, `orders show` by originalTransactionId and `db status` on
/// contracts the engine made from signed notifications.
@Suite("contracts, end to end")
struct ContractsE2ETests {
    let alice = "11111111-2222-4333-8444-555555555501"
    let bob = "11111111-2222-4333-8444-555555555502"
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    /// alice: subscription 1000 bought and renewed, then auto-renew disabled; bob: 2000 bought.
    func history() throws -> (CLI, AppleWorld) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(alice, "alice"), (bob, "bob")])
        let lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: alice)),
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0 + day, tx: world.transaction("2000", original: "2000", token: bob)),
            try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("1001", original: "1000", period: 1)),
            try world.notification(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 35 * day,
                tx: world.transaction("1001", original: "1000", period: 1), autoRenew: 0),
            // Arrives late: older than the cancellation.
            try world.notification(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: t0 + 32 * day,
                tx: world.transaction("1001", original: "1000", period: 1)),
        ]
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        #expect(try result.ndjson().map { $0["verdict"] as? String } == ["applied", "applied", "applied", "applied", "stale"])
        return (cli, world)
    }

    @Test func listFiltersAndFormats() throws {
        let (cli, _) = try history()
        let all = try cli.ok(["contracts", "list", "-o", "json"]).jsonArray()
        #expect(Set(all.compactMap { $0["contract_id"] as? String }) == ["1000", "2000"])
        let mine = try cli.ok(["contracts", "list", "--user", "alice", "-o", "json"]).jsonArray()
        #expect(mine.count == 1)
        #expect(mine.first?["status"] as? String == "canceled")
        #expect(mine.first?["auto_renew"] as? Bool == false)
        let active = try cli.ok(["contracts", "list", "--status", "active", "-o", "ndjson"]).ndjson()
        #expect(active.compactMap { $0["contract_id"] as? String } == ["2000"])
        #expect(try cli.ok(["contracts", "list", "--limit", "1", "-o", "json"]).jsonArray().count == 1)
        let csv = try cli.ok(["contracts", "list", "-o", "csv"]).lines
        #expect(csv.count == 3)
        #expect(csv[0].contains("contract_id"))
        let table = try cli.ok(["contracts", "list"]).stdout
        // Both periods ended in 2025 with nothing from Apple since, so the table says lapsed where
        // the stored status is active or canceled.
        // The stored status stays first: `active (lapsed)`, not the lapse's sentence.
        #expect(table.contains("canceled (lapsed)") && table.contains("active (lapsed)"), "\(table)")
        #expect(!table.contains("lapsed: paid until"), "\(table)")
        #expect(try cli.run(["contracts", "list", "--status", "paused"]).status == 64)
    }

    @Test func showHasTheContractItsOrdersTheTimelineWithVerdictsAndTheAudit() throws {
        let (cli, _) = try history()
        let doc = try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject()
        let contract = try #require(doc["contract"] as? [String: Any])
        #expect(contract["user_id"] as? String == "alice")
        #expect((doc["orders"] as? [Any])?.count == 2)
        let events = try #require(doc["events"] as? [[String: Any]])
        #expect(events.compactMap { $0["verdict"] as? String } == ["applied", "applied", "stale", "applied"])
        #expect(events.compactMap { $0["event"] as? String }.first == "SUBSCRIBED/INITIAL_BUY")
        let table = try cli.ok(["contracts", "show", "1000"]).stdout
        #expect(table.contains("stale"))
        #expect(table.contains("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"))
        #expect(try cli.run(["contracts", "show", "9999"]).status == 3)
    }

    @Test func ordersShowByOriginalTransactionIdIncludesTheContractAndEvents() throws {
        let (cli, _) = try history()
        let doc = try cli.ok(["orders", "show", "1000", "-o", "json"]).jsonObject()
        #expect((doc["orders"] as? [Any])?.count == 2)
        #expect((doc["contract"] as? [String: Any])?["contract_id"] as? String == "1000")
        #expect(((doc["events"] as? [Any])?.count ?? 0) >= 4)
    }

    @Test func updateIsAuditedAndShownWithActorReasonAndTicket() throws {
        let (cli, _) = try history()
        let before = try cli.ok(["db", "status", "-o", "json"]).jsonObject()["audit"] as? Int
        let dry = try cli.ok([
            "contracts", "update", "1000", "--status", "expired", "--auto-renew", "on", "--expires", "2025-03-01T00:00:00Z", "--reason",
            "goodwill", "--dry-run",
        ])
        #expect(dry.stdout.contains("canceled") && dry.stdout.contains("expired"))
        #expect(try cli.ok(["db", "status", "-o", "json"]).jsonObject()["audit"] as? Int == before)
        #expect(try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject().description.contains("canceled"))

        try cli.ok([
            "contracts", "update", "1000", "--status", "expired", "--auto-renew", "on", "--reason", "goodwill: ticket says ended",
            "--ticket", "T-77", "--actor", "sam-support",
        ])
        let doc = try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject()
        #expect((doc["contract"] as? [String: Any])?["status"] as? String == "expired")
        #expect((doc["contract"] as? [String: Any])?["auto_renew"] as? Bool == true)
        let changes = try #require(doc["changes"] as? [[String: Any]])
        let last = try #require(changes.last)
        #expect(last["actor"] as? String == "sam-support")
        #expect(last["reason"] as? String == "goodwill: ticket says ended")
        #expect(last["ticket"] as? String == "T-77")
        #expect(try cli.ok(["db", "status", "-o", "json"]).jsonObject()["audit"] as? Int == (before ?? 0) + 1)

        let noop = try cli.ok(["contracts", "update", "1000", "--status", "expired", "--reason", "again"])
        #expect((noop.stdout + noop.stderr).contains("no change"))
        #expect(try cli.ok(["db", "status", "-o", "json"]).jsonObject()["audit"] as? Int == (before ?? 0) + 1)
        #expect(try cli.run(["contracts", "update", "1000", "--status", "bogus", "--reason", "x"]).status == 64)
        #expect(try cli.run(["contracts", "update", "1000", "--status", "expired"]).status == 64)
        #expect(try cli.run(["contracts", "update", "9999", "--status", "expired", "--reason", "x"]).status == 3)
    }

    @Test func aHandRevokeHoldsOverAnOlderRefundAndShowAndExplainSayWhatTheFactsSay() throws {
        let (cli, world) = try history()
        try cli.ok([
            "contracts", "update", "1000", "--status", "revoked", "--reason", "fraud", "--ticket", "T-2001", "--actor", "sam",
        ])
        let refund = try world.notification(
            "REFUND", signed: t0 + 40 * day, tx: world.transaction("1000", original: "1000", token: alice, revoked: true),
            autoRenew: nil)
        let applied = try cli.ok(["notify", "-o", "ndjson"] + world.trust, stdin: refund).ndjson()
        #expect(applied.map { $0["verdict"] as? String } == ["applied"])

        let doc = try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject()
        #expect((doc["contract"] as? [String: Any])?["status"] as? String == "revoked")
        let overrides = try #require(doc["overrides"] as? [[String: Any]])
        let status = try #require(overrides.first)
        #expect(overrides.count == 1)
        #expect(status["field"] as? String == "status" && status["value"] as? String == "revoked")
        #expect(status["derived_value"] as? String == "canceled")
        #expect(status["actor"] as? String == "sam" && status["reason"] as? String == "fraud" && status["ticket"] as? String == "T-2001")
        let auditId = try #require(status["audit_id"] as? Int)
        let sentence = "status revoked by hand (#\(auditId), T-2001); Apple's newest facts say canceled"
        #expect(try cli.ok(["contracts", "show", "1000"]).stdout.contains(sentence))

        let explain = try cli.ok(["contracts", "explain", "1000", "-o", "json"]).jsonObject()
        let fields = try #require(explain["fields"] as? [[String: Any]])
        let statusField = try #require(fields.first { $0["field"] as? String == "status" })
        #expect(statusField["source"] as? String == "hand" && statusField["value"] as? String == "revoked")
        #expect((statusField["fact"] as? String)?.contains(sentence) == true)
        let trace = try #require(explain["trace"] as? [[String: Any]])
        let handStep = try #require(trace.first { ($0["audit_ids"] as? [Int]) == [auditId] }?["step"] as? Int)
        #expect(statusField["step"] as? Int == handStep)
        let renewStep = try #require(trace.first { $0["event"] as? String == "DID_RENEW" }?["step"] as? Int)
        #expect(fields.first { $0["field"] as? String == "expires_date" }?["step"] as? Int == renewStep)
        let summary = try #require((explain["current"] as? [String: Any])?["summary"] as? String)
        #expect(summary.contains("status from step \(handStep) (contracts update)"), "\(summary)")
        #expect(summary.contains("from step \(renewStep) (DID_RENEW)"), "\(summary)")

        let cleared = try cli.ok(["contracts", "update", "1000", "--clear-override", "status", "--reason", "fraud ruled out"])
        #expect(cleared.stdout.contains("status: revoked → canceled"), "\(cleared)")
        #expect(cleared.stderr.contains("cleared override #\(auditId) (status) of contract 1000"), "\(cleared)")
        let after = try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject()
        #expect((after["contract"] as? [String: Any])?["status"] as? String == "canceled")
        #expect((after["overrides"] as? [Any])?.isEmpty == true)
        #expect(try cli.run(["contracts", "update", "1000", "--clear-override", "status", "--reason", "again"]).status == 3)
    }

    @Test func explainCreditsTheStepThatSetEachFieldNotTheLastHandChange() throws {
        let (cli, _) = try history()
        try cli.ok(["orders", "update", "1000", "--status", "refunded", "--reason", "refund outside Apple"])
        let explain = try cli.ok(["contracts", "explain", "1000", "-o", "json"]).jsonObject()
        let trace = try #require(explain["trace"] as? [[String: Any]])
        let disabled = try #require(
            trace.first { $0["event"] as? String == "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED" }?["step"] as? Int)
        let summary = try #require((explain["current"] as? [String: Any])?["summary"] as? String)
        #expect(summary.contains("status, auto_renew from step \(disabled) (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED)"), "\(summary)")
        #expect(!summary.contains("orders update"), "\(summary)")
        // The order's hand refund is an override that orders show names.
        let order = try cli.ok(["orders", "show", alice, "-o", "json"]).jsonObject()
        let overrides = try #require(order["overrides"] as? [[String: Any]])
        #expect(overrides.map { $0["field"] as? String } == ["status"])
        #expect(overrides.first?["derived_value"] as? String == "paid")
    }

    @Test func dbStatusCountsContractsLedgerAndUnmatched() throws {
        let (cli, world) = try history()
        let stray = try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("7001", original: "7000", period: 1))
        #expect(try cli.run(["notify"] + world.trust, stdin: stray).status == 3)
        let status = try cli.ok(["db", "status", "-o", "json"]).jsonObject()
        #expect(status["contracts"] as? Int == 2)
        #expect(status["orders"] as? Int == 3)
        #expect(status["ledger"] as? Int == 6)
        #expect(status["unmatched"] as? Int == 1)
    }
}
