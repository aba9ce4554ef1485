import Foundation
import JWSForge
import MySQLStore
import PostgresStore
import SQLiteStore
import StoreSQL
import SubscriptionModel
import Testing

/// A realistic history replayed through the built binary, with times around *now* (so what is
/// current is current): three subscriptions with renewals, a cancellation, a late stale event, a
/// refund, a grace period, a transfer, and a bad correction undone.
///
/// - A (alice): bought at s, renewed at s+30d, s+60d, s+90d (paid until s+120d, in the future);
///   auto-renew turned off at s+95d (canceled, still entitled); an AUTO_RENEW_ENABLED signed at
///   s+50d arrives last (stale).
/// - B (bob): bought at s+10d, renewed at s+40d, that renewal refunded at s+45d (revoked).
/// - C (carol): bought at s+60d, billing failed at s+90d (grace period), then restored on dave's
///   device and transferred to dave.
/// - A3 (alice's third payment) is marked refunded by mistake (ticket T-9), then undone.
final class PowerHistory {
    static let day: Int64 = 86_400_000
    let cli: CLI
    let world: AppleWorld
    /// The start: 100 days ago, on a whole second.
    let s: Int64
    let tokenA = "a11ce000-0000-4000-8000-00000000000a"
    let tokenB = "b0b00000-0000-4000-8000-00000000000b"
    let tokenC = "ca201000-0000-4000-8000-00000000000c"
    let subA = "2000000100000001"
    let subB = "2000000200000001"
    let subC = "2000000300000001"
    /// Every notification sent, in delivery order.
    private(set) var sent: [String] = []
    /// Audit row id of the bad correction and of its undo.
    private(set) var badCorrection = 0
    private(set) var undo = 0

    /// Transaction ids of period n of a subscription.
    func tx(_ sub: String, _ n: Int) -> String { String(Int64(sub)! + Int64(n)) }

    init() throws {
        cli = try CLI()
        world = try AppleWorld(cli: cli)
        let now = Int64(Date().timeIntervalSince1970) * 1000
        s = now - 100 * Self.day
        try world.database(orders: [(tokenA, "alice"), (tokenB, "bob"), (tokenC, "carol")])
        let d = Self.day
        // A: purchase and three renewals, cancellation, stale re-enable delivered last.
        try send("SUBSCRIBED", "INITIAL_BUY", at: s, payment(subA, 0, token: tokenA, start: s))
        try send("DID_RENEW", nil, at: s + 30 * d, payment(subA, 1, token: tokenA, start: s))
        // B's purchase and renewal happen in between.
        try send("SUBSCRIBED", "INITIAL_BUY", at: s + 10 * d, payment(subB, 0, token: tokenB, start: s + 10 * d))
        try send("DID_RENEW", nil, at: s + 40 * d, payment(subB, 1, token: tokenB, start: s + 10 * d))
        try send(
            "REFUND", nil, at: s + 45 * d, payment(subB, 1, token: tokenB, start: s + 10 * d, revokedAt: s + 45 * d),
            autoRenew: nil)
        try send("DID_RENEW", nil, at: s + 60 * d, payment(subA, 2, token: tokenA, start: s))
        try send("SUBSCRIBED", "INITIAL_BUY", at: s + 60 * d, payment(subC, 0, token: tokenC, start: s + 60 * d))
        try send("DID_RENEW", nil, at: s + 90 * d, payment(subA, 3, token: tokenA, start: s))
        try send(
            "DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: s + 90 * d, payment(subC, 0, token: tokenC, start: s + 60 * d))
        try send(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: s + 95 * d,
            payment(subA, 3, token: tokenA, start: s), autoRenew: 0)
        try send(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", at: s + 50 * d,
            payment(subA, 1, token: tokenA, start: s), autoRenew: 1)
        // C moves to dave's device.
        let restored = try world.signedTransaction(payment(subC, 0, token: tokenC, start: s + 60 * d))
        try cli.ok(
            [
                "restore", "--user", "dave", "--apply", "--policy", "transfer", "--reason", "same Apple ID, new account",
                "--actor", "sam", "-q",
            ] + world.trust, stdin: restored)
        // The bad correction and its undo.
        try cli.ok([
            "orders", "update", tx(subA, 2), "--status", "refunded", "--reason", "customer asked for a refund",
            "--ticket", "T-9", "--actor", "pat", "-q",
        ])
        badCorrection = try #require(try latestAuditId())
        try cli.ok([
            "audit", "undo", String(badCorrection), "--reason", "refunded the wrong period", "--ticket", "T-9",
            "--actor", "sam", "-q",
        ])
        undo = try #require(try latestAuditId())
    }

    /// Period n of a monthly subscription that started at `start`.
    func payment(_ sub: String, _ n: Int, token: String, start: Int64, revokedAt: Int64? = nil) -> TransactionPayload {
        let begin = start + Int64(n) * 30 * Self.day
        return TransactionPayload(
            transactionId: tx(sub, n), originalTransactionId: sub, bundleId: AppleWorld.bundleId,
            productId: AppleWorld.product, purchaseDate: begin, originalPurchaseDate: start,
            expiresDate: begin + 30 * Self.day, appAccountToken: token, signedDate: begin, environment: "Sandbox",
            transactionReason: n == 0 ? "PURCHASE" : "RENEWAL", revocationDate: revokedAt,
            revocationReason: revokedAt == nil ? nil : 0)
    }

    /// Signs a notification and feeds it to `iapctl notify`; returns the JWS.
    @discardableResult
    func send(
        _ type: String, _ subtype: String?, at signed: Int64, _ tx: TransactionPayload, autoRenew: Int64? = 1,
        deliver: Bool = true
    ) throws -> String {
        let jws = try world.notification(type, subtype, signed: signed, tx: tx, autoRenew: autoRenew)
        if deliver {
            try cli.ok(["notify", "-q"] + world.trust, stdin: jws)
            sent.append(jws)
        }
        return jws
    }

    func latestAuditId() throws -> Int? {
        let rows = try cli.ok(["audit", "list", "--limit", "1", "-o", "json"]).jsonArray()
        return rows.first?["id"] as? Int
    }

    /// ISO-8601 of `ms`.
    static func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    func at(_ days: Int64, hours: Int64 = 0) -> String { Self.iso(s + days * Self.day + hours * 3_600_000) }

    /// Whether raw SQL can be run on the test database (to age ledger rows for doctor): the
    /// sqlite3 shell on SQLite, the server's client on the MySQL and PostgreSQL runs.
    static var hasSQLite3: Bool {
        E2EBackend.current != .sqlite || FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")
    }

    /// Writes every ledger row's `row_digest` again, as iapctl would have for the rows a test
    /// changed with SQL (aged, here): otherwise they are corrupt, and doctor says so.
    func resealLedger() throws {
        let store: any Store
        if let mysql = cli.mysql {
            store = try MySQLStore(
                url: try MySQLURL(parsing: mysql.server.url(database: mysql.database)), password: mysql.server.password)
        } else if let postgres = cli.postgres {
            store = try PostgresStore(
                url: try PostgresURL(parsing: postgres.server.url(database: postgres.database)),
                password: postgres.server.password)
        } else {
            store = try SQLiteStore(path: cli.dbPath, create: false)
        }
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        try store.write { _ in
            for row in try StoreTables.ledger.decode(connection.query(StoreTables.ledger.select(), [])) {
                let digest = RowDigest.ledger(row.entry, rawOf: row.rawOf, rawZstd: row.rawZstd)
                _ = try connection.run("UPDATE iap_ledger SET row_digest = ? WHERE id = ?", [.text(digest), .int(row.entry.id)])
            }
        }
    }

    /// Runs SQL on this history's database (sqlite3 shell, or the test server's client).
    func sql(_ statement: String) throws { try RealLifecycleE2ETests.sql(cli, statement) }
}

@Suite("support questions answered on a realistic history, end to end")
struct SupportQuestionsTests {
    // MARK: audit

    @Test func auditListShowAndUndo() throws {
        let h = try PowerHistory()
        let cli = h.cli
        // The bad correction and its undo are both under ticket T-9, newest first.
        let ticket = try cli.ok(["audit", "list", "--ticket", "T-9", "-o", "json"]).jsonArray()
        #expect(ticket.map { $0["id"] as? Int } == [h.undo, h.badCorrection])
        #expect(ticket.map { $0["actor"] as? String } == ["sam", "pat"])
        #expect(ticket.first?["command"] as? String == "audit undo \(h.badCorrection)")
        let byPat = try cli.ok(["audit", "list", "--actor", "pat", "-o", "json"]).jsonArray()
        #expect(byPat.map { $0["id"] as? Int } == [h.badCorrection])
        let future = try cli.ok(["audit", "list", "--since", "2999-01-01T00:00:00Z", "-o", "json"]).jsonArray()
        #expect(future.isEmpty)
        #expect(try cli.ok(["audit", "list", "--since", "1h", "-o", "json"]).jsonArray().count >= 2)

        // show: before/after of the bad correction.
        let shown = try cli.ok(["audit", "show", String(h.badCorrection), "-o", "json"]).jsonObject()
        let changes = try #require(shown["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["field"] as? String == "status")
        #expect(changes.first?["before"] as? String == "paid")
        #expect(changes.first?["after"] as? String == "refunded")
        #expect((shown["before"] as? [String: Any])?["status"] as? String == "paid")
        #expect((shown["after"] as? [String: Any])?["status"] as? String == "refunded")
        #expect((shown["audit"] as? [String: Any])?["ticket"] as? String == "T-9")
        let table = try cli.ok(["audit", "show", String(h.badCorrection)])
        #expect(table.stdout.contains("customer asked for a refund"))
        #expect(try cli.run(["audit", "show", "99999"]).status == 3)

        // The undo put the order back, and is itself audited.
        #expect(try cli.order(h.tx(h.subA, 2))["status"] as? String == "paid")
        let undoRow = try cli.ok(["audit", "show", String(h.undo), "-o", "json"]).jsonObject()
        #expect((undoRow["changes"] as? [[String: Any]])?.first?["after"] as? String == "paid")
        #expect((undoRow["audit"] as? [String: Any])?["reason"] as? String == "refunded the wrong period")

        // Undoing it again is refused (exit 4), and nothing is written; the
        // message names the undo rather than saying "changed since".
        let again = try cli.run(["audit", "undo", String(h.badCorrection), "--reason", "again"])
        #expect(again.status == 4, "\(again)")
        #expect(again.stderr.contains("already undone by #\(h.undo)"))
        // --reason is required; a creation cannot be undone.
        #expect(try cli.run(["audit", "undo", String(h.undo)]).status == 64)
        let created = try #require(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().last?["id"] as? Int)
        #expect(try cli.run(["audit", "undo", String(created), "--reason", "x"]).status == 4)

        // Dry run of undoing the undo: plans refunded again, writes nothing.
        let dry = try cli.run(["audit", "undo", String(h.undo), "--reason", "check", "--dry-run", "-o", "json"])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("refunded"))
        #expect(try cli.order(h.tx(h.subA, 2))["status"] as? String == "paid")
        #expect(try h.latestAuditId() == h.undo)
    }

    // MARK: doctor

    @Test func doctorReportsAHandOverrideAsInformationAndStaysGreen() throws {
        let h = try PowerHistory()
        let cli = h.cli
        try cli.ok(["contracts", "update", h.subA, "--status", "expired", "--reason", "goodwill hold", "-q"])
        let json = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(json.status == 0, "an override on purpose is not a problem to fix: \(json)")
        let document = try json.jsonObject()
        #expect(document["clean"] as? Bool == true)
        #expect((document["findings"] as? [[String: Any]])?.isEmpty == true)
        let overrides = try #require(document["overrides"] as? [[String: Any]])
        #expect(overrides.count == 1)
        #expect(overrides.first?["key"] as? String == h.subA)
        #expect((overrides.first?["fix"] as? String ?? "").contains("--clear-override status"))
        let table = try cli.run(["doctor", "--environment", "Sandbox"])
        #expect(table.status == 0, "\(table)")
        #expect(table.stderr.contains("information, not a finding: contract \(h.subA)"), "\(table.stderr)")
        #expect(table.stderr.contains("1 hand override in force (information)"), "\(table.stderr)")
    }

    @Test func doctorIsCleanOnTheHistoryAndFindsEachPlantedProblem() throws {
        let h = try PowerHistory()
        let cli = h.cli
        let clean = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(clean.status == 0, "\(clean)")
        #expect(try clean.jsonObject()["clean"] as? Bool == true)

        // Plant one problem per check.
        try cli.ok(["contracts", "update", h.subB, "--status", "active", "--reason", "plant", "-q"])
        try cli.ok(["contracts", "update", h.subA, "--status", "expired", "--reason", "plant", "-q"])
        let eve = try cli.createOrder(user: "eve", product: AppleWorld.product)
        try cli.ok(["orders", "update", eve, "--status", "paid", "--reason", "plant", "-q"])
        try cli.ok(["orders", "update", h.tx(h.subA, 1), "--user", "mallory", "--reason", "plant", "-q"])
        let frank = try cli.createOrder(user: "frank", product: AppleWorld.product)
        try cli.ok(["orders", "update", frank, "--origin-no", "2000000999999999", "--reason", "plant", "-q"])
        let gina = try cli.createOrder(user: "gina", product: AppleWorld.product, no: h.tokenA.uppercased())
        var expected: Set<String> = [
            // subB: Apple refunded its current period, so the facts say revoked too.
            "lapsed \(h.subB)",
            "paid-without-transaction \(eve)",
            "mixed-owners \(h.tx(h.subA, 1))", "order-without-contract \(frank)", "shared-id \(gina)",
        ]
        if PowerHistory.hasSQLite3 {
            let stray = try h.world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: h.s,
                tx: h.payment("2000000400000001", 0, token: "d0d00000-0000-4000-8000-00000000000d", start: h.s))
            #expect(try cli.run(["notify", "-q"] + h.world.trust, stdin: stray).status == 3)
            let fresh = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"]).jsonObject()
            #expect(!(fresh["findings"] as? [[String: Any]] ?? []).contains { $0["check"] as? String == "old-unmatched" })
            try h.sql("UPDATE iap_ledger SET received_at = received_at - 2 * 86400000 WHERE verdict = 'unmatched'")
            try h.resealLedger()
            let ledgerId = try #require(
                try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int)
            expected.insert("old-unmatched \(ledgerId)")
        }
        let found = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(found.status == 1, "\(found)")
        let findings = try #require(try found.jsonObject()["findings"] as? [[String: Any]])
        let keys = findings.map { f -> String in
            let check = f["check"] as? String ?? "?"
            let key = f["key"] as? String ?? "?"
            // Orders are reported by number; the mixed-owners one is easier to name by its trade_no.
            if check == "mixed-owners", let order = try? cli.order(key) { return "\(check) \(order["trade_no"] as? String ?? key)" }
            return "\(check) \(key)"
        }
        #expect(Set(keys) == expected, "\(found.stdout)")
        #expect(keys.count == expected.count)
        for finding in findings {
            #expect((finding["fix"] as? String)?.hasPrefix("iapctl ") == true)
        }
        let fixFor = { (check: String) in findings.first { $0["check"] as? String == check }?["fix"] as? String ?? "" }
        #expect(fixFor("lapsed").hasPrefix("iapctl apple reconcile --contract \(h.subB) --db "))
        // subA's and subB's statuses were set by hand: overrides in force are information, not
        // findings (a nightly doctor stays green); each is listed with the command that lifts it.
        let overrides = try #require(try found.jsonObject()["overrides"] as? [[String: Any]])
        #expect(
            Set(overrides.map { "\($0["check"] as? String ?? "?") \($0["key"] as? String ?? "?")" })
                == ["status-vs-facts \(h.subA)", "status-vs-facts \(h.subB)"], "\(overrides)")
        #expect(
            overrides.contains {
                ($0["fix"] as? String ?? "").contains("contracts update \(h.subA) --clear-override status")
                    && ($0["problem"] as? String ?? "").contains("held by hand (override #")
            }, "\(overrides)")
        #expect(fixFor("mixed-owners").contains("--user alice"))

        // The table names the fixes too, and the overrides as information on stderr.
        let table = try cli.run(["doctor", "--environment", "Sandbox"])
        #expect(table.status == 1)
        #expect(!table.stdout.contains("--clear-override"))
        #expect(table.stderr.contains("information, not a finding: contract \(h.subA)"), "\(table.stderr)")
        #expect(table.stderr.contains("iapctl contracts update \(h.subA) --clear-override status"))
        try cli.ok(["contracts", "update", h.subA, "--clear-override", "status", "--reason", "doctor", "-q"])
        let lifted = try cli.ok(["contracts", "show", h.subA, "-o", "json"]).jsonObject()
        #expect((lifted["contract"] as? [String: Any])?["status"] as? String == "canceled", "back to what the facts derive")
        let after = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"]).jsonObject()
        #expect((after["findings"] as? [[String: Any]])?.count == expected.count)
        #expect((after["overrides"] as? [[String: Any]])?.count == 1)

        // A database that accepts only Production: every Sandbox row is a finding (only when
        // --environment says so; left out, doctor says how to check instead).
        let production = try cli.run(["doctor", "--environment", "Production", "-o", "json"]).jsonObject()
        let environment = (production["findings"] as? [[String: Any]] ?? []).filter { $0["check"] as? String == "environment" }
        #expect(environment.contains { $0["key"] as? String == h.subA })
        #expect(environment.contains { $0["key"] as? String == h.tokenB })
    }

    // MARK: entitlement at a time

    @Test func entitledAnswersForPastMomentsWithReasonsAndExitCodes() throws {
        let h = try PowerHistory()
        let cli = h.cli
        func ask(_ user: String, _ at: String?) throws -> (Int32, [String: Any]) {
            let r = try cli.run(["entitled", "--user", user, "-o", "json"] + (at.map { ["--at", $0] } ?? []))
            return (r.status, try r.jsonObject())
        }
        // alice: canceled (auto-renew off) but her last paid period runs into the future.
        var (status, answer) = try ask("alice", nil)
        #expect(status == 0)
        #expect(answer["entitled"] as? Bool == true)
        #expect(answer["status"] as? String == "canceled")
        #expect(answer["transaction_id"] as? String == h.tx(h.subA, 3))
        // While the bad correction (made later) had not happened: the period A3 was paid.
        (status, answer) = try ask("alice", h.at(61))
        #expect(status == 0)
        #expect(answer["transaction_id"] as? String == h.tx(h.subA, 2))
        // bob: entitled by his renewal until Apple refunded it at s+45d.
        (status, answer) = try ask("bob", h.at(41))
        #expect(status == 0, "\(answer)")
        #expect(answer["contract_id"] as? String == h.subB)
        (status, answer) = try ask("bob", h.at(46))
        #expect(status == 1)
        #expect(answer["entitled"] as? Bool == false)
        #expect(answer["status"] as? String == "revoked")
        #expect(try cli.run(["entitled", "--user", "bob"]).status == 1)
        // Before his first purchase bob had nothing.
        (status, answer) = try ask("bob", h.at(5))
        #expect(status == 1)
        #expect(answer["status"] as? String == "not-yet")
        // carol was in the grace period at s+91d; the contract moved to dave later.
        (status, answer) = try ask("carol", h.at(91))
        #expect(status == 0, "\(answer)")
        #expect(answer["status"] as? String == "grace_period")
        #expect(try ask("carol", nil).0 == 1)
        #expect(try ask("dave", nil).0 == 0)
        #expect(try ask("dave", h.at(91)).0 == 1)
        // --product narrows; a product nobody bought is "no".
        #expect(try cli.run(["entitled", "--user", "alice", "--product", AppleWorld.product]).status == 0)
        #expect(try cli.run(["entitled", "--user", "alice", "--product", "com.example.other"]).status == 1)
        let table = try cli.run(["entitled", "--user", "alice"])
        #expect(table.stdout.hasPrefix("yes: paid period \(h.tx(h.subA, 3))"))
        #expect(try cli.run(["entitled", "--user", "alice", "--at", "yesterday-ish"]).status == 64)
    }

    @Test func showAndListAsOf() throws {
        let h = try PowerHistory()
        let cli = h.cli
        let then = try cli.ok(["contracts", "show", h.subB, "--as-of", h.at(41), "-o", "json"]).jsonObject()
        let asOf = try #require(then["as_of"] as? [String: Any])
        #expect(asOf["entitled"] as? Bool == true)
        #expect((then["contract"] as? [String: Any])?["status"] as? String == "active")
        let orders = try #require(then["orders"] as? [[String: Any]])
        #expect(orders.count == 2)
        #expect(orders.allSatisfy { $0["status"] as? String == "paid" })
        #expect((then["events"] as? [[String: Any]])?.count == 2)
        let now = try cli.ok(["contracts", "show", h.subB, "-o", "json"]).jsonObject()
        #expect((now["contract"] as? [String: Any])?["status"] as? String == "revoked")
        #expect(try cli.run(["contracts", "show", "999", "--as-of", h.at(41)]).status == 3)

        // carol's order is dave's now, hers then.
        #expect(try cli.orders(["--user", "carol"]).isEmpty)
        let carolThen = try cli.ok(["orders", "list", "--user", "carol", "--as-of", h.at(91), "-o", "json"]).jsonArray()
        #expect(carolThen.map { $0["trade_no"] as? String } == [h.tx(h.subC, 0)])
        #expect(carolThen.first?["user_id"] as? String == "carol")
        // bob's refunded renewal was paid at s+41d; the refund is seen at s+46d.
        let bobThen = try cli.ok(["orders", "list", "--user", "bob", "--as-of", h.at(41), "-o", "json"]).jsonArray()
        #expect(bobThen.first { $0["trade_no"] as? String == h.tx(h.subB, 1) }?["status"] as? String == "paid")
        let bobLater = try cli.ok(["orders", "list", "--user", "bob", "--as-of", h.at(46), "-o", "json"]).jsonArray()
        #expect(bobLater.first { $0["trade_no"] as? String == h.tx(h.subB, 1) }?["status"] as? String == "refunded")
        // Before the renewal existed, only the first order is listed.
        let early = try cli.ok(["orders", "list", "--user", "bob", "--as-of", h.at(20), "-o", "json"]).jsonArray()
        #expect(early.map { $0["trade_no"] as? String } == [h.tx(h.subB, 0)])
    }

    // MARK: explain

    @Test func explainTracesEveryEventWithItsRule() throws {
        let h = try PowerHistory()
        let cli = h.cli
        let doc = try cli.ok(["contracts", "explain", h.subA, "-o", "json"]).jsonObject()
        let trace = try #require(doc["trace"] as? [[String: Any]])
        let events = trace.filter { $0["ledger_id"] is Int }
        #expect(
            events.map { $0["event"] as? String } == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED", "DID_RENEW",
                "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED",
            ])
        #expect(events.map { $0["verdict"] as? String } == ["applied", "applied", "stale", "applied", "applied", "applied"])
        #expect(events.first?["rule"] as? String == "purchase")
        #expect(events.first?["status_after"] as? String == "active")
        let cancel = try #require(events.last)
        #expect(cancel["rule"] as? String == "auto-renew off")
        #expect(cancel["status_before"] as? String == "active")
        #expect(cancel["status_after"] as? String == "canceled")
        let stale = events[2]
        let why = try #require(stale["why"] as? String)
        #expect(why.contains("stale"))
        #expect(why.contains("AUTO_RENEW_DISABLED"), "\(why)")
        // The bad correction and its undo are steps too, with actor, reason and ticket.
        let manual = trace.filter { $0["verdict"] as? String == "audited" }
        #expect(manual.count == 2)
        #expect((manual.first?["why"] as? String)?.contains("T-9") == true)
        #expect((doc["current"] as? [String: Any])?["status"] as? String == "canceled")
        // Which signed fact decided each field (the engine's own derivation).
        let fields = try #require(doc["fields"] as? [[String: Any]])
        let status = try #require(fields.first { $0["field"] as? String == "status" })
        #expect(status["value"] as? String == "canceled")
        #expect((status["fact"] as? String)?.contains("auto-renew off") == true, "\(status)")
        #expect(status["signed_date"] != nil && status["source"] as? String == "apple")
        let product = try #require(fields.first { $0["field"] as? String == "product_id" })
        #expect((product["fact"] as? String)?.contains("current period: transaction") == true, "\(product)")
        // Steps are numbered in order; the table ends in the current state.
        #expect(trace.map { $0["step"] as? Int } == Array(1...trace.count).map { Optional($0) })
        let table = try cli.ok(["contracts", "explain", h.subB])
        #expect(table.stdout.contains("refund"))
        #expect(table.stdout.contains("Current state"))
        #expect(try cli.run(["contracts", "explain", "42"]).status == 3)
    }

    // MARK: redaction

    // Masks are per-run aliases (`user-1`, `order-2`), made by field before
    // layout, and cover actors, e-mail addresses and phone numbers; every command × every format.
    @Test func redactLeaksNoOriginalIdAndMasksConsistently() throws {
        let h = try PowerHistory()
        let cli = h.cli
        try cli.ok([
            "orders", "update", h.tokenB, "--status", "refunded", "--reason",
            "mail from bob.smith+iap@example.com, called back on +44 20 7946 0958", "--ticket", "T-77",
            "--actor", "quinn", "-q",
        ])
        // Every sensitive value in the database.
        let orders = try cli.orders()
        var secrets = Set<String>([
            "alice", "bob", "carol", "dave", "sam", "pat", "quinn", h.tokenA, h.tokenB, h.tokenC,
            "bob.smith+iap@example.com", "example.com", "7946 0958", "7946",
        ])
        for order in orders {
            for key in ["no", "user_id", "trade_no", "origin_no"] { if let v = order[key] as? String { secrets.insert(v) } }
        }
        for sub in [h.subA, h.subB, h.subC] {
            let shown = try cli.ok(["contracts", "show", sub, "-o", "json"]).jsonObject()
            for event in shown["events"] as? [[String: Any]] ?? [] {
                for key in ["notification_uuid", "transaction_id", "original_transaction_id", "app_account_token"] {
                    if let v = event[key] as? String { secrets.insert(v) }
                }
            }
        }
        #expect(secrets.count > 20)
        // A prefix of an id is a leak too (a cut `7b1f0c1e-…`).
        let prefixes = secrets.filter { $0.count >= 16 }.map { String($0.prefix(8)) }
        let commands: [[String]] = [
            ["orders", "list"], ["orders", "show", h.tokenA], ["orders", "show", h.subA],
            ["contracts", "list"], ["contracts", "show", h.subA], ["contracts", "show", h.subC],
            ["contracts", "show", h.subB, "--as-of", h.at(41)],
            ["contracts", "explain", h.subA], ["contracts", "explain", h.subB],
            ["audit", "list"], ["audit", "show", String(h.badCorrection)],
            ["entitled", "--user", "alice"], ["entitled", "--user", "carol", "--at", h.at(91)],
            ["doctor", "--environment", "Production"],
            ["contracts", "show", "2000000999999999"],
            ["notify"] + h.world.trust,
        ]
        for args in commands {
            for format in ["table", "json", "ndjson", "csv"] {
                let stdin = args.first == "notify" ? h.sent.prefix(3).joined(separator: "\n") : nil
                let r = try cli.run(args + ["--redact", "-o", format], stdin: stdin)
                #expect([0, 1, 3].contains(r.status), "\(args) \(format): \(r)")
                #expect(!r.stdout.isEmpty || !r.stderr.isEmpty)
                for secret in secrets {
                    #expect(!Self.holdsWord(r.stdout, secret), "\(args) \(format) leaks \(secret) on stdout")
                    #expect(!Self.holdsWord(r.stderr, secret), "\(args) \(format) leaks \(secret) on stderr")
                }
                for prefix in prefixes {
                    #expect(!r.stdout.contains(prefix), "\(args) \(format) leaks \(prefix)…")
                }
            }
        }
        // Same value, same alias within a run; aliases say the kind and nothing else.
        let masked = try cli.ok(["orders", "list", "-o", "json", "--redact"]).jsonArray()
        #expect(masked.count == orders.count)
        let users = Set(masked.compactMap { $0["user_id"] as? String })
        #expect(users.count == Set(orders.compactMap { $0["user_id"] as? String }).count)
        #expect(users.allSatisfy { $0.wholeMatch(of: /user-[0-9]+/) != nil })
        #expect(masked.allSatisfy { ($0["no"] as? String)?.wholeMatch(of: /order-[0-9]+/) != nil })
        #expect(masked.allSatisfy { ($0["trade_no"] as? String).map { $0.hasPrefix("txn-") } ?? true })
        // A renewal's origin_no and its contract's id are the same value: the same alias.
        let contracts = try cli.ok(["contracts", "list", "-o", "json", "--redact"]).jsonArray()
        #expect(!contracts.isEmpty)
        // Dates and statuses are kept; the reason keeps its words; without --redact nothing is masked.
        #expect(masked.contains { $0["status"] as? String == "refunded" })
        let audit = try cli.ok(["audit", "list", "--limit", "1", "-o", "json", "--redact"]).jsonArray()
        #expect(audit.first?["reason"] as? String == "mail from email-1, called back on phone-1")
        #expect((audit.first?["actor"] as? String)?.wholeMatch(of: /actor-[0-9]+/) != nil)
        #expect(audit.first?["ticket"] as? String == "T-77")
        #expect(try cli.ok(["orders", "list"]).stdout.contains("alice"))
    }

    /// Whether `text` holds `word` not as part of a longer word.
    static func holdsWord(_ text: String, _ word: String) -> Bool {
        var search = text[...]
        while let range = search.range(of: word) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            let isPart = { (c: Character?) in c.map { $0.isLetter || $0.isNumber } ?? false }
            if !isPart(before), !isPart(after) { return true }
            search = text[range.upperBound...]
        }
        return false
    }

    // MARK: gap report

    @Test func gapReportFindsWhatAppleSentButWasNeverAppliedAndReplaysIt() throws {
        let h = try PowerHistory()
        let cli = h.cli
        let d = PowerHistory.day
        // Apple billed carol's subscription again at s+92d, but the webhook never got it.
        let missingUUID = "9a9a0000-0000-4000-8000-000000000001"
        let missing = try h.world.notification(
            "DID_RENEW", "BILLING_RECOVERY", uuid: missingUUID, signed: h.s + 92 * d,
            tx: h.payment(h.subC, 1, token: h.tokenC, start: h.s + 60 * d))
        func item(_ jws: String, _ results: [String]) -> [String: Any] {
            [
                "signedPayload": jws,
                "sendAttempts": results.enumerated().map {
                    ["attemptDate": h.s + Int64($0.offset) * 3_600_000, "sendAttemptResult": $0.element]
                },
            ]
        }
        func response(_ items: [[String: Any]]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: ["notificationHistory": items, "hasMore": false]), as: UTF8.self)
        }
        // Two saved responses, one per line: most of what was delivered, plus the missing one.
        let first = try response(h.sent.prefix(5).map { item($0, ["SUCCESS"]) })
        let second = try response(
            h.sent.dropFirst(5).map { item($0, ["SUCCESS"]) } + [item(missing, ["TIMED_OUT", "TIMED_OUT", "NO_RESPONSE"])])
        let file = try cli.write("history.ndjson", first + "\n" + second + "\n")

        let report = try cli.run(["notify", "--gap-report", file, "-o", "json"] + h.world.trust)
        #expect(report.status == 1, "\(report)")
        let gaps = try report.jsonArray()
        #expect(gaps.map { $0["notification_uuid"] as? String } == [missingUUID])
        let gap = try #require(gaps.first)
        #expect(gap["notification_type"] as? String == "DID_RENEW")
        #expect(gap["transaction_id"] as? String == h.tx(h.subC, 1))
        #expect(gap["attempts"] as? Int == 3)
        #expect(gap["last_attempt_result"] as? String == "NO_RESPONSE")
        #expect(gap["ledger"] as? String == "never received")
        #expect(gap["verdict"] as? String == "missing")
        #expect(
            try cli.ok(["contracts", "show", h.subC, "-o", "json"]).jsonObject()["contract"].map {
                ($0 as? [String: Any])?["status"] as? String
            } == "grace_period")

        // --dry-run --apply writes nothing; --apply replays exactly the missing one.
        let ledgerBefore = try cli.counts()["ledger"] as? Int
        let dry = try cli.run(["notify", "--gap-report", file, "--apply", "--dry-run", "-o", "json"] + h.world.trust)
        #expect(dry.status == 0, "\(dry)")
        #expect(try dry.jsonArray().map { $0["verdict"] as? String } == ["applied"])
        #expect(try cli.counts()["ledger"] as? Int == ledgerBefore)
        let applied = try cli.run(["notify", "--gap-report", file, "--apply", "-o", "json"] + h.world.trust)
        #expect(applied.status == 0, "\(applied)")
        #expect(try applied.jsonArray().map { $0["verdict"] as? String } == ["applied"])
        #expect(try cli.counts()["ledger"] as? Int == (ledgerBefore ?? 0) + 1)
        let contract = try cli.ok(["contracts", "show", h.subC, "-o", "json"]).jsonObject()["contract"] as? [String: Any]
        #expect(contract?["status"] as? String == "active")
        #expect(contract?["user_id"] as? String == "dave")
        // Nothing is missing any more.
        let again = try cli.run(["notify", "--gap-report", file] + h.world.trust)
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.isEmpty)
        // Not a history response: 65; --apply alone is a usage error.
        let bad = try cli.write("bad.json", "{\"signedPayload\": \"x\"}")
        #expect(try cli.run(["notify", "--gap-report", bad] + h.world.trust).status == 65)
        #expect(try cli.run(["notify", "--apply"] + h.world.trust, stdin: missing).status == 64)
    }
}
