import Foundation
import JWSForge
import Testing

/// `iapctl customer KEY` finds one customer from any id a ticket carries and shows them in one
/// screen; `customer note add|list` keeps what support learned, audited. On the backend
/// `IAPCTL_E2E_BACKEND` names (SQLite by default).
@Suite("customer: one view from any id, end to end")
struct CustomerViewTests {
    let alice = "11111111-2222-4333-8444-5555555555a1"
    let bob = "11111111-2222-4333-8444-5555555555b2"
    let appTransaction = "704289551237865490"
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    /// alice: subscription 1000 bought (order `alice`) and renewed (1001), her transactions carrying
    /// appTransactionId; bob: subscription 2000; a user whose id is "2000" (bob's transactionId too).
    func world(_ server: Bool = false) throws -> (CLI, AppleWorld, AppleAPIServer?) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        var api: AppleAPIServer?
        if server {
            let made = try AppleAPIServer(cli: cli)
            for (name, value) in made.environment { cli.environment[name] = value }
            api = made
        }
        try world.database(orders: [(alice, "alice"), (bob, "bob")])
        try cli.ok(["orders", "create", "--user", "2000", "--product", AppleWorld.product])
        var first = world.transaction("1000", original: "1000", token: alice)
        first.appTransactionId = appTransaction
        var renewal = world.transaction("1001", original: "1000", period: 1)
        renewal.appTransactionId = appTransaction
        let lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: first),
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", signed: t0 + day, tx: world.transaction("2000", original: "2000", token: bob)),
            try world.notification("DID_RENEW", signed: t0 + 30 * day, tx: renewal),
        ]
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        return (cli, world, api)
    }

    /// `customer KEY -o json`, which must find alice.
    func aliceFound(_ cli: CLI, _ key: [String], as kind: String) throws {
        let doc = try cli.ok(["customer"] + key + ["-o", "json"]).jsonObject()
        let head = try #require(doc["customer"] as? [String: Any], "\(doc)")
        #expect(head["user_id"] as? String == "alice", "\(doc)")
        #expect((head["matched_as"] as? [String])?.contains(kind) == true, "\(head)")
        let contracts = try #require(doc["contracts"] as? [[String: Any]])
        #expect(contracts.compactMap { $0["contract_id"] as? String } == ["1000"])
        let orders = try #require(doc["orders"] as? [[String: Any]])
        #expect(Set(orders.compactMap { $0["trade_no"] as? String }) == ["1000", "1001"])
    }

    @Test func byUserId() throws {
        let (cli, _, _) = try world()
        try aliceFound(cli, ["alice"], as: "user")
    }

    @Test func byOrderNumber() throws {
        let (cli, _, _) = try world()
        try aliceFound(cli, [alice], as: "order")
    }

    @Test func byTransactionId() throws {
        let (cli, _, _) = try world()
        try aliceFound(cli, ["1001"], as: "transaction")
    }

    @Test func byOriginalTransactionId() throws {
        let (cli, _, _) = try world()
        try aliceFound(cli, ["1000", "--by", "original"], as: "original")
        // Unrestricted, the first purchase's id is both its transactionId and the subscription's id.
        try aliceFound(cli, ["1000"], as: "original")
    }

    @Test func byAppTransactionId() throws {
        let (cli, _, _) = try world()
        try aliceFound(cli, [appTransaction], as: "app-transaction")
    }

    @Test func byTheOrderIdOfAReceiptEmailThroughApple() throws {
        let (cli, world, server) = try world(true)
        let jws = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        try #require(server).routes([
            ("sandbox", "GET", "/inApps/v1/lookup/MK5TTTVWJH", [:], [.ok(["status": 0, "signedTransactions": [jws]])])
        ])
        let apple = ["--environment", "sandbox", "--root-ca", world.rootPath]
        try aliceFound(cli, ["MK5TTTVWJH"] + apple, as: "receipt-order")
        let requests = try #require(server).requests()
        #expect(requests.map { $0["path"] as? String } == ["/inApps/v1/lookup/MK5TTTVWJH"], "\(requests)")
    }

    @Test func aReceiptOrderIdWithoutAppleSettingsSaysHow() throws {
        let (cli, _, _) = try world()
        let result = try cli.run(["customer", "MK5TTTVWJH"])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("order ID of a receipt"), "\(result)")
        #expect(result.stderr.contains("--key-file") && result.stderr.contains("iapctl apple lookup MK5TTTVWJH"), "\(result)")
        #expect(result.stdout.isEmpty)
    }

    @Test func severalMatchesAreListedWithTheWayToPickOne() throws {
        let (cli, _, _) = try world()
        let result = try cli.run(["customer", "2000"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("bob") && result.stdout.contains("2000"), "\(result)")
        #expect(result.stdout.contains("iapctl customer --by user bob"), "\(result)")
        #expect(result.stderr.contains("leads to 2 users"), "\(result)")
        let picked = try cli.ok(["customer", "--by", "user", "2000", "-o", "json"]).jsonObject()
        #expect((picked["customer"] as? [String: Any])?["user_id"] as? String == "2000")
        let json = try cli.run(["customer", "2000", "-o", "json"])
        #expect(json.status == 1)
        #expect(Set(try json.jsonArray().compactMap { $0["user_id"] as? String }) == ["2000", "bob"])
    }

    @Test func noMatchSaysWhatWasSearched() throws {
        let (cli, _, _) = try world()
        let result = try cli.run(["customer", "nobody"])
        #expect(result.status == 3, "\(result)")
        #expect(
            result.stderr.contains(
                "no customer with user id, order number, transactionId, originalTransactionId or appTransactionId nobody"),
            "\(result)")
    }

    @Test func theViewShowsEntitlementRiskOrdersAuditAndNotesInEveryFormat() throws {
        let (cli, _, _) = try world()
        let table = try cli.ok(["customer", "alice"]).stdout
        for title in [
            "Customer", "Contracts (1)", "Orders (2)", "Refund requests to answer (0)", "Overrides in force (0)",
            "Unmatched items with the customer's ids (0)", "Last changes", "Notes (0)",
        ] {
            #expect(table.contains(title), "\(title): \(table)")
        }
        #expect(table.contains("entitled") && table.contains("found_by"), "\(table)")
        let csv = try cli.ok(["customer", "alice", "-o", "csv"]).stdout
        #expect(csv.contains("contract_id") && csv.contains("1000"), "\(csv)")
        let ndjson = try cli.ok(["customer", "alice", "-o", "ndjson"]).ndjson()
        #expect(ndjson.count == 1 && (ndjson.first?["contracts"] as? [Any])?.count == 1)
        let doc = try cli.ok(["customer", "alice", "-o", "json"]).jsonObject()
        let contract = try #require((doc["contracts"] as? [[String: Any]])?.first)
        #expect((contract["renewal_risk"] as? [String: Any])?["kinds"] is [Any], "\(contract)")
        #expect((doc["audit"] as? [Any])?.isEmpty == false, "\(doc)")
    }

    @Test func redactHidesEveryIdOfTheCustomer() throws {
        let (cli, _, _) = try world()
        for format in ["table", "json", "csv"] {
            let result = try cli.ok(["customer", "alice", "--redact", "-o", format])
            for secret in ["alice", alice, "1000", "1001"] {
                #expect(!result.stdout.contains(secret), "\(format) shows \(secret): \(result.stdout)")
                #expect(!result.stderr.contains(secret), "\(format) shows \(secret): \(result.stderr)")
            }
        }
    }

    @Test func notesAreAuditedListedAndShownNeverUndone() throws {
        let (cli, _, _) = try world()
        let added = try cli.ok([
            "customer", "note", "add", "1001", "--text", "paid twice; asked Apple for a refund", "--ticket", "T-77",
            "--actor", "carol", "-o", "json",
        ]).jsonObject()
        #expect(added["user_id"] as? String == "alice")
        let auditId = try #require(added["audit_id"] as? Int)
        let audit = try cli.ok(["audit", "list", "--ticket", "T-77", "-o", "json"]).jsonArray()
        #expect(audit.count == 1)
        #expect(audit.first?["actor"] as? String == "carol")
        #expect(audit.first?["command"] as? String == "customer note add")
        #expect(audit.first?["key"] as? String == "alice")
        let notes = try cli.ok(["customer", "note", "list", "alice", "-o", "json"]).jsonArray()
        #expect(notes.map { $0["text"] as? String } == ["paid twice; asked Apple for a refund"])
        #expect(notes.first?["ticket"] as? String == "T-77")
        let view = try cli.ok(["customer", "alice"]).stdout
        #expect(view.contains("Notes (1)") && view.contains("paid twice"), "\(view)")
        // A note is only ever added.
        let undo = try cli.run(["audit", "undo", String(auditId), "--reason", "oops"])
        #expect(undo.status == 4, "\(undo)")
        #expect(undo.stderr.contains("notes are only ever added"), "\(undo)")
        // A dry run, an empty text and a control character write nothing.
        let dry = try cli.ok(["customer", "note", "add", "alice", "--text", "draft", "--dry-run", "-o", "json"]).jsonObject()
        #expect(dry["dry_run"] as? Bool == true)
        #expect(try cli.run(["customer", "note", "add", "alice", "--text", "  "]).status == 64)
        #expect(try cli.run(["customer", "note", "add", "alice", "--text", "bell\u{07}"]).status == 64)
        #expect(try cli.run(["customer", "note", "add", "nobody", "--text", "x"]).status == 3)
        #expect(try cli.ok(["customer", "note", "list", "alice", "-o", "json"]).jsonArray().count == 1)
        #expect(
            try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { $0["command"] as? String == "customer note add" }.count == 1)
    }

    /// A note changed outside iapctl no longer holds what its audit row recorded: it is refused
    /// (exit 65), never shown.
    @Test func aNoteChangedOutsideIapctlIsRefused() throws {
        let (cli, _, _) = try world()
        try cli.ok(["customer", "note", "add", "alice", "--text", "goodwill month promised"])
        try RealLifecycleE2ETests.sql(cli, "UPDATE iap_customer_notes SET text = 'refund promised'")
        for args in [["customer", "note", "list", "alice"], ["customer", "alice"]] {
            let result = try cli.run(args)
            #expect(result.status == 65, "\(args): \(result)")
            #expect(result.stderr.contains("iap_customer_notes row"), "\(result)")
            #expect(!result.stdout.contains("refund promised"), "\(result)")
        }
    }

    /// On a terminal of 80 columns the view stays inside the screen, ids whole, and fits one screen.
    @Test(.enabled(if: Examples.hasPython)) func fitsOneScreenAt80Columns() throws {
        let (cli, world, _) = try world()
        // A risk sentence to wrap: alice turned auto-renew off.
        let off = try world.notification(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 40 * day,
            tx: world.transaction("1001", original: "1000", period: 1), autoRenew: 0)
        try cli.ok(["notify"] + world.trust, stdin: off)
        try cli.ok(["customer", "note", "add", "alice", "--text", String(repeating: "long note words ", count: 12)])
        let lines = try TerminalTablesTests.screen(cli, ["customer", "alice"], columns: 80)
        let words = WrappedLinesTests.words(lines).joined(separator: " ")
        #expect(words.contains("auto-renew off: the customer cancelled; access ends at 2025-03-02T00:00:00Z"), "\(lines)")
        for line in lines { #expect(line.count <= 80, "\(line)") }
        let text = lines.joined(separator: "\n")
        for id in ["1000", "1001", alice] { #expect(text.contains(id), "\(id) cut: \(text)") }
        #expect(lines.count <= 50, "\(lines.count) lines: \(text)")
    }
}
