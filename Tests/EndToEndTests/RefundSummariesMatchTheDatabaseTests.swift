import Foundation
import JWSForge
import Testing

/// The summaries of `refunds answer` (one request, and `--all --policy`) and of a single
/// `contracts update`, checked against what the database shows they wrote (on SQLite, and on
/// MariaDB with `IAPCTL_E2E_BACKEND=mysql`); Apple is the loopback stand-in.
@Suite("refunds answer and contracts update: the summary matches what the database shows")
struct RefundSummariesMatchTheDatabaseTests {
    let desk = RefundDeskTests()

    func status(_ cli: CLI) throws -> [String: Any] { try cli.ok(["db", "status", "-o", "json"]).jsonObject() }

    func audits(_ cli: CLI) throws -> [[String: Any]] { try cli.ok(["audit", "list", "-o", "json"]).jsonArray() }

    /// The counts of `refunds answer --all`'s summary (`3 open refund requests: 2 sent, 1 skipped`).
    static func counts(_ stderr: String) throws -> (open: Int, by: [String: Int]) {
        let line = try #require(
            stderr.split(separator: "\n").last { $0.contains(" open refund request") }.map(String.init), "\(stderr)")
        let text = line.replacingOccurrences(of: "note: ", with: "")
        let open = try #require(Int(text.split(separator: " ")[0]), "\(line)")
        var by: [String: Int] = [:]
        if let colon = text.firstIndex(of: ":") {
            let rest = text[text.index(after: colon)...].split(separator: "(")[0]
            for part in rest.split(separator: ",") {
                let words = part.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
                if words.count == 2, let n = Int(words[0]) { by[String(words[1])] = n }
            }
        }
        return (open, by)
    }

    /// One request answered: the audit row the summary names is the one answer written, for that
    /// transaction; "Apple accepted" is what `refunds list` shows; nothing else was written.
    @Test func aSingleAnswersSummaryNamesTheOneAuditRowWritten() throws {
        let (cli, world, server) = try desk.setUp()
        try world.database(orders: [(desk.token, "alice")])
        try desk.requested("8001", "c0000000-0000-4000-8000-000000000081", cli, world, server)
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/8001", [:], [AppleAPIServer.Response(status: 202)])
        ])
        try server.products(["8001": "Auto-Renewable Subscription"])
        let args = ["refunds", "answer", "8001", "--customer-consented", "--environment", "sandbox"]
        let before = try status(cli)

        let dry = try cli.run(args)
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stderr.contains("send it with --apply"), "\(dry.stderr)")
        #expect(!dry.stderr.contains("recorded as audit row"), "\(dry.stderr)")
        #expect(try status(cli)["audit"] as? Int == before["audit"] as? Int, "the dry run wrote nothing")
        #expect(try desk.consumptionPuts(server).isEmpty)

        let run = try cli.run(args + ["--apply"])
        #expect(run.status == 0, "\(run)")
        let match = try #require(run.stderr.firstMatch(of: /recorded as audit row (\d+)/), "\(run.stderr)")
        let auditId = try #require(Int(match.1))
        #expect(run.stderr.contains("Apple accepted the consumption information for 8001"), "\(run.stderr)")
        let after = try status(cli)
        #expect(after["audit"] as? Int == (before["audit"] as? Int ?? 0) + 1, "one audit row: \(after)")
        #expect(after["ledger"] as? Int == before["ledger"] as? Int)
        let written = try audits(cli).filter { ($0["id"] as? Int) == auditId }
        #expect(written.count == 1)
        #expect(written.first?["command"] as? String == "refunds answer", "\(written)")
        #expect(written.first?["key"] as? String == "8001", "\(written)")
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        #expect(listed["status"] as? String == "answered", "\(listed)")
        #expect(try desk.consumptionPuts(server).count == 1)
    }

    /// `--all --policy`: the dry run's `would-send`/`would-skip` write nothing; the run's `sent` and
    /// `skipped` are the requests `refunds list` shows answered and skipped, each with one audit row,
    /// and `sent` is the number of requests Apple received.
    @Test func thePolicysSummaryCountsWhatTheDatabaseShows() throws {
        let (cli, world, server) = try desk.setUp()
        try world.database(orders: [(desk.token, "alice")])
        try desk.requested("8101", "c0000000-0000-4000-8000-000000000811", reason: "LEGAL", cli, world, server)
        try desk.requested("8102", "c0000000-0000-4000-8000-000000000812", cli, world, server)
        try desk.requested("8103", "c0000000-0000-4000-8000-000000000813", reason: "OTHER", cli, world, server)
        try server.routes([
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/8101", [:], [AppleAPIServer.Response(status: 202)]),
            ("sandbox", "PUT", "/inApps/v2/transactions/consumption/8102", [:], [AppleAPIServer.Response(status: 202)]),
        ])
        try server.products([
            "8101": "Auto-Renewable Subscription", "8102": "Auto-Renewable Subscription", "8103": "Auto-Renewable Subscription",
        ])
        _ = try cli.write("policy.json", RefundDeskTests.policy)
        let args = ["refunds", "answer", "--all", "--policy", "policy.json", "--environment", "sandbox", "-o", "json"]
        let before = try status(cli)

        let dry = try cli.run(args)
        #expect(dry.status == 0, "\(dry)")
        let predicted = try Self.counts(dry.stderr)
        #expect(predicted.open == 3)
        #expect(predicted.by == ["would-send": 2, "would-skip": 1], "\(dry.stderr)")
        #expect(dry.stderr.contains("dry run: nothing sent, nothing recorded"), "\(dry.stderr)")
        #expect(try status(cli)["audit"] as? Int == before["audit"] as? Int, "the dry run wrote nothing")
        #expect(try desk.consumptionPuts(server).isEmpty)

        let run = try cli.run(args + ["--apply"])
        #expect(run.status == 0, "\(run)")
        let done = try Self.counts(run.stderr)
        #expect(done.open == 3)
        #expect(done.by == ["sent": 2, "skipped": 1], "\(run.stderr)")
        #expect(done.by.values.reduce(0, +) == done.open)
        let rows = try run.jsonArray()
        for (action, count) in done.by {
            #expect(rows.count { $0["action"] as? String == action } == count, "\(action): \(rows)")
        }
        let listed = try cli.ok(["refunds", "list", "-o", "json"]).jsonArray()
        #expect(listed.count { $0["status"] as? String == "answered" } == done.by["sent"], "\(listed)")
        #expect(listed.count { $0["status"] as? String == "skipped" } == done.by["skipped"], "\(listed)")
        #expect(try desk.consumptionPuts(server).count == done.by["sent"])
        let written = try audits(cli).filter { ($0["id"] as? Int ?? 0) > (before["audit"] as? Int ?? 0) }
        #expect(written.count == done.open, "one audit row per request sent or skipped: \(written)")
        #expect(written.allSatisfy { $0["command"] as? String == "refunds answer" }, "\(written)")
    }

    /// A single `contracts update`: `updated 1 contract` is the one contract whose row changed, with
    /// one audit row per changed field set; `no change` writes nothing; the dry run writes nothing.
    @Test func aSingleContractUpdatesSummaryIsTheRowThatChanged() throws {
        let cli = try SummariesMatchTheDatabaseTests.ordersOnly()
        let input = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        _ = try cli.run(["notify", "-q"] + Examples.exampleTrust, stdin: input)
        let contract = "2000000900000001"
        func rows() throws -> [String: String] {
            var rows: [String: String] = [:]
            for c in try cli.ok(["contracts", "list", "-o", "json"]).jsonArray() {
                if let id = c["contract_id"] as? String { rows[id] = "\(c["user_id"] ?? "-") \(c["status"] ?? "-")" }
            }
            return rows
        }
        let shown = try cli.ok(["contracts", "show", contract, "-o", "json"]).jsonObject()
        let was = (shown["contract"] as? [String: Any])?["status"] as? String
        let other = was == "expired" ? "canceled" : "expired"
        let args = ["contracts", "update", contract, "--status", other, "--reason", "summary truth"]
        let before = try rows()
        let audit = try status(cli)["audit"] as? Int ?? 0

        let dry = try cli.ok(args + ["--dry-run"])
        #expect(dry.stderr.contains("dry run: 1 contract would change; nothing written"), "\(dry.stderr)")
        #expect(try rows() == before)
        #expect(try status(cli)["audit"] as? Int == audit)

        let run = try cli.ok(args)
        #expect(run.stderr.contains("updated 1 contract (audited as"), "\(run.stderr)")
        let after = try rows()
        let changed = after.filter { before[$0.key] != $0.value }
        #expect(Array(changed.keys) == [contract], "exactly the one contract changed: \(changed)")
        #expect(after[contract]?.hasSuffix(" \(other)") == true, "\(after)")
        let written = try audits(cli).filter { ($0["id"] as? Int ?? 0) > audit }
        #expect(written.count == 1, "\(written)")
        #expect(written.first?["entity"] as? String == "contract" && written.first?["key"] as? String == contract)

        let again = try cli.ok(args)
        #expect(again.stderr.contains("no change"), "\(again.stderr)")
        #expect(!again.stderr.contains("updated"), "\(again.stderr)")
        #expect(try rows() == after)
        #expect(try status(cli)["audit"] as? Int == audit + 1)
    }
}
