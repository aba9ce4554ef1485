import Foundation
import JWSForge
import Testing

/// `grants add|list|revoke`: access given by hand in its own table, honoured by `entitled` exactly
/// while `starts_at <= t < until_date` and not revoked, undone by `audit undo`, batches that report
/// every bad row at once, and never a change to orders or contracts. Runs on SQLite and, in the
/// MariaDB pass, on MariaDB.
@Suite("grants: access by hand, end to end")
struct GrantsE2ETests {
    let product = AppleWorld.product

    static func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    /// Now in ms, rounded down to a whole second (the times given are ISO-8601 to the second).
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) * 1000 }

    func entitled(_ cli: CLI, _ user: String, _ extra: [String]) throws -> (status: Int32, answer: [String: Any]) {
        let r = try cli.run(["entitled", "--user", user, "-o", "json"] + extra)
        return (r.status, try r.jsonObject())
    }

    /// The grants as `grants list --all -o json` shows them.
    func grants(_ cli: CLI, _ extra: [String] = []) throws -> [[String: Any]] {
        try cli.ok(["grants", "list", "--all", "-o", "json"] + extra).jsonArray()
    }

    @Test func entitledHonoursAGrantExactlyUntilItsEnd() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        try cli.ok(["orders", "create", "--user", "u1", "--product", product])
        let until = Self.now() + 86_400_000
        let before = Self.iso(until - 1000)
        // Without a grant: no.
        let without = try entitled(cli, "u1", ["--at", before])
        #expect(without.status == 1, "\(without.answer)")
        #expect(without.answer["granted"] as? Bool == false)

        // A dry run writes nothing.
        let dry = try cli.ok([
            "grants", "add", "--user", "u1", "--product", product, "--until", Self.iso(until), "--reason", "locked out",
            "--ticket", "T-1", "--dry-run",
        ])
        #expect(dry.stdout.contains("would add"), "\(dry)")
        #expect(try grants(cli).isEmpty)

        let added = try cli.ok([
            "grants", "add", "--user", "u1", "--product", product, "--until", Self.iso(until), "--reason", "locked out",
            "--ticket", "T-1", "-o", "json",
        ]).jsonArray()
        let auditId = try #require(added.first?["audit_id"] as? Int)
        let rows = try grants(cli)
        #expect(rows.count == 1)
        #expect(rows.first?["until_date_ms"] as? Int64 == until || (rows.first?["until_date_ms"] as? Int).map(Int64.init) == until)

        // One second before its end: yes, and it says why; at its end and a second after: no.
        let yes = try entitled(cli, "u1", ["--at", before])
        #expect(yes.status == 0, "\(yes.answer)")
        #expect(yes.answer["granted"] as? Bool == true)
        #expect(yes.answer["status"] as? String == "granted")
        #expect(yes.answer["grant_audit_id"] as? Int == auditId)
        #expect(yes.answer["grant_ticket"] as? String == "T-1")
        let reason = try #require(yes.answer["reason"] as? String)
        #expect(reason == "granted by hand until \(Self.iso(until)), audit #\(auditId), ticket T-1", "\(reason)")
        let table = try cli.run(["entitled", "--user", "u1", "--at", before])
        #expect(table.status == 0)
        #expect(table.stdout.hasPrefix("yes: granted by hand until \(Self.iso(until))"), "\(table)")
        for after in [until, until + 1000] {
            let no = try entitled(cli, "u1", ["--at", Self.iso(after)])
            #expect(no.status == 1, "at \(Self.iso(after)): \(no.answer)")
            #expect(no.answer["granted"] as? Bool == false)
        }
        // Another product: no grant.
        #expect(try entitled(cli, "u1", ["--at", before, "--product", "com.example.other"]).status == 1)
        // Before the grant was given (a second before now - 1 minute): no.
        #expect(try entitled(cli, "u1", ["--at", Self.iso(Self.now() - 60_000)]).status == 1)
        // The order is as it was: a grant never touches money rows.
        let order = try #require(try cli.ok(["orders", "list", "--user", "u1", "-o", "json"]).jsonArray().first)
        #expect(order["status"] as? String == "pending")
    }

    @Test func anEndNotAfterNowIsRefusedAndChangesNothing() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        let past = try cli.run([
            "grants", "add", "--user", "u1", "--product", product, "--until", Self.iso(Self.now() - 1000), "--reason", "x",
        ])
        #expect(past.status == 65, "\(past)")
        #expect(past.stderr.contains("not after now"), "\(past)")
        #expect(try cli.run(["grants", "add", "--user", "u1", "--product", product, "--for", "7d"]).status == 64)
        #expect(
            try cli.run(["grants", "add", "--user", "u1", "--product", product, "--for", "soon", "--reason", "x"]).status == 64)
        #expect(
            try cli.run([
                "grants", "add", "--user", "u1", "--product", product, "--for", "7d", "--until", "2030-01-01", "--reason", "x",
            ]).status == 64)
        #expect(try grants(cli).isEmpty)
    }

    @Test func revokeAndAuditUndo() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        try cli.ok(["orders", "create", "--user", "u2", "--product", product])
        let added = try cli.ok([
            "grants", "add", "--user", "u2", "--product", product, "--for", "7d", "--reason", "goodwill", "-o", "json",
        ]).jsonArray()
        let addAudit = try #require(added.first?["audit_id"] as? Int)
        let id = try #require(added.first?["key"] as? String)
        #expect(try entitled(cli, "u2", []).status == 0)
        // The grant's audit row says how to undo it (a grant given is undone by revoking it).
        let shown = try cli.ok(["audit", "show", String(addAudit)])
        #expect(shown.stdout.contains("iapctl audit undo \(addAudit)"), "\(shown)")

        // A dry run of the revoke changes nothing.
        try cli.ok(["grants", "revoke", id, "--reason", "restored", "--dry-run"])
        #expect(try entitled(cli, "u2", []).status == 0)
        #expect(try cli.run(["grants", "revoke", id]).status == 64)  // no --reason

        let revoked = try cli.ok(["grants", "revoke", id, "--reason", "restored", "--ticket", "T-2", "-o", "json"]).jsonArray()
        #expect(revoked.first?["result"] as? String == "updated", "\(revoked)")
        let revokeAudit = try #require(revoked.first?["audit_id"] as? Int)
        #expect(try entitled(cli, "u2", []).status == 1)
        #expect(try cli.ok(["grants", "list", "-o", "json"]).jsonArray().isEmpty)
        #expect(try grants(cli).first?["revoked_by"] as? String == "e2e-user: restored")
        let again = try cli.run(["grants", "revoke", id, "--reason", "again"])
        #expect(again.status == 4, "\(again)")
        #expect(try cli.run(["grants", "revoke", "999", "--reason", "x"]).status == 3)

        // Undo of the revoke: in force again; undo of the add: revoked.
        try cli.ok(["audit", "undo", String(revokeAudit), "--reason", "revoked by mistake"])
        #expect(try entitled(cli, "u2", []).status == 0)
        try cli.ok(["audit", "undo", String(addAudit), "--reason", "given by mistake"])
        #expect(try entitled(cli, "u2", []).status == 1)
        #expect(try grants(cli).first?["revoked_at"] as? String != nil)
        #expect(try cli.run(["audit", "undo", String(addAudit), "--reason", "twice"]).status == 4)
        // The audit trail names the grant and holds its JSON before and after.
        let trail = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { $0["entity"] as? String == "grant" }
        #expect(trail.count == 4, "\(trail)")
    }

    @Test func aBatchReportsEveryBadRowAndGivesNothing() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        let bad = try cli.write(
            "bad.ndjson",
            """
            {"user": "u1", "product": "\(product)", "for": "7d"}
            {"user": "u2", "product": "\(product)"}
            {"user": "u3", "product": "\(product)", "until": "2001-01-01T00:00:00Z"}
            {"user": "u4", "prodcut": "\(product)", "for": "7d"}
            {"user": "u1", "product": "\(product)", "for": "2w"}
            {"user": "u5", "product": "\(product)", "for": "7x"}

            """)
        let r = try cli.run(["grants", "add", "--from", bad, "--reason", "outage"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("5 of 6 rows"), "\(r)")
        for line in 2...6 { #expect(r.stderr.contains("line \(line):"), "line \(line): \(r)") }
        #expect(!r.stderr.contains("line 1:"), "\(r)")
        #expect(r.stderr.contains("did you mean 'product'"), "\(r)")
        #expect(try grants(cli).isEmpty)

        let good = try cli.write(
            "good.csv", "user,product,for,ticket\nu1,\(product),7d,T-1\nu2,\(product),2w,\n")
        let done = try cli.ok(["grants", "add", "--from", good, "--reason", "outage", "-o", "json"]).jsonArray()
        #expect(done.count == 2)
        let rows = try grants(cli)
        #expect(rows.map { $0["user_id"] as? String } == ["u1", "u2"])
        #expect(rows.first?["ticket"] as? String == "T-1")
        #expect(try cli.run(["grants", "add", "--from", good, "--user", "u9", "--reason", "x"]).status == 64)
    }

    @Test func aGrantBesideAnExpiredPurchaseShowsInContractsShowAndDoctor() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = "3c1f6b0e-7a52-4d8e-9f10-000000007000"
        try world.database(orders: [(token, "u7")])
        let buy = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0,
            tx: world.transaction("7000", original: "7000", token: token))
        try cli.ok(["notify", "-q"] + world.trust, stdin: buy)
        // Paid in 2025 for 30 days: not entitled now by the purchase.
        #expect(try entitled(cli, "u7", []).status == 1)
        let before = try cli.ok(["contracts", "show", "7000", "-o", "json"]).jsonObject()
        try cli.ok(["grants", "add", "--user", "u7", "--product", product, "--for", "2d", "--reason", "paid, locked out"])
        try cli.ok(["grants", "add", "--user", "nobody", "--product", product, "--for", "30d", "--reason", "trial"])
        let yes = try entitled(cli, "u7", [])
        #expect(yes.status == 0, "\(yes.answer)")
        #expect(yes.answer["granted"] as? Bool == true)
        // The contract keeps Apple's word; show lists the grant beside it.
        let shown = try cli.ok(["contracts", "show", "7000", "-o", "json"]).jsonObject()
        let contract = try #require(shown["contract"] as? [String: Any])
        let contractBefore = try #require(before["contract"] as? [String: Any])
        #expect(contract["status"] as? String == contractBefore["status"] as? String)
        #expect(contract["expires_date"] as? String == contractBefore["expires_date"] as? String)
        let listed = try #require(shown["grants"] as? [[String: Any]])
        #expect(listed.map { $0["user_id"] as? String } == ["u7"])
        let table = try cli.ok(["contracts", "show", "7000"])
        #expect(table.stdout.contains("Grants by hand in force (1"), "\(table)")
        // doctor: information, not findings (the lapse of the contract is the only finding kind here).
        let doctor = try cli.run(["doctor", "-o", "json"])
        let report = try doctor.jsonObject()
        let notes = try #require(report["grants"] as? [[String: Any]])
        #expect(notes.contains { $0["kind"] as? String == "ending-soon" && $0["user_id"] as? String == "u7" }, "\(notes)")
        #expect(notes.contains { $0["kind"] as? String == "no-purchase" && $0["user_id"] as? String == "nobody" }, "\(notes)")
        #expect(!notes.contains { $0["kind"] as? String == "ending-soon" && $0["user_id"] as? String == "nobody" }, "\(notes)")
        #expect(!notes.contains { $0["kind"] as? String == "no-purchase" && $0["user_id"] as? String == "u7" }, "\(notes)")
    }

    /// A user whose only record is a grant (locked out before any purchase reached the database):
    /// `grants add` says it added the grant, and `customer` finds the user and answers entitled from it.
    @Test func aUserKnownOnlyByAGrantIsACustomer() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        let added = try cli.ok([
            "grants", "add", "--user", "zoe", "--product", product, "--for", "7d", "--reason", "paid, locked out",
            "--ticket", "T-3",
        ])
        #expect(added.stderr.contains("added 1 grant"), "\(added)")
        let view = try cli.ok(["customer", "zoe", "-o", "json"]).jsonObject()
        let head = try #require(view["customer"] as? [String: Any], "\(view)")
        #expect(head["entitled"] as? Bool == true, "\(head)")
        #expect((head["why"] as? String)?.hasPrefix("granted by hand until") == true, "\(head)")
        #expect((view["grants"] as? [[String: Any]])?.count == 1, "\(view)")
    }

}
