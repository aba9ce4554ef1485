import Foundation
import Testing

/// One page rule for every listing (`orders list`, `contracts list`, `audit list`, `doctor`): a
/// table on a terminal shows the first 30 rows and says how many more and how to see them;
/// `--limit N` shows N, `--limit all` every row, `--limit 0` is refused with the way to say all;
/// pipes and the other formats get every row. Checked on a pseudo-terminal at 80 and 120 columns.
@Suite("Listings page alike at a terminal", .serialized)
struct PagingTests {
    /// 34 pending orders, then 34 subscriptions bought with them (34 contracts, 102 audit rows).
    static func database() throws -> CLI {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (1...34).map { String(format: "0000%04d-0000-4000-8000-000000000000", $0) }
        try world.database()
        let rows = tokens.enumerated().map {
            "{\"no\":\"\($1)\",\"user\":\"u\($0 + 1)\",\"product\":\"\(AppleWorld.product)\"}"
        }
        try cli.ok(["orders", "create", "--from", try cli.write("many.ndjson", rows.joined(separator: "\n") + "\n"), "-q"])
        var lines: [String] = []
        for (index, token) in tokens.enumerated() {
            let id = String(2_000_000_300_000_000 + index)
            lines.append(
                try world.notification(
                    "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0,
                    tx: world.transaction(id, original: id, token: token)))
        }
        try cli.ok(["notify", "-q"] + world.trust, stdin: lines.joined(separator: "\n") + "\n")
        return cli
    }

    /// The rows of the table under the header that starts with `first`: lines that start with a
    /// row's first cell (at most three spaces in, a right-aligned id), up to the page note; a value
    /// wrapped onto indented lines below its row counts once.
    static func rows(_ lines: [String], header first: String) -> Int {
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(first + " ") }) else {
            return -1
        }
        return lines[(start + 1)...].prefix { !$0.isEmpty && !$0.contains(" more: --limit") }
            .filter { $0.range(of: #"^ {0,3}[0-9A-Za-z]"#, options: .regularExpression) != nil }.count
    }

    @Test(.enabled(if: Examples.hasPython)) func everyListShowsOnePageAndTheWayToAll() throws {
        let cli = try Self.database()
        let lists: [(args: [String], header: String, noun: String, total: Int)] = [
            (["orders", "list"], "NO", "orders", 34), (["contracts", "list"], "CONTRACT_ID", "contracts", 34),
            (["audit", "list", "--command", "notify"], "ID", "audit rows", 68),
        ]
        for list in lists {
            #expect(try cli.ok(list.args + ["-o", "json"]).jsonArray().count == list.total)
            for columns in [80, 120] {
                let page = try TerminalTablesTests.screen(cli, list.args, columns: columns)
                #expect(Self.rows(page, header: list.header) == 30, "\(list.args) at \(columns): \(page)")
                let note = "30 of \(list.total) \(list.noun) shown; \(list.total - 30) more: --limit all (or --limit N)"
                #expect(page.contains(note), "\(list.args) at \(columns): \(page.suffix(3))")
                for line in page { #expect(line.count <= columns, "\(columns): \(line)") }
                // `--limit all`: every row, no page note.
                let all = try TerminalTablesTests.screen(cli, list.args + ["--limit", "all"], columns: columns)
                #expect(Self.rows(all, header: list.header) == list.total, "\(list.args) all at \(columns)")
                #expect(!all.contains { $0.contains("more: --limit") })
                // `--limit N`: N rows.
                let five = try TerminalTablesTests.screen(cli, list.args + ["--limit", "5"], columns: columns)
                #expect(Self.rows(five, header: list.header) == 5)
            }
            // A pipe gets every row, as before; --limit cuts it too.
            #expect(try cli.ok(list.args).lines.count == list.total + 1)
            #expect(try cli.ok(list.args + ["--limit", "7"]).lines.count == 8)
            #expect(try cli.ok(list.args + ["--limit", "ALL", "-o", "json"]).jsonArray().count == list.total)
            // 0 and words are refused, saying how to get every row.
            for bad in ["0", "-3", "every"] {
                let r = try cli.run(list.args + ["--limit", bad])
                #expect(r.status == 64, "\(r)")
                #expect(r.stderr.contains("--limit all shows every row"), "\(r.stderr)")
            }
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func doctorPagesItsFindings() throws {
        let cli = try Self.database()
        // 34 orders marked paid by hand, without a transaction proving it: 34 findings.
        let orders = try cli.ok(["orders", "list", "-o", "json"]).jsonArray().compactMap { $0["no"] as? String }
        try cli.ok(
            ["orders", "update", "--from", "-", "--reason", "test", "-q"],
            stdin: orders.map { "{\"no\":\"\($0)\",\"trade_no\":null}" }.joined(separator: "\n") + "\n")
        let json = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        let total = try #require(try json.jsonObject()["findings"] as? [[String: Any]]).count
        #expect(total >= 34, "\(json.stdout.prefix(2000))")
        let numbered = { (screen: [String]) in screen.filter { $0.range(of: #"^\d+\. "#, options: .regularExpression) != nil } }
        for columns in [80, 120] {
            // A terminal groups many lapsed contracts into one finding: the page counts what it shows.
            let all = try TerminalTablesTests.screen(
                cli, ["doctor", "--environment", "Sandbox", "--limit", "all"], columns: columns, status: 1)
            let shown = numbered(all).count
            #expect(shown > 30, "\(columns): \(shown)")
            let screen = try TerminalTablesTests.screen(
                cli, ["doctor", "--environment", "Sandbox"], columns: columns, status: 1)
            #expect(numbered(screen).count == 30, "\(columns): \(numbered(screen).count)")
            let note = "doctor: 30 of \(shown) findings shown; \(shown - 30) more: --limit all (or --limit N)"
            #expect(screen.contains(note), "\(screen.suffix(4))")
            // The summary still counts every finding.
            #expect(screen.contains { $0.contains("doctor: \(total) findings") }, "\(screen.suffix(4))")
        }
        // --limit N cuts every format; the count stays whole.
        let three = try cli.run(["doctor", "--environment", "Sandbox", "-o", "ndjson", "--limit", "3"])
        #expect(three.lines.count == 3 && three.stderr.contains("\(total) findings"), "\(three)")
        // The help says the rule.
        let help = try cli.ok(["doctor", "--help"]).stdout
        #expect(help.contains("--limit <n|all>") && help.contains("first 30"), "\(help)")
    }
}
