import Foundation
import IAPFoundation
import Testing

@testable import CommandLineKit

/// Moved from IAPCommandLineTests: tables cut only on a terminal, to its width; control
/// characters shown, never obeyed; CSV formulas neutralised.
@Suite("Terminal-safe output")
struct TerminalOutputTests {
    let long = String(repeating: "x", count: 150)

    @Test func tablesAreNeverCutOffATerminal() {
        let records: [Record] = [["no": .string("a"), "detail": .string(long)]]
        let text = OutputRenderer.render(
            records: records, columns: ["no", Column("detail", maxWidth: 20)], format: .table)
        #expect(text.contains(long))
        #expect(!text.contains("…"))
    }

    @Test func onATerminalTablesFitItsWidth() {
        let records: [Record] = [
            ["no": .string("order-1"), "user": .string("alice"), "detail": .string(long)],
            ["no": .string("order-2"), "user": .string("bob"), "detail": .string("short")],
        ]
        let columns: [Column] = ["no", "user", Column("detail", maxWidth: 20)]
        for width in [40, 80, 120] {
            let text = OutputRenderer.render(
                records: records, columns: columns, format: .table, style: OutputStyle(width: width))
            for line in text.split(separator: "\n") { #expect(TextWidth.of(String(line)) <= width, "\(width): \(line)") }
            #expect(text.contains("order-1") && text.contains("alice") && text.contains("…"))
        }
        // A table that fits is not touched.
        let narrow: [Record] = [["no": .string("order-1"), "detail": .string("fits")]]
        #expect(
            OutputRenderer.render(
                records: narrow, columns: ["no", Column("detail", maxWidth: 20)], format: .table,
                style: OutputStyle(width: 80))
                == "NO       DETAIL\norder-1  fits\n")
    }

    @Test func columnsThatCannotFitAreLeftOutAndSaidSo() {
        let uuid = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"
        let record: Record = [
            "no": .string(uuid), "user_id": .string("alice"), "product_id": .string("com.example.app.monthly"),
            "status": .string("paid"), "trade_no": .string("2000000900000001"),
            "origin_no": .string("2000000900000001"), "expires_date": .int(1_757_035_472_000),
            "updated_at": .int(1_757_035_472_000),
        ]
        let text = OutputRenderer.render(records: [record], format: .table, style: OutputStyle(width: 80))
        let lines = text.split(separator: "\n")
        #expect(lines.allSatisfy { TextWidth.of(String($0)) <= 80 }, "\(text)")
        #expect(lines[0].hasSuffix(": --wide)"), "\(text)")
        #expect(lines[0].hasPrefix("NO"))
        #expect(text.contains("alice"))
        // Ids are never cut below 16: a column that would be is left out instead.
        #expect(!text.contains("2000000900…"))
        // The row's key (the first column) is never cut: it is what support copies into a ticket.
        #expect(text.contains(uuid), "\(text)")
        // Off a terminal nothing is left out.
        #expect(OutputRenderer.render(records: [record], format: .table).contains("2025-09-05T01:24:32Z"))
    }

    @Test func instructionsAndHintColumnsAreNeverCut() {
        let hint = "no contract 42; recorded for replay (fix the cause, then run `iapctl notify --replay-unmatched`)"
        let records: [Record] = [
            ["line": .int(1), "detail": .string(hint), "fix": .string(long)],
            ["line": .int(2), "detail": .string(long), "fix": .string("x")],
        ]
        let columns: [Column] = ["line", Column("detail", maxWidth: 30), Column("fix", keepWhole: true)]
        let text = OutputRenderer.render(
            records: records, columns: columns, format: .table, style: OutputStyle(width: 80))
        #expect(text.contains(hint))
        #expect(text.contains(long))
    }

    @Test func controlCharactersAreShownNeverObeyed() {
        let hostile = "a\u{1B}]52;c;aGk=\u{07}b\u{9B}31mc\u{9D}0;t\u{9C}d\u{202E}fdp.exe\u{2066}"
        let records: [Record] = [["user_id": .string(hostile)]]
        for style in [OutputStyle(), OutputStyle(width: 80)] {
            let text = OutputRenderer.render(records: records, format: .table, style: style)
            #expect(!TerminalText.containsControl(text.replacingOccurrences(of: "\n", with: "")), "\(text)")
            #expect(text.contains("\\u{1b}]52") && text.contains("\\u{9b}") && text.contains("\\u{202e}"))
            let view = OutputRenderer.render(document: records[0], format: .table, style: style)
            #expect(!TerminalText.containsControl(view.replacingOccurrences(of: "\n", with: "")))
        }
        // CSV to a terminal is made visible too; to a file it stays exact.
        let toTerminal = OutputRenderer.render(
            records: records, format: .csv, style: OutputStyle(csvEscapesControls: true))
        #expect(!TerminalText.containsControl(toTerminal.replacingOccurrences(of: "\n", with: "")))
        let toFile = OutputRenderer.render(records: records, format: .csv)
        #expect(toFile.contains(hostile))
        // JSON on a terminal: C1 and bidi as \u escapes, still the same JSON.
        let json = TerminalText.jsonEscaped(JSONValue.object([("a", .string(hostile))]).serialized())
        #expect(!TerminalText.containsControl(json))
        #expect((try? JSONText.parse(json)) == .object([("a", .string(hostile))]))
    }

    /// The last line of defence on a terminal sink: only newline, tab, CR and iapctl's own
    /// bold/reset/erase sequences pass; every other control character is shown escaped.
    @Test func terminalSinksLetNoForeignControlThrough() {
        let text = "a\u{9B}2Jb\u{1B}[1mBOLD\u{1B}[0m\u{1B}]52;c;aGk=\u{07}\u{202E}x\r\u{1B}[Kn\tm\n"
        let safe = TerminalText.terminalSafe(text)
        #expect(safe == "a\\u{9b}2Jb\u{1B}[1mBOLD\u{1B}[0m\\u{1b}]52;c;aGk=\\u{7}\\u{202e}x\r\u{1B}[Kn\tm\n", "\(safe)")
        #expect(TerminalText.terminalSafe("plain") == "plain")
    }

    @Test func csvNeutralisesFormulasUnlessRaw() {
        let records: [Record] = [
            [
                "a": .string("=HYPERLINK(\"http://x\")"), "b": .string("+1"), "c": .string("-2+3"),
                "d": .string("@SUM(A1)"), "e": .string("\tx"), "f": .string("\rx"), "g": .int(-5),
                "h": .string("plain"), "i": .double(-1.5),
            ]
        ]
        let text = OutputRenderer.render(records: records, format: .csv)
        let row = text.split(separator: "\n")[1]
        #expect(row.hasPrefix("\"'=HYPERLINK(\"\"http://x\"\")\",'+1,'-2+3,'@SUM(A1),'\tx,\"'\rx\",-5,plain,-1.5"), "\(row)")
        let raw = OutputRenderer.render(records: records, format: .csv, style: OutputStyle(csvRaw: true))
        #expect(raw.split(separator: "\n")[1].hasPrefix("\"=HYPERLINK"))
        // The same in detail views, and from the command line.
        let detail = DetailView(sections: [.init(key: "s", title: "S", content: .fields(records[0]))])
        #expect(OutputRenderer.render(detail: detail, format: .csv).contains("s,,a,\"'=HYPERLINK"))
    }
}
