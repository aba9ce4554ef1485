import Foundation
import Testing

/// Corrections and long lists: `audit undo` of several rows or a ticket's batch (all or
/// nothing, rows marked "undone by #N"), per-row reasons of `--from` batches, a default page at a
/// terminal, hints that name the value they know.
@Suite("batch undo, per-row reasons, terminal pages, filled-in hints", .serialized)
struct BatchUndoAndLongListsTests {
    static let alice = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"
    static let bob = "a9c8e7d6-5b4a-4c3d-9e2f-1a0b9c8d7e6f"

    /// The user of order `no`.
    static func user(_ cli: CLI, _ no: String) throws -> String? {
        try cli.ok(["orders", "show", no, "-o", "json"]).jsonObject()["orders"]
            .flatMap { ($0 as? [[String: Any]])?.first?["user_id"] as? String }
    }

    /// Moves alice's and bob's orders to `to` under `ticket`, each row with its own reason (no --reason).
    static func move(_ cli: CLI, to user: String, ticket: String) throws {
        let rows = [alice, bob].map { "{\"no\":\"\($0)\",\"user_id\":\"\(user)\",\"reason\":\"import of \($0.prefix(4))\"}" }
        let file = try cli.write("move-\(ticket).ndjson", rows.joined(separator: "\n") + "\n")
        try cli.ok(["orders", "update", "--from", file, "--ticket", ticket, "-q"])
    }

    @Test func aTicketsBatchIsUndoneWholeAndMarked() throws {
        let cli = try Examples.exampleDatabase()
        try Self.move(cli, to: "zed", ticket: "T-5")
        #expect(try Self.user(cli, Self.alice) == "zed" && Self.user(cli, Self.bob) == "zed")
        let batch = try cli.ok(["audit", "list", "--ticket", "T-5", "-o", "json"]).jsonArray()
        #expect(batch.count == 2 && batch.allSatisfy { ($0["reason"] as? String)?.hasPrefix("import of ") == true })
        #expect(batch.allSatisfy { $0.keys.contains("undone_by") && $0["undone_by"] is NSNull })

        let undo = try cli.run(["audit", "undo", "--ticket", "T-5", "--reason", "wrong file"])
        #expect(undo.status == 0, "\(undo)")
        #expect(try Self.user(cli, Self.alice) == "alice" && Self.user(cli, Self.bob) == "bob")
        #expect(undo.stderr.contains("undid 2 audit rows of ticket T-5"), "\(undo)")
        // Each row's undo is audited under the ticket; each undone row names its undo.
        let after = try cli.ok(["audit", "list", "--ticket", "T-5", "-o", "json"]).jsonArray()
        let undos = after.filter { ($0["command"] as? String)?.hasPrefix("audit undo ") == true }
        #expect(undos.count == 2)
        for row in batch {
            let id = try #require(row["id"] as? Int)
            let undoneBy = try #require(after.first { $0["id"] as? Int == id }?["undone_by"] as? Int)
            #expect(undos.contains { $0["id"] as? Int == undoneBy && $0["command"] as? String == "audit undo \(id)" })
        }
        let table = try cli.ok(["audit", "list", "--ticket", "T-5"]).stdout
        #expect(table.contains("UNDONE BY"), "\(table)")
        for undo in undos { #expect(table.contains("#\(undo["id"] as! Int)"), "\(table)") }
        // On an 80-column terminal too, the mark stays (other columns give way).
        if Examples.hasPython {
            let narrow = try TerminalTablesTests.screen(cli, ["audit", "list", "--ticket", "T-5"], columns: 80)
            #expect(narrow.contains { $0.contains("UNDONE BY") }, "\(narrow)")
            #expect(narrow.filter { $0.contains("  #") }.count == 2, "\(narrow)")
        }
        // Without undone rows the table has no such column.
        #expect(!(try cli.ok(["audit", "list", "--command", "notify"]).stdout.contains("UNDONE BY")))

        // Again: every row is undone already; refused, naming one, nothing written.
        let count = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().count
        let again = try cli.run(["audit", "undo", "--ticket", "T-5", "--reason", "again"])
        #expect(again.status == 4, "\(again)")
        #expect(again.stderr.contains("already undone by #"), "\(again)")
        #expect(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().count == count)
        let none = try cli.run(["audit", "undo", "--ticket", "T-none", "--reason", "r"])
        #expect(none.status == 3 && none.stderr.contains("no audit rows recorded under ticket T-none"), "\(none)")
        let nothing = try cli.run(["audit", "undo", "--reason", "r"])
        #expect(nothing.status == 64, "\(nothing)")
    }

    @Test func severalIdsAreAllOrNothingAndTheRefusalNamesTheRow() throws {
        let cli = try Examples.exampleDatabase()
        try Self.move(cli, to: "zed", ticket: "T-6")
        let ids = try cli.ok(["audit", "list", "--ticket", "T-6", "-o", "json"]).jsonArray().compactMap { $0["id"] as? Int }
        #expect(ids.count == 2)
        // Bob's order changed again since: its row cannot be undone, so neither is.
        try cli.ok(["orders", "update", Self.bob, "--user", "yan", "--reason", "later fix", "-q"])
        let bobsRow = try #require(
            try cli.ok(["audit", "list", "--ticket", "T-6", "-o", "json"]).jsonArray()
                .first { $0["key"] as? String == Self.bob }?["id"] as? Int)
        let count = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().count
        let refused = try cli.run(["audit", "undo"] + ids.map(String.init) + ["--reason", "wrong file"])
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.stderr.contains("changed since audit row \(bobsRow)"), "\(refused)")
        #expect(try Self.user(cli, Self.alice) == "zed" && Self.user(cli, Self.bob) == "yan")
        #expect(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().count == count)
        // The other one alone can be undone.
        let aliceRow = try #require(ids.first { $0 != bobsRow })
        try cli.ok(["audit", "undo", "#\(aliceRow)", "--reason", "wrong file", "-q"])
        #expect(try Self.user(cli, Self.alice) == "alice")
    }

    @Test func aBatchNeedsNoReasonWhenEveryRowHasOne() throws {
        let cli = try Examples.exampleDatabase()
        // One row without a reason and no --reason: refused, naming the line; nothing changed.
        let file = try cli.write(
            "half.ndjson",
            "{\"no\":\"\(Self.alice)\",\"user_id\":\"zed\",\"reason\":\"r\"}\n{\"no\":\"\(Self.bob)\",\"user_id\":\"zed\"}\n")
        let half = try cli.run(["orders", "update", "--from", file])
        #expect(half.status == 64, "\(half)")
        #expect(half.stderr.contains("line 2: no \"reason\" in this row, and no --reason for the batch"), "\(half)")
        #expect(try Self.user(cli, Self.alice) == "alice")
        // With --reason, that row takes it.
        try cli.ok(["orders", "update", "--from", file, "--reason", "batch reason", "-q"])
        let reasons = try cli.ok(["audit", "list", "--command", "orders update", "-o", "json"]).jsonArray()
            .compactMap { $0["reason"] as? String }
        #expect(Set(reasons) == ["r", "batch reason"], "\(reasons)")
        // One row, no --reason: still required.
        let single = try cli.run(["orders", "update", Self.alice, "--status", "refunded"])
        #expect(single.status == 64 && single.stderr.contains("missing required option --reason"), "\(single)")
        let contracts = try cli.run(["contracts", "update", "2000000900000001", "--status", "expired"])
        #expect(contracts.status == 64 && contracts.stderr.contains("--reason"), "\(contracts)")
    }

    @Test(.enabled(if: Examples.hasPython)) func longListsShowAPageAtATerminal() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let rows = (1...34).map { "{\"user\":\"u\($0)\",\"product\":\"com.example.iapctl.monthly\"}" }
        try cli.ok(["orders", "create", "--from", try cli.write("many.ndjson", rows.joined(separator: "\n") + "\n"), "-q"])
        for (args, noun) in [(["orders", "list"], "orders"), (["audit", "list"], "audit rows")] {
            let r = try Examples.onTerminal(args, input: "", columns: 120, environment: cli.environment)
            #expect(r.status == 0, "\(r.screen)")
            #expect(Self.rows(r.screen, header: args[0] == "orders" ? "NO" : "ID") == 30, "\(r.screen)")
            #expect(r.screen.contains("30 of 34 \(noun) shown; 4 more: --limit all (or --limit N)"), "\(r.screen)")
            // --limit: as many as asked, no page note.
            let limited = try Examples.onTerminal(
                args + ["--limit", "40"], input: "", columns: 120, environment: cli.environment)
            #expect(!limited.screen.contains("30 of 34"), "\(limited.screen)")
            #expect(Self.rows(limited.screen, header: args[0] == "orders" ? "NO" : "ID") == 34, "\(limited.screen)")
            // A pipe and the other formats: every row, as before.
            let piped = try cli.ok(args)
            #expect(piped.lines.count == 35 && !piped.stderr.contains("more: --limit"), "\(piped)")
            #expect(try cli.ok(args + ["-o", "json"]).jsonArray().count == 34)
        }
    }

    /// The rows of the table under the header starting with `first` on a terminal's screen (up to a
    /// blank line or the end); a value wrapped onto indented lines below its row counts once.
    static func rows(_ screen: String, header first: String) -> Int {
        let lines = screen.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(first + " ") }) else { return -1 }
        return lines[(start + 1)...].prefix { !$0.isEmpty && !$0.contains(" more: --limit") && !$0.hasPrefix("iapctl") }
            .filter { !$0.hasPrefix("    ") }.count
    }

    @Test func hintsFillInTheValuesTheyKnow() throws {
        let cli = try Examples.exampleDatabase()
        // A user id given where an order is asked for: the hint lists that user's orders.
        let user = try cli.run(["orders", "show", "alice"])
        #expect(user.status == 3, "\(user)")
        #expect(user.stderr.contains("iapctl orders list --user alice"), "\(user)")
        #expect(!user.stderr.contains("USER"), "\(user)")
        // An unknown key keeps the general hint.
        let unknown = try cli.run(["orders", "show", "nobody-at-all"])
        #expect(unknown.status == 3 && unknown.stderr.contains("--user USER"), "\(unknown)")
    }

    @Test(.enabled(if: Examples.hasPython)) func contractEventsKeepTheTransactionAtEightyColumns() throws {
        let cli = try Examples.exampleDatabase()
        for columns in [80, 120] {
            let lines = try TerminalTablesTests.screen(cli, ["contracts", "show", "2000000900000001"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let (header, section) = try TerminalTablesTests.table(lines, header: "SIGNED")
            // (A detail wrapped onto indented lines under its event is not an event.)
            let rows = section.prefix { !$0.isEmpty && !$0.hasPrefix("Changes") }.filter { !$0.hasPrefix("      ") }
            #expect(header.contains("TRANSACTION") && header.contains("EVENT"), "\(columns): \(lines)")
            // Each event names its transaction whole (16 digits), not cut.
            let transaction = try Regex("  2000000900[0-9]{6}( |$)")
            #expect(!rows.isEmpty && rows.allSatisfy { $0.firstMatch(of: transaction) != nil }, "\(columns): \(rows)")
        }
    }
}
