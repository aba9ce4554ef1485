import Foundation
import Testing

/// Bytes flipped behind iapctl's back (the sqlite3 shell, or the server's client on the MySQL
/// and PostgreSQL runs) in an audit row, a fact body, a ledger detail and a ledger raw frame: each command
/// that reads the row exits 65 naming the table and row, changes nothing, and `doctor`'s
/// integrity check lists every one.
@Suite("stored bytes checked on read, end to end")
struct StoredCorruptionTests {
    static let root = CLI.packageRoot.path
    static let trust = [
        "--root-ca", root + "/examples/ca/root.pem", "--bundle-id", "com.example.iapctl", "--environment", "Sandbox",
    ]

    static func sql(_ cli: CLI, _ statement: String) throws { try RealLifecycleE2ETests.sql(cli, statement) }

    /// A database with orders, a hand change (audit row 3), notifications (ledger rows, facts).
    static func database() throws -> CLI {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        try cli.ok(["orders", "create", "--from", root + "/examples/orders.ndjson"])
        try cli.ok([
            "orders", "update", "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e", "--status", "refunded", "--reason", "by hand",
        ])
        _ = try cli.run(["notify", root + "/examples/notifications.ndjson"] + trust)
        return cli
    }

    @Test(.sqlClient)
    func eachFlippedRowIsNamedWithExit65AndDoctorFindsThemAll() throws {
        let cli = try Self.database()
        let before = try cli.run(["doctor", "--environment", "Sandbox", "-o", "ndjson"]).ndjson()
        #expect(!before.contains { $0["check"] as? String == "integrity" }, "no integrity finding before: \(before)")

        // An audit row's before_json: `audit show` and `audit undo` refuse it; nothing is restored.
        try Self.sql(cli, "UPDATE iap_audit SET before_json = replace(before_json, '\"pending\"', '\"pendinG\"') WHERE id = 3")
        let show = try cli.run(["audit", "show", "3"])
        #expect(show.status == 65, "\(show)")
        #expect(show.stderr.contains("iap_audit row 3 is corrupt"), "\(show)")
        let undo = try cli.run(["audit", "undo", "3", "--reason", "oops"])
        #expect(undo.status == 65, "\(undo)")
        let status = try Self.query(cli, "SELECT status FROM orders WHERE no = '7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e'")
        #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "refunded", "not restored: \(status)")

        // (Put back: the explanation below reads it too.)
        try Self.sql(cli, "UPDATE iap_audit SET before_json = replace(before_json, '\"pendinG\"', '\"pending\"') WHERE id = 3")
        #expect(try cli.run(["audit", "show", "3"]).status == 0, "intact again")

        // A fact's body: the subscription's explanation refuses it.
        let fact = try #require(try Self.firstFact(cli))
        try Self.sql(cli, "UPDATE iap_facts SET body = replace(body, '\"', ' \"') WHERE id = \(fact.id)")
        let explain = try cli.run(["contracts", "explain", fact.original])
        #expect(explain.status == 65, "\(explain)")
        #expect(explain.stderr.contains("iap_facts row \(fact.id) is corrupt"), "\(explain)")

        // A ledger row's detail, and another's raw frame (one byte of its compressed data).
        try Self.sql(
            cli,
            cli.dialect(
                sqlite: "UPDATE iap_ledger SET detail = coalesce(detail, '') || '!' WHERE id = 2",
                mysql: "UPDATE iap_ledger SET detail = concat(coalesce(detail, ''), '!') WHERE id = 2"))
        let detail = try cli.run(["audit", "raw", "2"])
        #expect(detail.status == 65 && detail.stderr.contains("iap_ledger row 2 is corrupt"), "\(detail)")
        var frame = try Self.query(
            cli,
            cli.dialect(
                sqlite: "SELECT hex(raw_zstd) FROM iap_ledger WHERE id = 3",
                mysql: "SELECT hex(raw_zstd) FROM iap_ledger WHERE id = 3",
                postgres: "SELECT encode(raw_zstd, 'hex') FROM iap_ledger WHERE id = 3")
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(frame.count > 60)
        let at = frame.index(frame.startIndex, offsetBy: 40)
        frame.replaceSubrange(at...at, with: frame[at] == "0" ? "1" : "0")
        try Self.sql(
            cli,
            cli.dialect(
                sqlite: "UPDATE iap_ledger SET raw_zstd = X'\(frame)' WHERE id = 3",
                mysql: "UPDATE iap_ledger SET raw_zstd = X'\(frame)' WHERE id = 3",
                postgres: "UPDATE iap_ledger SET raw_zstd = decode('\(frame)', 'hex') WHERE id = 3"))
        let raw = try cli.run(["audit", "raw", "3"])
        #expect(raw.status == 65 && raw.stderr.contains("iap_ledger row 3 is corrupt"), "\(raw)")

        // doctor: every one, by table and row, exit 1.
        try Self.sql(cli, "UPDATE iap_audit SET before_json = replace(before_json, '\"pending\"', '\"pendinG\"') WHERE id = 3")
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "ndjson"])
        #expect(doctor.status == 1, "\(doctor)")
        let found = try doctor.ndjson().filter { $0["check"] as? String == "integrity" }.map {
            "\($0["entity"] as? String ?? "") \($0["key"] as? String ?? "")"
        }
        #expect(Set(found) == ["iap_audit 3", "iap_facts \(fact.id)", "iap_ledger 2", "iap_ledger 3"], "\(doctor)")
    }

    /// `db repair` mends a corrupt fact from the subscription's intact ledger rows (the same body
    /// again, doctor clean, the subscription readable), and names what it cannot mend: a corrupt
    /// ledger row, with exit 1.
    @Test(.sqlClient)
    func dbRepairDecodesACorruptFactAgainFromTheLedger() throws {
        let cli = try Self.database()
        let fact = try #require(try Self.firstFact(cli))
        let facts = "SELECT fact_key, digest, body FROM iap_facts ORDER BY fact_key, digest"
        let intact = try Self.query(cli, facts)
        let rows = "SELECT no, status, trade_no, expires_date FROM orders ORDER BY no"
        let orders = try Self.query(cli, rows)
        try Self.sql(cli, "UPDATE iap_facts SET body = replace(body, '\"', ' \"') WHERE id = \(fact.id)")
        #expect(try cli.run(["contracts", "explain", fact.original]).status == 65)

        let dry = try cli.run(["db", "repair", "--dry-run", "-o", "ndjson"])
        #expect(dry.status == 0, "\(dry)")
        let planned = try dry.ndjson()
        #expect(planned.count == 1 && planned.first?["table"] as? String == "iap_facts", "\(dry)")
        #expect((planned.first?["action"] as? String ?? "").hasPrefix("would "), "\(dry)")
        #expect(try cli.run(["contracts", "explain", fact.original]).status == 65, "a dry run changes nothing")

        let repair = try cli.run(["db", "repair", "--reason", "disk fault", "--ticket", "INC-7", "-o", "ndjson"])
        #expect(repair.status == 0, "\(repair)")
        #expect(try repair.ndjson().first?["repaired"] as? Bool == true, "\(repair)")
        #expect(try Self.query(cli, facts) == intact, "the same facts again")
        #expect(try Self.query(cli, rows) == orders, "the same rows")
        #expect(try cli.run(["contracts", "explain", fact.original]).status == 0)
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "ndjson"]).ndjson()
        #expect(!doctor.contains { $0["check"] as? String == "integrity" }, "\(doctor)")

        // A corrupt ledger row is the record itself: named, not mended, exit 1.
        try Self.sql(
            cli,
            cli.dialect(
                sqlite: "UPDATE iap_ledger SET detail = coalesce(detail, '') || '!' WHERE id = 2",
                mysql: "UPDATE iap_ledger SET detail = concat(coalesce(detail, ''), '!') WHERE id = 2"))
        let left = try cli.run(["db", "repair", "-o", "ndjson"])
        #expect(left.status == 1, "\(left)")
        let named = try left.ndjson()
        #expect(named.contains { $0["table"] as? String == "iap_ledger" && $0["repaired"] as? Bool == false }, "\(left)")
    }

    /// The first fact's row id and subscription.
    static func firstFact(_ cli: CLI) throws -> (id: Int, original: String)? {
        let parts = try query(cli, "SELECT id, original_transaction_id FROM iap_facts ORDER BY id LIMIT 1").split(separator: "\t")
        guard parts.count == 2, let id = Int(parts[0]) else { return nil }
        return (id, parts[1].trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The rows of `sql`, tab-separated.
    static func query(_ cli: CLI, _ sql: String) throws -> String { try cli.sql(sql) }
}

/// The contract's snapshot is checked against its own digest and the facts it came
/// from; edited behind iapctl's back so that it still parses, it is not used, and the next renewal
/// derives the same rows as with the snapshot intact.
@Suite("the engine's snapshot checked on read, end to end")
struct SnapshotCheckTests {
    static let sub = "2000000900000001"
    static let token = "a11ce000-0000-4000-8000-00000000000a"

    /// Three periods, the snapshot edited (or not), then the fourth period; the tables after it.
    static func history(edit: Bool) throws -> [String] {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        func deliver(_ n: Int64) throws {
            let tx = world.transaction(String(Int64(sub)! + n), original: sub, token: token, period: n)
            let jws = try world.notification(
                n == 0 ? "SUBSCRIBED" : "DID_RENEW", n == 0 ? "INITIAL_BUY" : nil, signed: tx.signedDate, tx: tx)
            try cli.ok(["notify", "-q"] + world.trust, stdin: jws)
        }
        for n in 0..<3 { try deliver(Int64(n)) }
        if edit {
            let hexOfSnapshot = cli.dialect(
                sqlite: "hex(snapshot)", mysql: "hex(snapshot)", postgres: "encode(convert_to(snapshot, 'UTF8'), 'hex')")
            let stored = try StoredCorruptionTests.query(
                cli, "SELECT \(hexOfSnapshot) FROM member_contracts WHERE contract_id = '\(sub)'"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            var text = String(decoding: Self.bytes(hex: stored), as: UTF8.self)
            let newline = try #require(text.firstIndex(of: "\n"), "a snapshot with its check line: \(text)")
            // One digit of the body changed: the text still parses, its digest no longer matches.
            let digit = try #require(text[newline...].firstIndex { $0.isNumber && $0 != "9" })
            text.replaceSubrange(digit...digit, with: String(text[digit].wholeNumberValue! + 1))
            let hex = Array(text.utf8).map { String(format: "%02X", $0) }.joined()
            let value = cli.dialect(
                sqlite: "CAST(X'\(hex)' AS TEXT)", mysql: "CONVERT(X'\(hex)' USING utf8mb4)",
                postgres: "convert_from(decode('\(hex)', 'hex'), 'UTF8')")
            try StoredCorruptionTests.sql(cli, "UPDATE member_contracts SET snapshot = \(value) WHERE contract_id = '\(sub)'")
        }
        try deliver(3)
        return try world.tables(maskGeneratedNumbers: [token])
    }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }

    @Test(.sqlClient)
    func anEditedSnapshotIsNotUsedAndTheNextRenewalDerivesTheSameRows() throws {
        let intact = try Self.history(edit: false)
        #expect(intact.contains { $0.hasPrefix("contract \(Self.sub)") })
        #expect(try Self.history(edit: true) == intact)
    }
}
