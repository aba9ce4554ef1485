import Foundation
import JWSForge
import Testing

/// `entitled` answers one of two named questions about a moment — true then as known now (`--at`),
/// or what the database knew then (`--as-known-at`) — and a hand extension of `expires_date`
/// (goodwill) grants access in `entitled`, `contracts show/list` and `doctor` alike. Runs on SQLite
/// and, in the MariaDB pass, on MariaDB.
@Suite("entitled: two questions about time, and goodwill, end to end")
struct EntitledQuestionsE2ETests {
    let t0 = AppleWorld.t0
    let day = AppleWorld.day
    let hour: Int64 = 3_600_000

    static func iso(_ ms: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    func token(_ original: String) -> String { "3c1f6b0e-7a52-4d8e-9f10-00000000\(original)" }

    /// Orders of `u<original>` for each subscription, each bought at t0 (a 30-day period).
    func bought(_ cli: CLI, _ world: AppleWorld, _ originals: [String]) throws {
        try world.database(orders: originals.map { (token($0), "u" + $0) })
        for original in originals {
            let buy = try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction(original, original: original, token: token(original)))
            try cli.ok(["notify", "-q"] + world.trust, stdin: buy)
        }
    }

    /// `entitled` as JSON, with its exit status.
    func entitled(_ cli: CLI, _ user: String, _ time: [String]) throws -> (status: Int32, answer: [String: Any]) {
        let r = try cli.run(["entitled", "--user", user, "-o", "json"] + time)
        return (r.status, try r.jsonObject())
    }

    @Test func aLateRefundAndALateRenewalAnswerBothQuestions() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try bought(cli, world, ["5000", "6000"])
        // 5000: refunded from t0 + 1 day; Apple signed the REFUND two days later.
        let refund = try world.notification(
            "REFUND", signed: t0 + 3 * day, tx: world.transaction("5000", original: "5000", token: token("5000"), revoked: true))
        try cli.ok(["notify", "-q"] + world.trust, stdin: refund)
        let between = Self.iso(t0 + 2 * day)
        let now = try entitled(cli, "u5000", ["--at", between])
        #expect(now.status == 1, "\(now.answer)")
        #expect(now.answer["entitled"] as? Bool == false)
        #expect(now.answer["status"] as? String == "revoked", "\(now.answer)")
        #expect(now.answer["question"] as? String == "as-known-now")
        let then = try entitled(cli, "u5000", ["--as-known-at", between])
        #expect(then.status == 0, "\(then.answer)")
        #expect(then.answer["entitled"] as? Bool == true)
        #expect(then.answer["question"] as? String == "as-known-then")
        // Before the revocationDate both say yes.
        #expect(try entitled(cli, "u5000", ["--at", Self.iso(t0 + 12 * hour)]).status == 0)
        // The table says which question it answered.
        let table = try cli.run(["entitled", "--user", "u5000", "--at", between])
        #expect(table.stdout.contains("as known now"), "\(table)")
        let tableThen = try cli.run(["entitled", "--user", "u5000", "--as-known-at", between])
        #expect(tableThen.stdout.contains("as the database knew it then"), "\(tableThen)")
        // One question at a time.
        #expect(try cli.run(["entitled", "--user", "u5000", "--at", between, "--as-known-at", between]).status == 64)

        // 6000: Apple signed the DID_RENEW of its second period 3 hours after the period began.
        var renewal = world.transaction("6001", original: "6000", period: 1)
        renewal.signedDate = t0 + 30 * day + 3 * hour
        let renewed = try world.notification("DID_RENEW", signed: t0 + 30 * day + 3 * hour, tx: renewal)
        try cli.ok(["notify", "-q"] + world.trust, stdin: renewed)
        let early = Self.iso(t0 + 30 * day + hour)
        let covered = try entitled(cli, "u6000", ["--at", early])
        #expect(covered.status == 0, "\(covered.answer)")
        #expect(covered.answer["transaction_id"] as? String == "6001")
        let believed = try entitled(cli, "u6000", ["--as-known-at", early])
        #expect(believed.status == 1, "\(believed.answer)")
        #expect(believed.answer["status"] as? String == "lapsed", "\(believed.answer)")
    }

    @Test func aPeriodReconcileRevealedCoversItsTime() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        try bought(cli, world, ["7000"])
        // Apple's history, asked on day 50, shows a second period (day 30 → 60) nobody told us about.
        var first = world.transaction("7000", original: "7000", token: token("7000"))
        first.signedDate = t0 + 50 * day
        var second = world.transaction("7001", original: "7000", period: 1)
        second.signedDate = t0 + 50 * day
        let signedFirst = try world.signedTransaction(first)
        let signedSecond = try world.signedTransaction(second)
        let history: [String: Any] = [
            "revision": "r1", "hasMore": false, "bundleId": AppleWorld.bundleId, "environment": "Sandbox",
            "signedTransactions": [signedFirst, signedSecond],
        ]
        let renewalInfo = try world.pki.sign(payload: world.renewal("7000", signed: t0 + 50 * day).json)
        let status: [String: Any] = [
            "environment": "Sandbox", "bundleId": AppleWorld.bundleId,
            "data": [
                [
                    "subscriptionGroupIdentifier": "g1",
                    "lastTransactions": [
                        [
                            "status": 1, "originalTransactionId": "7000", "signedTransactionInfo": signedSecond,
                            "signedRenewalInfo": renewalInfo,
                        ]
                    ],
                ]
            ],
        ]
        try server.routes([
            ("sandbox", "GET", "/inApps/v2/history/7000", [:], [.ok(history)]),
            ("sandbox", "GET", "/inApps/v1/subscriptions/7000", [:], [.ok(status)]),
        ])
        let reconciled = try cli.run(
            ["apple", "reconcile", "--contract", "7000", "--apply", "--environment", "sandbox", "--root-ca", world.rootPath])
        #expect(reconciled.status == 0, "differences found and applied: \(reconciled)")
        #expect(try world.order(tradeNo: "7001") != nil)

        let day45 = Self.iso(t0 + 45 * day)
        let now = try entitled(cli, "u7000", ["--at", day45])
        #expect(now.status == 0, "\(now.answer)")
        #expect(now.answer["transaction_id"] as? String == "7001")
        let then = try entitled(cli, "u7000", ["--as-known-at", day45])
        #expect(then.status == 1, "\(then.answer)")
        #expect(then.answer["status"] as? String == "lapsed", "\(then.answer)")
    }

    @Test func goodwillGrantsAccessEverywhereUntilANewerPeriodLiftsIt() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try bought(cli, world, ["8000"])
        // Auto-renew off: canceled, and its period ended long ago.
        let off = try world.notification(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + day,
            tx: world.transaction("8000", original: "8000", token: token("8000")), autoRenew: 0)
        try cli.ok(["notify", "-q"] + world.trust, stdin: off)
        #expect(try cli.run(["entitled", "--user", "u8000"]).status == 1)

        let now = Int64(Date().timeIntervalSince1970) * 1000
        let until = now + 10 * day
        try cli.ok(["contracts", "update", "8000", "--expires", Self.iso(until), "--reason", "goodwill"])

        let yes = try entitled(cli, "u8000", [])
        #expect(yes.status == 0, "\(yes.answer)")
        #expect(yes.answer["entitled"] as? Bool == true)
        #expect(yes.answer["status"] as? String == "canceled", "\(yes.answer)")
        #expect(yes.answer["lapsed"] as? Bool == false)
        #expect((yes.answer["reason"] as? String ?? "").contains("by hand"), "\(yes.answer)")
        // The same with --at inside the extension, and no after it.
        #expect(try entitled(cli, "u8000", ["--at", Self.iso(now + 5 * day)]).status == 0)
        let after = try entitled(cli, "u8000", ["--at", Self.iso(until + day)])
        #expect(after.status == 1, "\(after.answer)")

        // contracts show / list and doctor agree: canceled, not lapsed.
        let shown = try cli.ok(["contracts", "show", "8000", "-o", "json"]).stdout
        #expect(shown.contains("\"lapsed\":false") || shown.contains("\"lapsed\": false"), "\(shown)")
        let listed = try #require(try world.contract("8000"))
        #expect(listed["status"] as? String == "canceled")
        #expect(listed["lapsed"] as? Bool == false, "\(listed)")
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        let findings = try doctor.jsonObject()["findings"] as? [[String: Any]] ?? []
        #expect(!findings.contains { $0["check"] as? String == "lapsed" }, "\(findings)")

        // A newer period Apple signs lifts the extension: then Apple's dates decide again.
        let renewed = try world.notification(
            "DID_RENEW", signed: t0 + 30 * day, tx: world.transaction("8001", original: "8000", period: 1), autoRenew: 0)
        try cli.ok(["notify", "-q"] + world.trust, stdin: renewed)
        let lifted = try entitled(cli, "u8000", [])
        #expect(lifted.status == 1, "\(lifted.answer)")
        #expect(lifted.answer["status"] as? String == "lapsed", "\(lifted.answer)")
    }
}
