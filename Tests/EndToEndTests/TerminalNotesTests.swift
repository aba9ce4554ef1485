import Foundation
import Testing

/// On a terminal of 80 and 120 columns (pseudo-terminal): a contract's EVENT names stay readable
/// (whole, or broken after their `/` inside the column), `audit list` keeps the COMMAND whole, and
/// notes, warnings, doctor's information lines and verify's report lines wrap at words under
/// their text with a command in them intact. Off a terminal every such line is as it was.
@Suite("Event names, commands and notes stay whole on a terminal", .serialized)
struct TerminalNotesTests {
    static let contract = "2000000900000001"

    /// The EVENT of each of the contract's ledger events (as JSON gives them, uncut).
    static func eventNames(_ cli: CLI) throws -> [String] {
        let json = try cli.ok(["contracts", "show", contract, "-o", "json"]).jsonObject()
        let events = try #require(json["events"] as? [[String: Any]])
        return events.compactMap { $0["event"] as? String }
    }

    /// Whether `name` reads whole on the screen: on one line, or in pieces (broken after `/` or
    /// `_`) one under the other at the same column.
    static func readable(_ name: String, in lines: [String]) -> Bool {
        for (number, line) in lines.enumerated() {
            let characters = Array(line)
            for column in characters.indices where column == 0 || characters[column - 1] == " " {
                let token = String(characters[column...].prefix { $0 != " " })
                guard !token.isEmpty, name.hasPrefix(token) else { continue }
                var joined = token
                var next = number + 1
                while joined.count < name.count, next < lines.count, lines[next].count > column,
                    joined.hasSuffix("/") || joined.hasSuffix("_")
                {
                    let piece = Array(lines[next])[column...].prefix { $0 != " " }
                    guard !piece.isEmpty, column == 0 || Array(lines[next])[column - 1] == " " else { break }
                    joined += String(piece)
                    next += 1
                }
                if joined == name { return true }
            }
        }
        return false
    }

    @Test(.enabled(if: Examples.hasPython)) func eventNamesAreNeverCut() throws {
        let cli = try Examples.exampleDatabase()
        let names = try Self.eventNames(cli)
        #expect(names.contains { $0.contains("/") }, "\(names)")
        for columns in [80, 120] {
            for args in [["contracts", "show", Self.contract], ["contracts", "explain", Self.contract]] {
                let lines = try TerminalTablesTests.screen(cli, args, columns: columns)
                for line in lines { #expect(line.count <= columns, "\(args) at \(columns): \(line)") }
                for name in Set(names) {
                    #expect(Self.readable(name, in: lines), "\(name) in \(args) at \(columns): \(lines)")
                }
                // No event, and no state or verdict beside it, is shortened with an ellipsis.
                let rows = try TerminalTablesTests.table(lines, header: args[1] == "show" ? "SIGNED" : "#").rows
                    .prefix { $0.hasPrefix(" ") }
                #expect(!rows.contains { $0.contains(#/[A-Z_/]…/#) || $0.hasSuffix("…") }, "\(args) at \(columns): \(rows)")
            }
            // At 120 the names are whole, on one line each; the Events table keeps VERDICT and TRANSACTION.
            let show = try TerminalTablesTests.screen(cli, ["contracts", "show", Self.contract], columns: columns)
            let events = try TerminalTablesTests.table(show, header: "SIGNED")
            for title in ["EVENT", "VERDICT"] + (columns == 120 ? ["TRANSACTION"] : []) {
                #expect(events.header.contains(title), "\(columns): \(show)")
            }
            if columns == 120 {
                for name in Set(names) {
                    #expect(show.contains { $0.split(separator: " ").contains(Substring(name)) }, "\(name): \(show)")
                }
            }
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func auditListKeepsTheCommandWhole() throws {
        let cli = try Examples.exampleDatabase()
        try cli.ok(["contracts", "update", Self.contract, "--status", "revoked", "--reason", "chargeback", "-q"])
        try cli.ok(["orders", "update", TerminalTablesTests.order, "--status", "refunded", "--reason", "refund by phone", "-q"])
        for columns in [80, 120] {
            let lines = try TerminalTablesTests.screen(cli, ["audit", "list"], columns: columns)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let table = try TerminalTablesTests.table(lines, header: "ID")
            #expect(table.header.contains("COMMAND"), "\(columns): \(lines)")
            #expect(table.rows.contains { $0.contains(" contracts update ") }, "\(columns): \(lines)")
            #expect(table.rows.contains { $0.contains(" orders update ") }, "\(columns): \(lines)")
            #expect(!table.rows.contains { $0.range(of: #"(orders|contracts) u[a-z]*…"#, options: .regularExpression) != nil })
        }
    }

    /// Lines of `screen` from the one starting with `first` through its continuation lines (those
    /// indented deeper than it).
    static func block(_ lines: [String], startingWith first: String) throws -> [String] {
        let start = try #require(lines.firstIndex { $0.hasPrefix(first) }, "\(first): \(lines)")
        let depth = lines[start].prefix { $0 == " " }.count
        var block = [lines[start]]
        for line in lines[(start + 1)...] {
            guard line.prefix(while: { $0 == " " }).count > depth, line.contains(where: { $0 != " " }) else { break }
            block.append(line)
        }
        return block
    }

    /// The text of wrapped lines as one line: a command's ` \` breaks joined back.
    static func unwrapped(_ lines: [String]) -> String {
        lines.joined(separator: "\n").replacingOccurrences(of: #" \\\n *"#, with: " ", options: .regularExpression)
            .replacingOccurrences(of: #"\n *"#, with: " ", options: .regularExpression)
    }

    @Test(.enabled(if: Examples.hasPython)) func doctorInformationWrapsWithItsCommandWhole() throws {
        let cli = try Examples.exampleDatabase()
        try cli.ok(["contracts", "update", Self.contract, "--status", "active", "--reason", "goodwill", "-q"])
        let piped = try cli.run(["doctor"])
        let note = try #require(
            piped.stderr.split(separator: "\n").map(String.init).first { $0.hasPrefix("doctor: information") }, "\(piped)")
        // Off a terminal the note is one line, ending in the command that goes back to the facts.
        let command = try #require(note.range(of: "iapctl contracts update")).lowerBound
        let fix = String(note[command...])
        #expect(fix.contains("--clear-override"), "\(note)")
        for columns in [80, 120] {
            let lines = try TerminalTablesTests.screen(cli, ["doctor"], columns: columns, status: piped.status)
            // The note's lines fit (a finding's `fix` line is kept whole on purpose, for copying),
            // but for one word of a command longer than a line (MariaDB's quoted `--db` URL),
            // which is alone on its line rather than broken.
            let block = try Self.block(lines, startingWith: "doctor: information")
            for line in block where line.count > columns {
                let words = line.split(separator: " ").filter { $0 != "\\" }
                #expect(words.count == 1, "\(columns): \(line)")
            }
            #expect(block.count > 1, "\(columns): \(lines)")
            // Continuation lines hang under the note; no word is split or lost.
            for line in block.dropFirst() { #expect(line.hasPrefix("  "), "\(columns): \(block)") }
            #expect(WrappedLinesTests.words(block) == WrappedLinesTests.words([note]), "\(columns): \(block)")
            // The command is on a line of its own start, or broken only with ` \` (it runs when pasted).
            #expect(Self.unwrapped(block).contains(fix), "\(columns): \(block)")
            let first = try #require(block.firstIndex { $0.contains("iapctl contracts update") })
            let rest = block[first...]
            #expect(rest.dropLast().allSatisfy { $0.hasSuffix(" \\") } || rest.count == 1, "\(columns): \(block)")
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func verifyReportLinesWrapAtWords() throws {
        let cli = try CLI()
        let jws = try Examples.exampleNotification()
        let cut = try cli.write("cut.jws", String(jws.dropLast(1)) + "\n")
        let args = ["verify", cut] + Examples.exampleTrust
        let piped = try cli.run(args)
        #expect(piped.status == 65, "\(piped)")
        let report = piped.stdout.split(separator: "\n").map(String.init)
        let long = report.filter { $0.count > 80 && ($0.hasPrefix("  [") || $0.hasPrefix("  error: ") || $0.hasPrefix("  hint: ")) }
        #expect(!long.isEmpty, "\(piped)")
        for columns in [80, 120] {
            let screen = try TerminalTablesTests.screen(cli, args, columns: columns, status: 65)
            // The report's lines (the payload after them is data: a JWS in it stays whole).
            let lines = Array(screen.prefix { $0 != "  payload:" })
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            // A CA's name with `iapctl` in it is no command: wrapped as words, no ` \`.
            #expect(!lines.contains { $0.hasSuffix(" \\") }, "\(columns): \(lines)")
            for line in long {
                let lead = String(line.prefix(26))
                let block = try Self.block(lines, startingWith: lead)
                #expect(WrappedLinesTests.words(block) == WrappedLinesTests.words([line]), "\(columns): \(block)")
                if line.count > columns {
                    // Continuation lines hang under the text, not from the left edge.
                    #expect(block.count > 1 && block.dropFirst().allSatisfy { $0.hasPrefix("    ") }, "\(columns): \(block)")
                }
            }
        }
    }
}
