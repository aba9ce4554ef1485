import Foundation
import JWSForge
import Testing

/// `users forget`: the user's id replaced with one stable alias in every table and text iapctl keeps
/// (the whole SQLite file, or a `mariadb-dump` or `pg_dump` of the server's database, no longer holds it), the
/// money records kept under the alias with their audit and ledger rows still passing their checks,
/// a dry run first, and a refusal while Apple's refund request awaits an answer. Runs on SQLite and,
/// in the MariaDB pass, on MariaDB.
@Suite("users forget: an erased user id, end to end")
struct UsersForgetE2ETests {
    let gone = "erin-5150"
    let tokenErin = "3c1f6b0e-7a52-4d8e-9f10-000000008100"
    let tokenDave = "3c1f6b0e-7a52-4d8e-9f10-000000008200"
    let hour: Int64 = 3_600_000
    let day = AppleWorld.day
    /// The wall clock, rounded to the second.
    let now = Int64(Date().timeIntervalSince1970) * 1000

    /// A subscription of `token`'s order, bought 10 days ago.
    func purchase(_ id: String, token: String) -> TransactionPayload {
        TransactionPayload(
            transactionId: id, originalTransactionId: id, bundleId: AppleWorld.bundleId, productId: AppleWorld.product,
            purchaseDate: now - 10 * day, originalPurchaseDate: now - 10 * day, expiresDate: now + 20 * day,
            appAccountToken: token, signedDate: now - 10 * day, environment: "Sandbox")
    }

    /// erin and dave each with a subscription; erin with a hand correction, a grant and texts naming her.
    func shop() throws -> (CLI, AppleWorld) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(tokenErin, gone), (tokenDave, "dave")])
        for (id, token) in [("8100", tokenErin), ("8200", tokenDave)] {
            let tx = purchase(id, token: token)
            try cli.ok(
                ["notify", "-q"] + world.trust,
                stdin: try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: tx.signedDate, tx: tx))
        }
        try cli.ok([
            "contracts", "update", "8100", "--auto-renew", "off", "--reason", "\(gone) asked by mail", "--ticket", "T-9",
        ])
        try cli.ok(["grants", "add", "--user", gone, "--product", AppleWorld.product, "--for", "7d", "--reason", "goodwill for \(gone)"])
        return (cli, world)
    }

    /// Every byte iapctl's database holds: the SQLite file and its journals, or a dump of the server's database.
    func everything(_ cli: CLI) throws -> Data {
        if let (server, database) = cli.server {
            let dump = try server.dump(database: database)
            #expect(dump.utf8.count > 1000)
            return Data(dump.utf8)
        }
        var bytes = Data()
        let db = cli.environment["IAPCTL_DB"] ?? cli.path("iapctl.db")
        for suffix in ["", "-wal", "-journal", "-shm"] {
            if let data = FileManager.default.contents(atPath: db + suffix) { bytes.append(data) }
        }
        #expect(bytes.count > 4096)
        return bytes
    }

    func contains(_ data: Data, _ text: String) -> Bool { data.range(of: Data(text.utf8)) != nil }

    @Test func aForgottenIdIsNowhereAndTheMoneyRecordsStay() throws {
        let (cli, world) = try shop()
        // A renewal of erin's subscription carrying dave's order number: a conflict whose ledger
        // detail names erin (the owner).
        var renewal = purchase("8101", token: tokenDave)
        renewal.originalTransactionId = "8100"
        renewal.signedDate = now - day
        let conflict = try cli.run(
            ["notify", "-o", "ndjson"] + world.trust,
            stdin: try world.notification("DID_RENEW", signed: now - day, tx: renewal))
        #expect(conflict.stdout.contains(gone), "\(conflict)")
        #expect(contains(try everything(cli), gone))

        // The dry run says what would change and writes nothing.
        let dry = try cli.ok(["users", "forget", gone, "--reason", "erasure request of \(gone)", "--ticket", "GDPR-1", "-o", "json"])
        let plan = try dry.jsonObject()
        #expect(plan["dry_run"] as? Bool == true)
        #expect(dry.stderr.contains("dry run"), "\(dry)")
        #expect(try cli.ok(["orders", "list", "--user", gone, "-o", "json"]).jsonArray().count == 1)
        #expect(try cli.run(["users", "forget", gone, "--reason", "x"]).status == 64)  // no --ticket

        let done = try cli.ok([
            "users", "forget", gone, "--reason", "erasure request of \(gone)", "--ticket", "GDPR-1", "--apply", "-o", "json",
        ]).jsonObject()
        let alias = try #require(done["alias"] as? String)
        #expect(alias.hasPrefix("forgotten-") && alias.count == "forgotten-".count + 16, "\(alias)")
        // The first forget makes the database's salt: its dry run could not know the alias.
        #expect(plan["alias"] is NSNull, "\(plan)")
        let columns = try #require(done["columns"] as? [[String: Any]])
        func rows(_ column: String) -> Int? { columns.first { $0["column"] as? String == column }?["rows"] as? Int }
        #expect(rows("orders.user_id") == 1)
        #expect(rows("member_contracts.user_id") == 1)
        #expect(rows("iap_grants.user_id") == 1)
        #expect((rows("iap_audit.after_json") ?? 0) >= 2, "\(columns)")
        #expect((done["redigested_audit_rows"] as? Int ?? 0) >= 3, "\(done)")
        #expect((done["redigested_ledger_rows"] as? Int ?? 0) >= 1, "\(done)")
        #expect(rows("iap_ledger.detail") ?? 0 >= 1, "\(columns)")
        #expect(rows("iap_overrides.reason") == 1, "\(columns)")

        // Nowhere in the database, in any table, text or page.
        #expect(!contains(try everything(cli), gone))

        // The money records stay, under the alias; dave's are untouched.
        #expect(try cli.ok(["orders", "list", "--user", gone, "-o", "json"]).jsonArray().isEmpty)
        let order = try #require(try cli.ok(["orders", "list", "--user", alias, "-o", "json"]).jsonArray().first)
        #expect(order["trade_no"] as? String == "8100")
        #expect(order["status"] as? String == "paid")
        let contract = try cli.ok(["contracts", "show", "8100", "-o", "json"]).jsonObject()["contract"] as? [String: Any]
        #expect(contract?["user_id"] as? String == alias)
        #expect(try cli.ok(["orders", "list", "--user", "dave", "-o", "json"]).jsonArray().count == 1)
        #expect(try cli.run(["entitled", "--user", alias]).status == 0)
        #expect(try cli.ok(["grants", "list", "--user", alias, "-o", "json"]).jsonArray().count == 1)

        // Every audit and ledger row still passes its check; the forget is audited without the id.
        let doctor = try cli.run(["doctor", "-o", "json"])
        let findings = try #require(try doctor.jsonObject()["findings"] as? [[String: Any]])
        #expect(!findings.contains { $0["check"] as? String == "integrity" }, "\(findings)")
        let trail = try cli.ok(["audit", "list", "-o", "json"]).jsonArray()
        let forget = try #require(trail.first { $0["entity"] as? String == "user" })
        #expect(forget["key"] as? String == alias || forget["entity_key"] as? String == alias, "\(forget)")
        #expect(try cli.run(["audit", "list"]).status == 0)
        let forgetId = try #require(forget["id"] as? Int)
        #expect(try cli.run(["audit", "undo", String(forgetId), "--reason", "x"]).status == 4)

        // Nothing left to forget; a new record of the same id gets the same alias.
        #expect(try cli.run(["users", "forget", gone, "--reason", "again", "--ticket", "GDPR-1", "--apply"]).status == 3)
        try cli.ok(["orders", "create", "--user", gone, "--product", AppleWorld.product])
        let dryAgain = try cli.ok(["users", "forget", gone, "--reason", "again", "--ticket", "GDPR-2", "-o", "json"])
        #expect(try dryAgain.jsonObject()["alias"] as? String == alias)
        let again = try cli.ok([
            "users", "forget", gone, "--reason", "again", "--ticket", "GDPR-2", "--apply", "-o", "json",
        ]).jsonObject()
        #expect(again["alias"] as? String == alias)
        #expect(try cli.ok(["orders", "list", "--user", alias, "-o", "json"]).jsonArray().count == 2)
    }

    @Test func anOpenRefundRequestRefusesTheForget() throws {
        let (cli, world) = try shop()
        let tx = purchase("8100", token: tokenErin)
        try cli.ok(
            ["notify", "-q"] + world.trust,
            stdin: try world.builder.consumptionRequest(
                uuid: "c0000000-0000-4000-8000-000000000081", signedDate: now - hour, transaction: tx) + "\n")
        let refused = try cli.run(["users", "forget", gone, "--reason", "erasure", "--ticket", "GDPR-3", "--apply"])
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.stderr.contains("8100"), "\(refused)")
        #expect(try cli.ok(["orders", "list", "--user", gone, "-o", "json"]).jsonArray().count == 1)
        // dave has no open request: his forget goes through.
        try cli.ok(["users", "forget", "dave", "--reason", "erasure", "--ticket", "GDPR-4", "--apply"])
    }

    /// A customer's notes, their audit rows and the customer view follow the alias: the notes still
    /// pass their check against the audit rows that recorded them, and nothing keeps the old id.
    @Test func notesAndTheCustomerViewFollowTheAlias() throws {
        let (cli, _) = try shop()
        try cli.ok(["customer", "note", "add", gone, "--text", "\(gone) called about billing", "--ticket", "T-5"])
        let before = try cli.ok(["customer", gone, "-o", "json"]).jsonObject()
        let grants = try #require(before["grants"] as? [[String: Any]], "\(before)")
        #expect(grants.count == 1)
        let done = try cli.ok([
            "users", "forget", gone, "--reason", "erasure request", "--ticket", "GDPR-2", "--apply", "-o", "json",
        ]).jsonObject()
        let alias = try #require(done["alias"] as? String)
        #expect(!contains(try everything(cli), gone))
        let notes = try cli.ok(["customer", "note", "list", alias, "-o", "json"]).jsonArray()
        #expect(notes.map { $0["text"] as? String } == ["\(alias) called about billing"], "\(notes)")
        let view = try cli.ok(["customer", alias, "-o", "json"]).jsonObject()
        #expect((view["notes"] as? [[String: Any]])?.count == 1, "\(view)")
        #expect((view["grants"] as? [[String: Any]])?.first?["user_id"] as? String == alias, "\(view)")
        #expect(try cli.run(["customer", gone]).status == 3)
    }

}
