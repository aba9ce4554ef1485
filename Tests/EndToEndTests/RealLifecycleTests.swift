import Foundation
import StoreTestSupport
import Testing

/// Apple's genuine Sandbox lifecycle of subscription 2000001024993299 (files 02–16), through the
/// binary: support links it to carol with `restore --apply` (product fallback), then the
/// notifications are replayed in signedDate order and shuffled; the tables must agree.
@Suite("Real Apple lifecycle, end to end")
struct RealLifecycleE2ETests {
    static let trust = ["--bundle-id", "com.loki-project.loki-messenger", "--environment", "Sandbox"]
    static let prefixes = ["02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16"]
    /// signedDate order (from each payload).
    static let signedOrder = ["03", "05", "02", "04", "13", "11", "06", "15", "07", "08", "16", "14", "12", "09", "10"]

    static func replay(_ order: [String]) throws -> (CLI, AppleWorld, [String]) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try cli.ok(["db", "init"])
        let pending = try cli.ok(["orders", "create", "--user", "carol", "--product", "com.getsession.org.pro_sub"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let restore = try cli.run(["restore", "--user", "carol", "--apply", "-o", "ndjson"] + trust, stdin: try RealFixtures.jws("38"))
        #expect(restore.status == 0, "\(restore)")
        let item = try #require(try restore.ndjson().first)
        #expect(item["verdict"] as? String == "restored")  // --apply says what it did
        #expect(item["basis"] as? String == "product")
        let lines = try order.map { try RealFixtures.jws($0) }.joined(separator: "\n")
        let notify = try cli.run(["notify", "-o", "ndjson"] + trust, stdin: lines)
        #expect(notify.status == 0, "\(notify)")
        let verdicts = try notify.ndjson().compactMap { $0["verdict"] as? String }
        #expect(verdicts.count == order.count)
        #expect(!verdicts.contains("unmatched") && !verdicts.contains("rejected"))
        return (cli, world, [pending])
    }

    @Test func inSignedDateOrder() throws {
        let (_, world, known) = try Self.replay(Self.signedOrder)
        let contract = try #require(try world.contract("2000001024993299"))
        #expect(contract["user_id"] as? String == "carol")
        #expect(contract["status"] as? String == "active")
        #expect(contract["product_id"] as? String == "com.getsession.org.pro_sub_3_months")
        let orders = try world.orders()
        #expect(orders.allSatisfy { $0["user_id"] as? String == "carol" })
        let refunded = try #require(try world.order(tradeNo: "2000001032604840"))
        #expect(refunded["status"] as? String == "refunded")
        // 7 distinct transactions across 02–16 (the restored 38 is 03's renewal).
        #expect(Set(orders.compactMap { $0["trade_no"] as? String }).count == orders.count)
        #expect(orders.count == 7)
        _ = known
    }

    @Test(arguments: [11, 23, 37] as [UInt64])
    func shuffledGivesTheSameTables(seed: UInt64) throws {
        let (_, reference, known) = try Self.replay(Self.signedOrder)
        var rng = SplitMix(seed: seed)
        let (_, shuffled, _) = try Self.replay(Self.prefixes.shuffled(using: &rng))
        #expect(try shuffled.tables(maskGeneratedNumbers: Set(known)).count == reference.tables(maskGeneratedNumbers: Set(known)).count)
        #expect(try shuffled.tables().map(Self.withoutOrderNumbers) == reference.tables().map(Self.withoutOrderNumbers))
    }

    /// Runs SQL on the CLI's database, whichever backend the run uses.
    static func sql(_ cli: CLI, _ statements: String) throws { try cli.sql(statements) }

    /// A database from before the engine kept facts (schema v1, rows as the old engine left
    /// them: the 3-month product, a later expiry) upgrades in place: `db init` rebuilds the facts
    /// from the ledger's stored JWS, re-derives every row, and doctor finds nothing.
    @Test(.sqlClient)
    func aDatabaseWithoutFactsUpgradesInPlace() throws {
        let (cli, world, _) = try Self.replay(Self.signedOrder)
        let derived = try #require(try world.contract("2000001024993299"))
        try Self.withoutFacts(cli)
        #expect(try cli.run(["contracts", "list"]).status == 78, "an old schema is refused until db init")
        let upgrade = try cli.ok(["db", "init"])
        #expect(upgrade.stderr.contains("migrated"), "\(upgrade)")
        #expect(upgrade.stderr.contains("rebuilt"), "\(upgrade)")
        let contract = try #require(try world.contract("2000001024993299"))
        for column in ["status", "product_id", "expires_date", "auto_renew", "user_id"] {
            #expect("\(contract[column] ?? "-")" == "\(derived[column] ?? "-")", "\(column)")
        }
        #expect(try world.order(tradeNo: "2000001032604840")?["status"] as? String == "refunded")
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        #expect(!doctor.stdout.contains("status-vs-facts"), "\(doctor)")
        let again = try cli.ok(["db", "init"])
        #expect(!again.stderr.contains("rebuilt"))
    }

    /// Turns the CLI's database into one from before the engine kept facts, with rows as the old
    /// engine left them (schema v8's, v9's and v10's columns and v11's table dropped too, the
    /// ledger's raws back in their text column as schema v3 kept them: what this test reads is the
    /// ledger's raws, the facts and the rows).
    static func withoutFacts(_ cli: CLI) throws {
        try toSchemaV3(
            cli,
            then: """
                UPDATE member_contracts SET status = 'expired', product_id = 'com.getsession.org.pro_sub', expires_date = 1;
                UPDATE orders SET status = 'paid' WHERE trade_no = '2000001032604840';
                """)
    }

    /// The CLI's database as schema v3 kept it: the tables and columns of v4 and later dropped, their
    /// versions deleted, the ledger's raws back in their text column; then `then` (SQL) runs.
    static func toSchemaV3(_ cli: CLI, then: String) throws {
        var raws: [(id: Int, raw: String)] = []
        while true {
            let read = try cli.run(["audit", "raw", String(raws.count + 1)])
            guard read.status == 0 else { break }
            raws.append((raws.count + 1, read.stdout))
        }
        #expect(raws.count > 5)
        let text = cli.dialect(sqlite: "TEXT", mysql: "MEDIUMTEXT")
        let bytes = cli.dialect(sqlite: "BLOB", mysql: "MEDIUMBLOB", postgres: "BYTEA")
        try sql(
            cli,
            """
            DROP TABLE IF EXISTS iap_grants;
            DROP TABLE IF EXISTS iap_customer_notes;
            DROP TABLE IF EXISTS iap_refund_answers;
            DROP TABLE IF EXISTS iap_overrides;
            DROP TABLE IF EXISTS iap_checkpoints;
            DROP TABLE iap_facts;
            ALTER TABLE iap_ledger ADD COLUMN raw \(text) NULL;
            ALTER TABLE iap_ledger ADD COLUMN raw_packed \(bytes) NULL;
            ALTER TABLE iap_ledger DROP COLUMN raw_zstd;
            ALTER TABLE iap_ledger DROP COLUMN row_digest;
            ALTER TABLE iap_audit DROP COLUMN row_digest;
            ALTER TABLE member_contracts DROP COLUMN snapshot;
            DELETE FROM iap_schema_migrations WHERE version >= 4;
            \(then)
            """)
        // One statement each: a client's command line holds one raw, not all of them.
        for (id, raw) in raws { try sql(cli, "UPDATE iap_ledger SET raw = '\(raw.replacing("'", with: "''"))' WHERE id = \(id);") }
    }

    /// `db init --dry-run` and `db status` on such a database say that the upgrade also rebuilds
    /// the facts from the ledger and re-derives the rows; once upgraded, neither says so.
    @Test(.sqlClient)
    func theUpgradePlanSaysTheFactsAreRebuilt() throws {
        let (cli, _, _) = try Self.replay(Self.signedOrder)
        try Self.withoutFacts(cli)
        let plan = try cli.ok(["db", "init", "--dry-run"])
        #expect(plan.stdout.contains("rebuild the engine's facts from the ledger"), "\(plan)")
        let json = try cli.ok(["db", "init", "--dry-run", "-o", "json"]).jsonObject()
        #expect(json["rebuild_facts"] as? Bool == true, "\(json)")
        let status = try cli.ok(["db", "status"])
        #expect(status.stderr.contains("rebuilds the engine's facts"), "\(status)")
        #expect(try cli.run(["contracts", "list"]).status == 78, "a dry run migrates nothing")
        try cli.ok(["db", "init"])
        let after = try cli.ok(["db", "init", "--dry-run", "-o", "json"]).jsonObject()
        #expect(after["rebuild_facts"] == nil && after["action"] as? String == "up to date", "\(after)")
    }

    static func withoutOrderNumbers(_ line: String) -> String {
        line.replacingOccurrences(of: "<generated>", with: "")
    }
}
