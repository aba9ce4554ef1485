import Foundation
import Testing

/// On a terminal, help, error lines and a table's wrapping DETAIL break between words and stay
/// inside the screen (the terminal broke them mid-word, DETAIL ran on from column 0); off a
/// terminal errors keep their lines as they are. Pseudo-terminal at 80 and 120 columns.
@Suite("Long lines wrap at words on a terminal", .serialized)
struct WrappedLinesTests {
    /// The words of `lines`, with a command's ` \` line continuations taken out.
    static func words(_ lines: [String]) -> [String] {
        lines.joined(separator: " ").split(separator: " ").map(String.init).filter { $0 != "\\" }
    }

    @Test(.enabled(if: Examples.hasPython)) func helpStaysInsideTheScreen() throws {
        let cli = try Examples.exampleDatabase()
        for args in [["--help"], ["doctor", "--help"], ["restore", "--help"], ["verify", "--help"], ["notify", "--help"]] {
            for columns in [80, 120] {
                let lines = try TerminalTablesTests.screen(cli, args, columns: columns)
                for line in lines { #expect(line.count <= columns, "\(args) at \(columns): \(line)") }
                // No word is lost or split: the help's words are the words of its unwrapped sentences.
                let text = Self.words(lines).joined(separator: " ")
                if args == ["restore", "--help"] {
                    #expect(text.contains("--reason 'new phone' < restored.txt"), "\(lines)")
                }
                if args == ["doctor", "--help"] {
                    #expect(text.contains("facts' digests, contract snapshots' check lines"), "\(lines)")
                }
            }
        }
        // A long example breaks with ` \`, so it still runs when pasted.
        let restore = try TerminalTablesTests.screen(cli, ["restore", "--help"], columns: 80)
        let broken = try #require(restore.firstIndex { $0.hasPrefix("  iapctl restore") && $0.hasSuffix(" \\") }, "\(restore)")
        #expect(restore[broken + 1].hasPrefix("    ") && !restore[broken + 1].hasPrefix("      "), "\(restore)")
    }

    @Test(.enabled(if: Examples.hasPython)) func errorsWrapUnderTheirText() throws {
        let cli = try Examples.exampleDatabase()
        for args in [["orders", "show", "nope"], ["verify", "no-such-file.jws"], ["restore", "--user", "u1", "missing.txt"]] {
            let piped = try cli.run(args)
            #expect(piped.status != 0)
            // Off a terminal: the lines as they are (one error line, one hint line).
            let pipedLines = piped.stderr.split(separator: "\n").map(String.init)
            #expect(pipedLines.first?.hasPrefix("error: ") == true, "\(piped)")
            for columns in [80, 120] {
                let lines = try TerminalTablesTests.screen(cli, args, columns: columns, status: piped.status)
                for line in lines { #expect(line.count <= columns, "\(args) at \(columns): \(line)") }
                #expect(Self.words(lines) == Self.words(pipedLines), "\(args) at \(columns): \(lines)")
                // Continuation lines hang under the text of their error or hint.
                var prefix = ""
                for line in lines {
                    if line.hasPrefix("error: ") || line.hasPrefix("hint: ") {
                        prefix = String(line.prefix { $0 != " " }) + " "
                    } else if !prefix.isEmpty, line.hasPrefix(" ") {
                        #expect(line.hasPrefix(String(repeating: " ", count: prefix.count)), "\(line)")
                    } else {
                        prefix = ""
                    }
                }
            }
        }
        let long = try TerminalTablesTests.screen(cli, ["orders", "show", "nope"], columns: 80, status: 3)
        #expect(long.count > 2 && long[1].hasPrefix("       "), "\(long)")
    }

    @Test(.enabled(if: Examples.hasPython)) func unmatchedDetailWrapsInItsColumn() throws {
        let all = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        for columns in [80, 120] {
            // Applied (not a dry run): the short verdict leaves DETAIL in the row, the last column.
            let cli = try CLI()
            try cli.ok(["db", "init", "-q"])
            let one = try cli.write("one.ndjson", String(all.split(separator: "\n")[1]) + "\n")
            let lines = try TerminalTablesTests.screen(
                cli, ["notify", one] + Examples.exampleTrust, columns: columns, status: 3)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            let row = try #require(lines.firstIndex { $0.contains("unmatched") }, "\(lines)")
            // Every line of the detail below its row is indented: none runs on from column 0.
            let detail = lines[(row + 1)...].prefix { !$0.hasPrefix("notify:") }
            #expect(!detail.isEmpty && detail.allSatisfy { $0.hasPrefix("    ") }, "\(columns): \(lines)")
            #expect(Self.words(Array(detail)).joined(separator: " ").contains("`iapctl notify --replay-unmatched`"), "\(lines)")
        }
    }

    @Test(.enabled(if: Examples.hasPython)) func restoreDetailWrapsInItsColumn() throws {
        let cli = try Examples.exampleDatabase()
        let bad = try cli.write("bad.jws", "eyJhbGciOiJFUzI1NiJ9.e30.abc\n")
        let args = ["restore", "--user", "alice", bad] + Examples.exampleTrust
        let piped = try cli.run(args)
        // Off a terminal the row is one line, the error whole.
        #expect(piped.stdout.contains("error: header has no x5c certificate chain"), "\(piped)")
        for columns in [80, 120] {
            let lines = try TerminalTablesTests.screen(cli, args, columns: columns, status: piped.status)
            for line in lines { #expect(line.count <= columns, "\(columns): \(line)") }
            #expect(Self.words(lines).joined(separator: " ").contains("error: header has no x5c certificate chain"), "\(lines)")
        }
    }
}
