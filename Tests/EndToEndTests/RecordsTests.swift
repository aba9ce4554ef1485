import Foundation
import Testing

@Suite("db init / db status")
struct DatabaseTests {
    @Test(.sqliteOnly("the file is created with mode 0600"))
    func initCreatesAnOwnerOnlyFileAndIsIdempotent() throws {
        let cli = try CLI()
        let first = try cli.ok(["db", "init"])
        // What db init did is a note on stderr (stdout is for data).
        // The newest schema this build writes (migrations are appended as features need them).
        let version = try #require(try cli.counts()["supported_version"] as? Int)
        #expect(first.stderr == "created \(cli.dbPath) (schema v\(version))\n")
        #expect(first.stdout.isEmpty)
        #expect(try cli.permissions(cli.dbPath) == 0o600)
        let second = try cli.ok(["db", "init"])
        #expect(second.stderr == "\(cli.dbPath) is up to date (schema v\(version))\n")
        let json = try cli.ok(["db", "init", "-o", "json"]).jsonObject()
        #expect(json["action"] as? String == "up to date")
        #expect((json["migrations"] as? [Any])?.isEmpty == true)
    }

    @Test(.sqliteOnly("the default database is a file in the current folder"))
    func initUsesTheDefaultFileInTheCurrentFolder() throws {
        let cli = try CLI()
        cli.environment["IAPCTL_DB"] = nil
        let result = try cli.ok(["db", "init"])
        let version = try #require(try cli.counts()["supported_version"] as? Int)
        #expect(result.stderr == "created iapctl.db (schema v\(version))\n")
        #expect(cli.exists("iapctl.db"))
        try cli.ok(["db", "init", "--db", "sqlite:other.db"])
        #expect(try cli.permissions("other.db") == 0o600)
    }

    @Test(.sqliteOnly("checks that no file appears; MySQLTests and PostgresTests check the database is not created"))
    func dryRunListsMigrationsAndWritesNothing() throws {
        let cli = try CLI()
        let dry = try cli.ok(["db", "init", "--dry-run"])
        #expect(dry.stdout.contains("would create"))
        #expect(dry.stdout.contains("v1 orders"))
        #expect(!cli.exists(cli.dbPath))
        try cli.ok(["db", "init"])
        let again = try cli.ok(["db", "init", "--dry-run"])
        #expect(again.stdout.contains("up to date"))
    }

    @Test func statusShowsVersionAndCounts() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        try cli.createOrder(user: "u2")
        try cli.ok(["orders", "update", no, "--status", "paid", "--reason", "test"])
        let status = try cli.counts()
        #expect(status["database"] as? String == cli.dbPath)
        #expect((status["supported_version"] as? Int ?? 0) >= 1)
        #expect(status["schema_version"] as? Int == status["supported_version"] as? Int)
        #expect(status["orders"] as? Int == 2)
        #expect(status["contracts"] as? Int == 0)
        #expect(status["ledger"] as? Int == 0)
        #expect(status["unmatched"] as? Int == 0)
        #expect(status["audit"] as? Int == 3)
        let table = try cli.ok(["db", "status"])
        #expect(table.stdout.contains("schema_version"))
        #expect(table.lines.contains { $0.hasPrefix("orders") && $0.hasSuffix(" 2") })
    }

    @Test func aPasswordInTheURLIsNeverPrinted() throws {
        let cli = try CLI()
        let result = try cli.run(["db", "status", "--db", "mysql://shop:s3cret@db.example/shop"])
        #expect(result.status != 0)
        #expect(!result.stderr.contains("s3cret") && !result.stdout.contains("s3cret"))
    }

    static let commandsNeedingTheDatabase: [[String]] = [
        ["db", "status"],
        ["orders", "create", "--user", "u", "--product", "p"],
        ["orders", "list"],
        ["orders", "show", "x"],
        ["orders", "update", "x", "--status", "paid", "--reason", "r"],
        ["contracts", "list"],
        ["contracts", "show", "x"],
        ["contracts", "update", "x", "--status", "revoked", "--reason", "r"],
    ]

    @Test(.sqliteOnly("stray files; MySQLTests and PostgresTests check 66 on a server"), arguments: commandsNeedingTheDatabase)
    func missingDatabaseIs66AndCreatesNothing(args: [String]) throws {
        let cli = try CLI()
        let result = try cli.run(args)
        #expect(result.status == 66, "\(result)")
        #expect(result.stderr.contains("does not exist"))
        #expect(result.stderr.contains("hint: create it with: iapctl db init --db \(cli.dbPath)"))
        #expect(result.stdout.isEmpty)
        let other = try cli.run(args + ["--db", "sqlite:elsewhere.db"])
        #expect(other.status == 66)
        #expect(other.stderr.contains("iapctl db init --db sqlite:elsewhere.db"))
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.dir.path).filter { !$0.hasPrefix(".") }
        #expect(names.isEmpty, "created \(names)")
    }
}

@Suite("orders create")
struct OrdersCreateTests {
    @Test func printsOnlyANewLowercaseUUIDAndAudits() throws {
        let cli = try CLI.initialized()
        let result = try cli.ok(["orders", "create", "--user", "u42", "--product", "com.example.pro"])
        #expect(result.lines.count == 1)
        let no = result.stdout.trimmingCharacters(in: .newlines)
        #expect(UUID(uuidString: no) != nil)
        #expect(no == no.lowercased())
        let order = try cli.order(no)
        #expect(order["status"] as? String == "pending")
        #expect(order["user_id"] as? String == "u42")
        #expect(order["product_id"] as? String == "com.example.pro")
        let show = try cli.ok(["orders", "show", no, "-o", "json", "--actor", "x"]).jsonObject()
        let changes = try #require(show["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["command"] as? String == "orders create")
        #expect(changes.first?["actor"] as? String == "e2e-user")
    }

    @Test func explicitNumberAndDuplicate() throws {
        let cli = try CLI.initialized()
        #expect(try cli.createOrder(no: "legacy-0001") == "legacy-0001")
        let duplicate = try cli.run(["orders", "create", "--user", "u", "--product", "p", "--no", "legacy-0001"])
        #expect(duplicate.status == 4, "\(duplicate)")
        #expect(duplicate.stderr.contains("already exists"))
        #expect(try cli.orders().count == 1)
    }

    @Test func needsUserAndProductOrFrom() throws {
        let cli = try CLI.initialized()
        let result = try cli.run(["orders", "create", "--user", "u"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--product"))
    }

    @Test func fromNDJSONOnStdinOneNumberPerLineInOrder() throws {
        let cli = try CLI.initialized()
        let input = """
            {"user": "a", "product": "p1"}

            {"user": "b", "product": "p2", "no": "imported-7"}
            {"user": "c", "product": "p3"}
            """
        let result = try cli.ok(["orders", "create", "--from", "-"], stdin: input)
        #expect(result.lines.count == 3)
        #expect(result.lines[1] == "imported-7")
        let orders = try cli.orders()
        #expect(orders.count == 3)
        let byNo = Dictionary(uniqueKeysWithValues: orders.map { ($0["no"] as! String, $0["user_id"] as! String) })
        #expect(byNo[result.lines[0]] == "a")
        #expect(byNo["imported-7"] == "b")
        #expect(byNo[result.lines[2]] == "c")
        #expect(try cli.counts()["audit"] as? Int == 3)
    }

    @Test func fromCSVFileAndCSVDetectedOnStdin() throws {
        let cli = try CLI.initialized()
        let file = try cli.write("orders.csv", "user,product,no\nu1,p1,\n\"u,2\",p2,csv-2\n")
        let result = try cli.ok(["orders", "create", "--from", file])
        #expect(result.lines.count == 2)
        #expect(result.lines[1] == "csv-2")
        #expect(try cli.order("csv-2")["user_id"] as? String == "u,2")
        let stdin = try cli.ok(["orders", "create", "--from", "-"], stdin: "user,product\nu3,p3\n")
        #expect(stdin.lines.count == 1)
        #expect(try cli.orders(["--user", "u3"]).count == 1)
    }

    @Test(arguments: [
        ("{\"user\": \"a\", \"product\": \"p\"}\n{\"user\": \"b\"}\n", "line 2: missing \"product\""),
        ("{\"user\": \"a\", \"product\": \"p\"}\n{\"user\": \"b\", \"product\": \"p\"}\n{oops\n", "line 3: not JSON"),
        ("{\"user\": \"a\", \"product\": \"p\", \"colour\": \"red\"}\n", "line 1: unknown field 'colour'"),
        ("user,product\na,p\nb\n", "line 3: expected 2 fields"),
        (
            "{\"user\": \"a\", \"product\": \"p\", \"no\": \"x\"}\n{\"user\": \"b\", \"product\": \"p\", \"no\": \"x\"}\n",
            "line 2: order number x appears twice"
        ),
    ])
    func aBadRowCreatesNothing(input: String, message: String) throws {
        let cli = try CLI.initialized()
        let result = try cli.run(["orders", "create", "--from", "-"], stdin: input)
        #expect(result.status == 65, "\(result)")
        #expect(result.stderr.contains("error: \(message)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try cli.orders().isEmpty)
        #expect(try cli.counts()["audit"] as? Int == 0)
    }

    @Test func emptyInputIs66() throws {
        let cli = try CLI.initialized()
        let result = try cli.run(["orders", "create", "--from", "-"], stdin: "\n")
        #expect(result.status == 66)
        let missing = try cli.run(["orders", "create", "--from", "nope.ndjson"])
        #expect(missing.status == 66)
    }
}

@Suite("orders list")
struct OrdersListTests {
    /// u1/p1 paid, u1/p2 pending, u2/p1 refunded (created in that order).
    func fixture() throws -> (CLI, [String]) {
        let cli = try CLI.initialized()
        let a = try cli.createOrder(user: "u1", product: "p1")
        let b = try cli.createOrder(user: "u1", product: "p2")
        let c = try cli.createOrder(user: "u2", product: "p1")
        try cli.ok(["orders", "update", a, "--status", "paid", "--trade-no", "2000000000000001", "--reason", "t"])
        try cli.ok(["orders", "update", c, "--status", "refunded", "--reason", "t"])
        return (cli, [a, b, c])
    }

    @Test func filtersAndLimitNewestFirst() throws {
        let (cli, nos) = try fixture()
        #expect(try cli.orders().map { $0["no"] as? String } == [nos[2], nos[1], nos[0]])
        #expect(try cli.orders(["--user", "u1"]).map { $0["no"] as? String } == [nos[1], nos[0]])
        #expect(try cli.orders(["--status", "paid"]).map { $0["no"] as? String } == [nos[0]])
        #expect(try cli.orders(["--product", "p1"]).map { $0["no"] as? String } == [nos[2], nos[0]])
        #expect(try cli.orders(["--product", "p1", "--user", "u2"]).count == 1)
        #expect(try cli.orders(["--limit", "2"]).map { $0["no"] as? String } == [nos[2], nos[1]])
        #expect(try cli.orders(["--user", "nobody"]).isEmpty)
    }

    @Test func tableHasTheAgreedColumns() throws {
        let (cli, nos) = try fixture()
        let table = try cli.ok(["orders", "list"])
        let header = table.lines.first?.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(header == ["NO", "USER", "PRODUCT", "STATUS", "TRADE_NO", "ORIGIN_NO", "EXPIRES", "UPDATED"])
        #expect(table.lines.count == 4)
        #expect(table.lines.last?.hasPrefix(nos[0]) == true)
        #expect(table.lines.last?.contains("2000000000000001") == true)
    }

    @Test func jsonNdjsonAndCsvCarryEveryColumn() throws {
        let (cli, _) = try fixture()
        let json = try cli.orders()
        let first = try #require(json.first)
        for key in [
            "no", "user_id", "product_id", "status", "trade_no", "origin_no", "purchase_date", "expires_date",
            "environment", "price", "currency", "created_at", "updated_at", "created_at_ms",
        ] {
            #expect(first.keys.contains(key), "missing \(key)")
        }
        let created = try #require(first["created_at"] as? String)
        #expect(created.hasSuffix("Z") && created.contains("T"))
        #expect(first["created_at_ms"] is Int)

        let ndjson = try cli.ok(["orders", "list", "-o", "ndjson"]).ndjson()
        #expect(ndjson.count == 3)
        #expect(ndjson.map { $0["no"] as? String } == json.map { $0["no"] as? String })

        let csv = try cli.ok(["orders", "list", "-o", "csv", "--status", "paid"])
        #expect(csv.lines.count == 2)
        let header = csv.lines[0].split(separator: ",").map(String.init)
        #expect(header.starts(with: ["no", "user_id", "product_id", "status", "trade_no", "origin_no"]))
        #expect(header.contains("created_at") && header.contains("updated_at"))
        let row = csv.lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(row.count == header.count)
        #expect(row[header.firstIndex(of: "status")!] == "paid")
        #expect(row[header.firstIndex(of: "created_at")!].hasSuffix("Z"))

        let emptyCSV = try cli.ok(["orders", "list", "-o", "csv", "--user", "nobody"])
        #expect(emptyCSV.lines == [csv.lines[0]])
        #expect(try cli.ok(["orders", "list", "-o", "json", "--user", "nobody"]).jsonArray().isEmpty)
    }

    @Test func unknownStatusIsAUsageErrorListingTheValues() throws {
        let cli = try CLI.initialized()
        let result = try cli.run(["orders", "list", "--status", "payed"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("pending, paid, refunded, revoked"))
    }
}

@Suite("orders show")
struct OrdersShowTests {
    @Test func byNumberTradeNoAndOriginNo() throws {
        let cli = try CLI.initialized()
        let first = try cli.createOrder(product: "sub.monthly")
        let renewal = try cli.createOrder(product: "sub.monthly")
        try cli.ok([
            "orders", "update", first, "--status", "paid", "--trade-no", "2000000000000001", "--origin-no",
            "2000000000000001", "--expires", "2025-10-05T01:24:32Z", "--reason", "import",
        ])
        try cli.ok([
            "orders", "update", renewal, "--status", "paid", "--trade-no", "2000000000000002", "--origin-no",
            "2000000000000001", "--reason", "import",
        ])
        #expect(try cli.order(first)["no"] as? String == first)
        let byTrade = try cli.order("2000000000000002")
        #expect(byTrade["no"] as? String == renewal)
        #expect(try cli.order(first)["expires_date"] as? String == "2025-10-05T01:24:32Z")
        #expect(try cli.order(first)["expires_date_ms"] as? Int == 1_759_627_472_000)

        // The first purchase's transactionId is the originalTransactionId: the whole subscription.
        let all = try cli.ok(["orders", "show", "2000000000000001", "-o", "json"]).jsonObject()
        let allOrders = try #require(all["orders"] as? [[String: Any]])
        #expect(Set(allOrders.compactMap { $0["no"] as? String }) == [first, renewal])
        #expect(all["contract"] is NSNull)
        #expect((all["events"] as? [Any])?.isEmpty == true)
        let changes = try #require(all["changes"] as? [[String: Any]])
        #expect(Set(changes.compactMap { $0["key"] as? String }) == [first, renewal])
        #expect(changes.count == 4)

        let table = try cli.ok(["orders", "show", "2000000000000001"])
        #expect(table.stdout.contains("Orders (2)"))
        #expect(table.stdout.contains("Contract"))
        #expect(table.stdout.contains("Events (0, ledger)"))
        #expect(table.stdout.contains("Changes ("))
    }

    @Test func unknownKeyIs3() throws {
        let cli = try CLI.initialized()
        let result = try cli.run(["orders", "show", "nope"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("error: no order with no, trade_no or origin_no = nope"))
        #expect(result.stdout.isEmpty)
    }
}

@Suite("orders update")
struct OrdersUpdateTests {
    @Test func singleUpdateIsAuditedWithActorReasonAndTicket() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        let result = try cli.ok([
            "orders", "update", no, "--status", "refunded", "--reason", "refund approved", "--ticket", "T-118",
            "--actor", "alice-support",
        ])
        #expect(result.stdout.contains("order \(no): updated"))
        #expect(result.stdout.contains("status: pending → refunded"))
        #expect(try cli.order(no)["status"] as? String == "refunded")

        let show = try cli.ok(["orders", "show", no])
        #expect(show.stdout.contains("alice-support"))
        #expect(show.stdout.contains("refund approved"))
        #expect(show.stdout.contains("T-118"))
        #expect(show.stdout.contains("status: pending → refunded"))

        let json = try cli.ok(["orders", "show", no, "-o", "json"]).jsonObject()
        let changes = try #require(json["changes"] as? [[String: Any]])
        let update = try #require(changes.last)
        #expect(update["actor"] as? String == "alice-support")
        #expect(update["command"] as? String == "orders update")
        #expect(update["reason"] as? String == "refund approved")
        #expect(update["ticket"] as? String == "T-118")
        let fields = try #require(update["changes"] as? [[String: Any]])
        #expect(fields.count == 1)
        #expect(fields.first?["field"] as? String == "status")
        #expect(fields.first?["before"] as? String == "pending")
        #expect(fields.first?["after"] as? String == "refunded")
    }

    @Test func byTradeNoAndActorFromTheEnvironment() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        try cli.ok(["orders", "update", no, "--trade-no", "2000000000000042", "--reason", "link"])
        try cli.ok(
            ["orders", "update", "2000000000000042", "--status", "paid", "--reason", "r"],
            env: ["IAPCTL_ACTOR": "bob"])
        let order = try cli.order(no)
        #expect(order["status"] as? String == "paid")
        let changes = try #require(
            try cli.ok(["orders", "show", no, "-o", "json"]).jsonObject()["changes"] as? [[String: Any]])
        #expect(changes.last?["actor"] as? String == "bob")
    }

    @Test func noOpSaysNoChangeAndWritesNoAudit() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        let before = try cli.counts()["audit"] as? Int
        let result = try cli.ok(["orders", "update", no, "--status", "pending", "--reason", "r"])
        #expect(result.stdout == "order \(no): no change\n")
        #expect(try cli.counts()["audit"] as? Int == before)
    }

    @Test func dryRunPrintsTheDiffAndWritesNothing() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        let result = try cli.ok([
            "orders", "update", no, "--status", "paid", "--expires", "2025-12-31T00:00:00Z", "--reason", "r",
            "--dry-run",
        ])
        #expect(result.stdout.contains("status: pending → paid"))
        #expect(result.stdout.contains("expires_date: ∅ → 2025-12-31T00:00:00Z"))
        #expect(result.stderr.contains("nothing written"))
        let order = try cli.order(no)
        #expect(order["status"] as? String == "pending")
        #expect(order["expires_date"] is NSNull)
        #expect(try cli.counts()["audit"] as? Int == 1)
        let json = try cli.ok(["orders", "update", no, "--status", "paid", "--reason", "r", "--dry-run", "-o", "json"])
        let rows = try json.jsonArray()
        #expect(rows.first?["result"] as? String == "would update")
        #expect(rows.first?["dry_run"] as? Bool == true)
    }

    @Test func badValuesAndMissingReasonAreUsageErrors() throws {
        let cli = try CLI.initialized()
        let no = try cli.createOrder()
        let status = try cli.run(["orders", "update", no, "--status", "payed", "--reason", "r"])
        #expect(status.status == 64)
        #expect(status.stderr.contains("allowed: pending, paid, refunded, revoked"))
        let reason = try cli.run(["orders", "update", no, "--status", "paid"])
        #expect(reason.status == 64)
        #expect(reason.stderr.contains("--reason"))
        let nothing = try cli.run(["orders", "update", no, "--reason", "r"])
        #expect(nothing.status == 64)
        let expires = try cli.run(["orders", "update", no, "--expires", "tomorrow", "--reason", "r"])
        #expect(expires.status == 64)
        #expect(try cli.order(no)["status"] as? String == "pending")
    }

    @Test func unknownKeyIs3AndDuplicateTradeNoIs4() throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let b = try cli.createOrder()
        let missing = try cli.run(["orders", "update", "nope", "--status", "paid", "--reason", "r"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("no order with no or trade_no = nope"))
        try cli.ok(["orders", "update", a, "--trade-no", "2000000000000009", "--reason", "r"])
        let clash = try cli.run(["orders", "update", b, "--trade-no", "2000000000000009", "--reason", "r"])
        #expect(clash.status == 4, "\(clash)")
        #expect(clash.stderr.contains("already belongs to order \(a)"))
        #expect(try cli.order(b)["trade_no"] is NSNull)
    }

    @Test func batchAppliesEveryRowInOneGo() throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let b = try cli.createOrder()
        try cli.ok(["orders", "update", b, "--trade-no", "2000000000000077", "--reason", "link"])
        let input = """
            {"no": "\(a)", "status": "paid", "expires_date": 1767139200000}
            {"trade_no": "2000000000000077", "status": "revoked", "reason": "chargeback", "ticket": "T-9"}
            """
        let result = try cli.ok(
            ["orders", "update", "--from", "-", "--reason", "batch fix", "--actor", "carol"], stdin: input)
        #expect(result.stdout.contains("order \(a): updated"))
        #expect(result.stdout.contains("order \(b): updated"))
        #expect(try cli.order(a)["status"] as? String == "paid")
        #expect(try cli.order(a)["expires_date"] as? String == "2025-12-31T00:00:00Z")
        #expect(try cli.order(b)["status"] as? String == "revoked")
        let changes = try #require(
            try cli.ok(["orders", "show", b, "-o", "json"]).jsonObject()["changes"] as? [[String: Any]])
        #expect(changes.last?["reason"] as? String == "chargeback")
        #expect(changes.last?["ticket"] as? String == "T-9")
        #expect(changes.last?["actor"] as? String == "carol")
    }

    @Test func batchFromCSVFile() throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let b = try cli.createOrder()
        let file = try cli.write(
            "fixes.csv", "no,status,expires_date\n\(a),refunded,2025-12-31T00:00:00Z\n\(b),paid,\n")
        let result = try cli.ok(["orders", "update", "--from", file, "--reason", "csv", "-o", "ndjson"])
        let rows = try result.ndjson()
        #expect(rows.map { $0["line"] as? Int } == [2, 3])
        #expect(try cli.order(a)["status"] as? String == "refunded")
        #expect(try cli.order(a)["expires_date"] as? String == "2025-12-31T00:00:00Z")
        #expect(try cli.order(b)["status"] as? String == "paid")
        #expect(try cli.order(b)["expires_date"] is NSNull)
    }

    @Test(arguments: [
        (
            "{\"no\": \"A\", \"status\": \"paid\"}\n{\"no\": \"B\", \"status\": \"payed\"}\n",
            65, "line 2: unknown status 'payed' (allowed: pending, paid, refunded, revoked)"
        ),
        (
            "{\"no\": \"A\", \"status\": \"paid\"}\n{\"no\": \"missing\", \"status\": \"paid\"}\n",
            3, "line 2: no order with no = missing"
        ),
        (
            "{\"no\": \"A\", \"status\": \"paid\"}\n{\"no\": \"B\", \"colour\": \"red\"}\n", 65,
            "line 2: unknown field 'colour'"
        ),
        ("{\"no\": \"A\", \"status\": \"paid\"}\n{\"status\": \"paid\"}\n", 65, "line 2: no no or trade_no"),
        (
            "{\"no\": \"A\", \"status\": \"paid\"}\n{\"no\": \"B\", \"expires_date\": \"soon\"}\n", 65,
            "line 2: expires_date 'soon' is not a time"
        ),
        ("{\"no\": \"A\", \"status\": \"paid\"}\n{\"no\": \"B\"}\n", 65, "line 2: nothing to change"),
        ("{\"no\": \"A\", \"status\": \"paid\"}\n[1]\n", 65, "line 2: expected a JSON object"),
        ("no,status\nA,paid\nB,payed\n", 65, "line 3: unknown status 'payed'"),
    ])
    func batchWithOneBadRowChangesNothing(template: String, code: Int32, message: String) throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let b = try cli.createOrder()
        let input = template.replacingOccurrences(of: "\"A\"", with: "\"\(a)\"")
            .replacingOccurrences(of: "\"B\"", with: "\"\(b)\"")
            .replacingOccurrences(of: "\nA,", with: "\n\(a),").replacingOccurrences(of: "\nB,", with: "\n\(b),")
        let result = try cli.run(["orders", "update", "--from", "-", "--reason", "r"], stdin: input)
        #expect(result.status == code, "\(result)")
        #expect(result.stderr.contains("error: \(message)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try cli.orders(["--status", "pending"]).count == 2)
        #expect(try cli.counts()["audit"] as? Int == 2)
    }

    @Test func batchDryRunWritesNothing() throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let result = try cli.ok(
            ["orders", "update", "--from", "-", "--reason", "r", "--dry-run"],
            stdin: "{\"no\": \"\(a)\", \"status\": \"revoked\"}\n")
        #expect(result.stdout.contains("status: pending → revoked"))
        #expect(try cli.order(a)["status"] as? String == "pending")
        #expect(try cli.counts()["audit"] as? Int == 1)
    }

    @Test func keyAndFromTogetherIsAUsageError() throws {
        let cli = try CLI.initialized()
        let a = try cli.createOrder()
        let both = try cli.run(["orders", "update", a, "--from", "-", "--reason", "r"], stdin: "")
        #expect(both.status == 64)
        let fieldsToo = try cli.run(
            ["orders", "update", "--from", "-", "--status", "paid", "--reason", "r"], stdin: "")
        #expect(fieldsToo.status == 64)
    }
}

/// Contract rows come from notifications (`iapctl notify`); until those tests exist, the contract
/// commands are checked on a database without contracts.
@Suite("contracts")
struct ContractsTests {
    @Test func listOnAnEmptyDatabase() throws {
        let cli = try CLI.initialized()
        let table = try cli.ok(["contracts", "list"])
        #expect(table.stdout.isEmpty)
        #expect(try cli.ok(["contracts", "list", "-o", "json"]).jsonArray().isEmpty)
        #expect(try cli.ok(["contracts", "list", "-o", "ndjson", "--status", "active"]).stdout.isEmpty)
        let csv = try cli.ok(["contracts", "list", "-o", "csv"])
        #expect(csv.lines.count == 1)
        #expect(csv.lines.first?.hasPrefix("contract_id,user_id,product_id,status,auto_renew,expires_date") == true)
    }

    @Test func showAndUpdateOfAnUnknownContractAre3() throws {
        let cli = try CLI.initialized()
        let show = try cli.run(["contracts", "show", "2000000100000001"])
        #expect(show.status == 3)
        #expect(show.stderr.contains("no contract with contract_id = 2000000100000001"))
        let update = try cli.run(["contracts", "update", "2000000100000001", "--status", "revoked", "--reason", "r"])
        #expect(update.status == 3)
        #expect(update.stderr.contains("no contract with contract_id = 2000000100000001"))
        #expect(try cli.counts()["audit"] as? Int == 0)
    }

    @Test func badValuesAreUsageErrors() throws {
        let cli = try CLI.initialized()
        let status = try cli.run(["contracts", "update", "C1", "--status", "paid", "--reason", "r"])
        #expect(status.status == 64)
        #expect(status.stderr.contains("active, canceled, grace_period, billing_retry, expired, revoked"))
        let list = try cli.run(["contracts", "list", "--status", "nope"])
        #expect(list.status == 64)
        let nothing = try cli.run(["contracts", "update", "C1", "--reason", "r"])
        #expect(nothing.status == 64)
    }
}
