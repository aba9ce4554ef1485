import Foundation
import Testing

/// What a terminal of 80 and 120 columns shows of `orders list --user alice`,
/// `contracts show` and `contracts explain` (on a pseudo-terminal, as support reads them).
@Suite("Terminal tables keep the columns support reads", .serialized)
struct TerminalTablesTests {
    static let order = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"

    /// The screen of `iapctl ARGS` at `columns` wide, escape codes removed, as lines.
    static func screen(_ cli: CLI, _ args: [String], columns: Int, status: Int32 = 0) throws -> [String] {
        let r = try Examples.onTerminal(args, input: "", columns: columns, environment: cli.environment)
        #expect(r.status == status, "\(r.screen)")
        let plain = r.screen.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        return plain.split(separator: "\n").map(String.init)
    }

    /// The header line starting with `first` and the rows under it up to the next blank line.
    static func table(_ lines: [String], header first: String) throws -> (header: [String], rows: [String]) {
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(first + " ") })
        let rows = lines[(start + 1)...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return (lines[start].split(separator: " ").map(String.init), Array(rows))
    }

    @Test(.enabled(if: Examples.hasPython)) func ordersOfOneUserKeepStatusAndExpiry() throws {
        let cli = try Examples.exampleDatabase()
        for columns in [80, 120] {
            let lines = try Self.screen(cli, ["orders", "list", "--user", "alice"], columns: columns)
            let (header, rows) = try Self.table(lines, header: "NO")
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            // USER is alice on every row (the filter fixed it): it goes first; EXPIRES and STATUS stay.
            #expect(!header.contains("USER"), "\(columns): \(lines)")
            #expect(header.contains("EXPIRES") && header.contains("STATUS") && header.contains("PRODUCT"), "\(lines)")
            #expect(rows.count == 3)
            for row in rows {
                #expect(row.contains("paid") && row.contains("T10:00:00Z"), "\(row)")
                // The product keeps the part that differs, not the shared `com.example.…`.
                #expect(row.contains("monthly"), "\(row)")
                // The order number gives way (to no fewer than 16 characters) only when it must.
                let number = String(row.prefix { $0 != " " })
                #expect(number.count >= 16)
                if columns == 120 { #expect(number.count == 36, "\(row)") }
            }
        }
        // Off a terminal nothing changes: every column, whole.
        let piped = try cli.ok(["orders", "list", "--user", "alice"]).stdout
        #expect(piped.contains("USER") && piped.contains(Self.order) && piped.contains("com.example.iapctl.monthly"))
    }

    /// Unfiltered lists keep whose row it is (USER), the product, the state and the date; a product
    /// cut on screen never reads as the end of another product (`…monthly` vs `…premium.monthly`).
    @Test(.enabled(if: Examples.hasPython)) func unfilteredListsKeepUserAndTellProductsApart() throws {
        let cli = try Examples.exampleDatabase()
        for columns in [80, 100, 120] {
            for (command, first) in [("orders", "NO"), ("contracts", "CONTRACT_ID")] {
                let lines = try Self.screen(cli, [command, "list"], columns: columns)
                for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
                let (header, rows) = try Self.table(lines, header: first)
                for title in ["USER", "PRODUCT", "STATUS", "EXPIRES"] {
                    #expect(header.contains(title), "\(command) at \(columns): \(lines)")
                }
                let products = rows.map { row in
                    row.split(separator: " ").first { $0.contains("monthly") }.map(String.init) ?? ""
                }
                #expect(products.allSatisfy { !$0.isEmpty }, "\(rows)")
                let plain = Set(products.filter { !$0.contains("premium") })
                let premium = Set(products.filter { $0.contains("premium") })
                #expect(!plain.isEmpty && !premium.isEmpty, "\(rows)")
                for shown in plain {
                    // Not a suffix of the premium product's full id: the cut says which product it is.
                    #expect(
                        !"com.example.iapctl.premium.monthly".hasSuffix(shown.replacingOccurrences(of: "…", with: "")),
                        "\(command) at \(columns): \(shown)")
                }
            }
            // A contract's Orders table keeps the same columns whatever its data.
            for contract in ["2000000900000001", "2000000900000002"] {
                let lines = try Self.screen(cli, ["contracts", "show", contract], columns: columns)
                let (header, _) = try Self.table(lines, header: "NO")
                #expect(header.contains("STATUS") && header.contains("EXPIRES"), "\(contract) at \(columns): \(lines)")
            }
        }
    }

    /// A hand override reads as one where people look: the row's own field says "by hand" and what
    /// Apple's facts say; the Overrides note wraps whole; an order table's cell says "by hand".
    @Test(.enabled(if: Examples.hasPython)) func handOverridesReadAsSuch() throws {
        let cli = try Examples.exampleDatabase()
        try cli.ok(["contracts", "update", "2000000900000001", "--status", "revoked", "--reason", "chargeback", "-q"])
        try cli.ok(["orders", "update", Self.order, "--status", "refunded", "--reason", "refund by phone", "-q"])
        for columns in [80, 120] {
            let lines = try Self.screen(cli, ["contracts", "show", "2000000900000001"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let text = lines.joined(separator: " ").split(separator: " ").joined(separator: " ")
            #expect(text.contains("status revoked (by hand, audit #"), "\(columns): \(lines)")
            #expect(text.contains("Apple's facts say expired)"), "\(columns): \(lines)")
            #expect(text.contains("status revoked by hand (#") && text.contains("Apple's newest facts say expired"))
            #expect(text.contains("status refunded by hand (#") && text.contains("Apple's newest facts say paid"))
            #expect(lines.contains { $0.hasPrefix("  7b1f0c1e") && $0.contains("refunded by hand") }, "\(lines)")
            let order = try Self.screen(cli, ["orders", "show", Self.order], columns: columns)
            let orderText = order.joined(separator: " ").split(separator: " ").joined(separator: " ")
            #expect(orderText.contains("status refunded (by hand, audit #"), "\(columns): \(order)")
            #expect(orderText.contains("Apple's facts say paid)"), "\(columns): \(order)")
        }
        // Off a terminal and in JSON the stored value stays as it is.
        let json = try cli.ok(["contracts", "show", "2000000900000001", "-o", "json"]).jsonObject()
        #expect((json["contract"] as? [String: Any])?["status"] as? String == "revoked")
    }

    /// What a batch changed wraps whole on a terminal (`order cb049508-b4ed…` was all of it):
    /// notify's REFUND row and the audit trail's changes.
    @Test(.enabled(if: Examples.hasPython)) func batchChangesWrapWhole() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--from", CLI.packageRoot.appendingPathComponent("examples/orders.ndjson").path, "-q"])
        let input = CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson").path
        for columns in [80, 120] {
            let lines = try Self.screen(
                cli, ["notify", input, "--dry-run"] + Examples.exampleTrust, columns: columns, status: 1)
            let text = lines.joined(separator: " ").split(separator: " ").joined(separator: " ")
            #expect(
                text.contains("updated: status paid → refunded; contract 2000000900000002 updated: status active → revoked"),
                "\(columns): \(lines)")
            #expect(!lines.contains { $0.contains("would apply") && $0.hasSuffix("…") }, "\(lines)")
        }
        _ = try cli.run(["notify", input, "-q"] + Examples.exampleTrust)
        for columns in [80, 120] {
            let lines = try Self.screen(cli, ["audit", "list", "--contract", "2000000900000002"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let text = lines.joined(separator: " ").split(separator: " ").joined(separator: " ")
            #expect(text.contains("status: active → revoked"), "\(columns): \(lines)")
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func idsAndVerdictsAreNeverCutBelowSixteen() throws {
        let cli = try Examples.exampleDatabase()
        for columns in [80, 120] {
            let lines = try Self.screen(cli, ["contracts", "show", "2000000900000001"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            // No id cell (a transaction, an order number, a row key) is cut to fewer than 16
            // characters (`2000000900…` was 11): a cell is a column's text after two spaces.
            let cutId = try Regex("(^|  )[0-9a-f-]{1,14}…")
            for line in lines { #expect(line.firstMatch(of: cutId) == nil, "\(columns): \(line)") }
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func explainShowsWhyOnATerminal() throws {
        let cli = try Examples.exampleDatabase()
        for columns in [80, 120] {
            let lines = try Self.screen(cli, ["contracts", "explain", "2000000900000001"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let (header, rows) = try Self.table(lines, header: "#")
            // At 80 WHY goes under each row, so the date, event and verdict stay beside the state.
            #expect(header.contains("STATE") && (columns == 80 || header.contains("WHY")), "\(columns): \(lines)")
            for title in ["SIGNED", "EVENT", "VERDICT"] { #expect(header.contains(title), "\(columns): \(lines)") }
            #expect(rows.contains { $0.contains("2025-04-01T10:00:05Z") && $0.contains("duplicate") }, "\(rows)")
            let events = try Self.table(
                try Self.screen(cli, ["contracts", "show", "2000000900000001"], columns: columns), header: "SIGNED")
            for title in ["EVENT", "VERDICT", "TRANSACTION"] {
                #expect(events.header.contains(title), "\(columns): \(events)")
            }
            #expect(events.rows.contains { $0.contains("DID_RENEW") && $0.contains("duplicate") }, "\(events.rows)")
            // WHY wraps inside its column: the whole reason is there, readable.
            let text = rows.joined(separator: " ").split(separator: " ").joined(separator: " ")
            #expect(text.contains("was already processed (ledger #4: applied)"), "\(columns): \(rows)")
            #expect(text.contains("auto_renew off"))
        }
        // --wide cuts nothing but wraps WHY at the terminal's edge instead of 600-column lines.
        let wide = try Self.screen(cli, ["contracts", "explain", "2000000900000001", "--wide"], columns: 100)
        let (_, rows) = try Self.table(wide, header: "#")
        #expect(rows.allSatisfy { $0.count < 250 }, "\(rows)")
        #expect(rows.contains { $0.contains("2025-03-01T10:00:05Z  SUBSCRIBED/INITIAL_BUY") })
        #expect(!wide.contains { $0.count > 300 })
    }

    /// The entries of one receipt are all LINE 1: TRANSACTION tells them apart, whole, and the
    /// verdict is never cut (`owned-by-o…` was).
    @Test(.enabled(if: Examples.hasPython)) func receiptRestoreRowsNameTheirTransaction() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let file = try ReceiptE2ETests.derFile(cli)
        for columns in [80, 120] {
            let lines = try Self.screen(
                cli, ["restore", "--user", "alice", file] + ReceiptE2ETests.trust, columns: columns, status: 1)
            let (header, table) = try Self.table(lines, header: "LINE")
            let rows = table.filter { $0.hasPrefix("   1  ") }
            #expect(header.contains("TRANSACTION") && header.contains("VERDICT"), "\(lines)")
            let transactions = rows.compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
            #expect(transactions.count == 9 && Set(transactions).count == 9, "\(rows)")
            #expect(transactions.allSatisfy { $0.count == 16 && !$0.hasSuffix("…") }, "\(transactions)")
        }
        let example = try Examples.exampleDatabase()
        let restored = CLI.packageRoot.appendingPathComponent("examples/restored.ndjson").path
        let lines = try Self.screen(
            example, ["restore", "--user", "bob", restored] + Examples.exampleTrust, columns: 80, status: 1)
        #expect(lines.contains { $0.contains("  owned-by-other  ") }, "\(lines)")
    }
}
