import Foundation
import JWSForge
import Testing

/// Missed events found, not guessed: a subscription whose paid period ended with nothing from Apple
/// since (no renewal, expiry, grace period or billing retry) is "lapsed" in `doctor`, `contracts
/// list/show` and `entitled`, never a bare `active`; its status column stays `active`. Runs on
/// SQLite and, in the MariaDB pass, on MariaDB.
@Suite("lapsed contracts, end to end")
struct LapsedE2ETests {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    let cli: CLI
    let world: AppleWorld
    let now: Int64
    /// alice's: paid until ten days ago. bob's: paid until 12 hours ago. carol's: paid for ten more days.
    let alice = "2000000500000001"
    let bob = "2000000600000001"
    let carol = "2000000700000001"
    let aliceUntil: Int64
    let bobUntil: Int64

    init() throws {
        cli = try CLI()
        world = try AppleWorld(cli: cli)
        now = Int64(Date().timeIntervalSince1970) * 1000
        aliceUntil = now - 10 * Self.day
        bobUntil = now - 12 * Self.hour
        try world.database(orders: [
            ("a1ce0000-0000-4000-8000-00000000000a", "alice"), ("b0b00000-0000-4000-8000-00000000000b", "bob"),
            ("ca201000-0000-4000-8000-00000000000c", "carol"),
        ])
        try buy(alice, token: "a1ce0000-0000-4000-8000-00000000000a", until: aliceUntil)
        try buy(bob, token: "b0b00000-0000-4000-8000-00000000000b", until: bobUntil)
        try buy(carol, token: "ca201000-0000-4000-8000-00000000000c", until: now + 10 * Self.day)
    }

    /// A 30-day period of subscription `sub` ending at `end`.
    func period(_ sub: String, token: String, until end: Int64) -> TransactionPayload {
        TransactionPayload(
            transactionId: sub, originalTransactionId: sub, bundleId: AppleWorld.bundleId, productId: AppleWorld.product,
            purchaseDate: end - 30 * Self.day, originalPurchaseDate: end - 30 * Self.day, expiresDate: end,
            appAccountToken: token, signedDate: end - 30 * Self.day, environment: "Sandbox", transactionReason: "PURCHASE")
    }

    func buy(_ sub: String, token: String, until end: Int64) throws {
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: end - 30 * Self.day, tx: period(sub, token: token, until: end))
        try cli.ok(["notify", "-q"] + world.trust, stdin: jws)
    }

    static func iso(_ ms: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    func lapsedText(_ until: Int64) -> String { "lapsed: paid until \(Self.iso(until)), nothing from Apple since" }

    /// After a webhook outage many contracts lapse: a table shows their count first, in one
    /// finding whose fix fetches what Apple sent (`apple notifications sync`, then
    /// `apple reconcile --all --status …`), not one reconcile per contract; JSON keeps each one.
    @Test func manyLapsesAreOneCountedFinding() throws {
        for n in 2...5 {
            let token = "d0d0000\(n)-0000-4000-8000-00000000000d"
            let sub = "200000080000000\(n)"
            try cli.ok(["orders", "create", "--no", token, "--user", "user\(n)", "--product", AppleWorld.product, "-q"])
            try buy(sub, token: token, until: now - 3 * Self.day)
        }
        let table = try cli.run(["doctor", "--environment", "Sandbox"])
        #expect(table.status == 1, "\(table)")
        #expect(table.stdout.contains("5 contracts are paid until a past moment"), "\(table.stdout)")
        #expect(table.stdout.contains("iapctl apple notifications sync"), "\(table.stdout)")
        #expect(table.stdout.contains("iapctl apple reconcile --all --status active"), "\(table.stdout)")
        #expect(!table.stdout.contains("--contract"), "\(table.stdout)")
        #expect(table.stderr.contains("5 findings (5 lapsed)"), "\(table.stderr)")
        let json = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        let findings = try #require(try json.jsonObject()["findings"] as? [[String: Any]])
        #expect(findings.count == 5 && findings.allSatisfy { $0["check"] as? String == "lapsed" })
    }

    @Test func doctorListsContractsLapsedForADayWithTheReconcileFix() throws {
        let found = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(found.status == 1, "\(found)")
        let findings = try #require(try found.jsonObject()["findings"] as? [[String: Any]])
        #expect(findings.map { $0["check"] as? String } == ["lapsed"])
        let finding = try #require(findings.first)
        #expect(finding["key"] as? String == alice && finding["entity"] as? String == "contract")
        #expect((finding["problem"] as? String ?? "").contains(lapsedText(aliceUntil)))
        let fix = finding["fix"] as? String ?? ""
        #expect(fix.hasPrefix("iapctl apple reconcile --contract \(alice) --db "), "\(fix)")
        #expect(!fix.contains("contracts update"))

        // The threshold is an option in the one time grammar: 6h back reports bob's too.
        let recent = try cli.run(["doctor", "--environment", "Sandbox", "--lapsed-before", "6h", "-o", "ndjson"])
        #expect(recent.status == 1, "\(recent)")
        #expect(Set(try recent.ndjson().map { $0["key"] as? String ?? "" }) == [alice, bob])
        let bad = try cli.run(["doctor", "--lapsed-before", "yesterday"])
        #expect(bad.status == 64, "\(bad)")
        #expect(bad.stderr.contains("--lapsed-before"))

        // Apple's EXPIRED says what happened: nothing lapsed any more, the contract is expired.
        try expire(alice, token: "a1ce0000-0000-4000-8000-00000000000a", until: aliceUntil)
        let clean = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(clean.status == 0, "\(clean)")
    }

    func expire(_ sub: String, token: String, until end: Int64) throws {
        let jws = try world.notification(
            "EXPIRED", "VOLUNTARY", signed: end + Self.hour, tx: period(sub, token: token, until: end), autoRenew: 0)
        try cli.ok(["notify", "-q"] + world.trust, stdin: jws)
    }

    @Test func contractsListAndShowSayLapsedInsteadOfActive() throws {
        let list = try cli.ok(["contracts", "list", "-o", "json"]).jsonArray()
        let row = { (id: String) in list.first { $0["contract_id"] as? String == id } ?? [:] }
        // The stored status stays; `lapsed` and `paid_until_date` are added.
        #expect(row(alice)["status"] as? String == "active")
        #expect(row(alice)["lapsed"] as? Bool == true)
        #expect(row(alice)["paid_until_date_ms"] as? Int == Int(aliceUntil))
        #expect(row(bob)["lapsed"] as? Bool == true)
        #expect(row(carol)["lapsed"] as? Bool == false && row(carol)["paid_until_date"] is NSNull)

        let table = try cli.ok(["contracts", "list"]).stdout
        let aliceLine = table.split(separator: "\n").first { $0.contains(alice) } ?? ""
        #expect(aliceLine.contains("active (lapsed)"), "\(table)")
        let carolLine = table.split(separator: "\n").first { $0.contains(carol) } ?? ""
        #expect(carolLine.contains("active") && !carolLine.contains("lapsed"))

        let csv = try cli.ok(["contracts", "list", "-o", "csv"]).stdout
        let header = csv.split(separator: "\n").first ?? ""
        #expect(header.hasSuffix(",lapsed,paid_until_date"), "\(header)")

        let show = try cli.ok(["contracts", "show", alice, "-o", "json"]).jsonObject()
        let contract = try #require(show["contract"] as? [String: Any])
        #expect(contract["status"] as? String == "active" && contract["lapsed"] as? Bool == true)
        #expect(try cli.ok(["contracts", "show", alice]).stdout.contains("active (lapsed)"))

        try expire(alice, token: "a1ce0000-0000-4000-8000-00000000000a", until: aliceUntil)
        let after = try cli.ok(["contracts", "show", alice, "-o", "json"]).jsonObject()["contract"] as? [String: Any]
        #expect(after?["status"] as? String == "expired" && after?["lapsed"] as? Bool == false)
        #expect(!(try cli.ok(["contracts", "show", alice]).stdout.contains("lapsed:")))
    }

    @Test func entitledAfterTheEndWithNothingSinceAnswersNoLapsed() throws {
        let answer = try cli.run(["entitled", "--user", "alice", "-o", "json"])
        #expect(answer.status == 1, "\(answer)")
        let doc = try answer.jsonObject()
        #expect(doc["entitled"] as? Bool == false)
        #expect(doc["status"] as? String == "lapsed")
        #expect(doc["lapsed"] as? Bool == true)
        #expect(doc["paid_until_date_ms"] as? Int == Int(aliceUntil))
        #expect((doc["reason"] as? String ?? "").hasPrefix(lapsedText(aliceUntil)))
        let table = try cli.run(["entitled", "--user", "alice"])
        #expect(table.status == 1 && table.stdout.hasPrefix("no: " + lapsedText(aliceUntil)), "\(table)")
        #expect(table.stdout.contains(", as known now)"), "\(table)")
        #expect(table.stderr.contains("next step: ask Apple: iapctl apple reconcile --contract \(alice)"), "\(table)")

        // Inside the paid period: yes, not lapsed.
        let during = try cli.run(["entitled", "--user", "alice", "--at", Self.iso(aliceUntil - Self.day), "-o", "json"])
        #expect(during.status == 0, "\(during)")
        #expect(try during.jsonObject()["lapsed"] as? Bool == false)
        #expect(try cli.run(["entitled", "--user", "carol"]).status == 0)

        // Once Apple's EXPIRED is signed: expired from then on; before it was signed, still lapsed.
        try expire(alice, token: "a1ce0000-0000-4000-8000-00000000000a", until: aliceUntil)
        let expired = try cli.run(["entitled", "--user", "alice", "-o", "json"]).jsonObject()
        #expect(expired["status"] as? String == "expired" && expired["lapsed"] as? Bool == false)
        let between = try cli.run(["entitled", "--user", "alice", "--at", Self.iso(aliceUntil + 30 * 60_000), "-o", "json"])
        #expect(try between.jsonObject()["status"] as? String == "lapsed")
    }
}
