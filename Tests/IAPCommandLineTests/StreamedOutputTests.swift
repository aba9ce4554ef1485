import AppStoreJWS
import Testing

@testable import CommandLineKit
@testable import IAPCommandLine

/// Batch output kept for the end (`RowSpool`, `TableLayout`) gives the same bytes as rendering
/// every record at once, also when the rows have moved to the temporary file.
@Suite("Streamed output")
struct StreamedOutputTests {
    @Test func spoolGivesBackEveryRowAfterSpilling() {
        let rows: [[String]] =
            (0..<500).map { index in
                ["\(index)", "", "漢字 e\u{301} → \(index)", String(repeating: "x", count: index % 37), "a\u{0}b\nc"]
            } + [[]]
        let spool = RowSpool(memoryLimit: 256)  // spills after a few rows: the file and memory both used
        for row in rows { spool.append(row) }
        var back: [[String]] = []
        spool.forEach { back.append($0) }
        #expect(spool.count == rows.count)
        #expect(back == rows)
    }

    @Test func asciiWidthsMatchTheGraphemeRule() {
        for value in UInt8(0x20)..<UInt8(0x7F) {
            let character = Character(Unicode.Scalar(value))
            #expect(TextWidth.of(String(character)) == TextWidth.width(of: character))
        }
        #expect(TextWidth.of("") == 0)
        #expect(TextWidth.of("a\tb") == 2)  // a control is not the ASCII path: width 0 as before
        #expect(TextWidth.truncate("abcdef", to: 4) == "abc…")
        #expect(TextWidth.truncate("abcdef", to: 6) == "abcdef")
        #expect(TextWidth.truncate("abcdef", to: 0) == "")
        #expect(TextWidth.truncate("漢字漢字", to: 5) == "漢字…")
    }

    @Test func layoutRowByRowEqualsTheRenderer() {
        let records: [Record] = [
            ["n": .int(1), "who": .string("ab"), "note": .string("first → second")],
            ["n": .int(1234), "who": .null, "note": .string("x")],
            ["n": .null, "who": .string("漢字漢字"), "note": .int(7)],
        ]
        let columns: [Column] = ["n", "who", "note"]
        for style in [OutputStyle(), OutputStyle(width: 20), OutputStyle(color: true, width: 12)] {
            var layout = TableLayout(columns: columns, style: style)
            let spool = RowSpool(memoryLimit: 16)
            for record in records { spool.append(layout.add(record)) }
            let plan = layout.plan()
            var text = plan.header + "\n"
            spool.forEach { text += plan.line($0) + "\n" }
            #expect(text == OutputRenderer.render(records: records, columns: columns, format: .table, style: style))
        }
        // The last column right-aligned (numbers only) is measured and padded off a terminal too.
        let numbers: [Record] = [["a": .string("x"), "b": .int(5)], ["a": .string("y"), "b": .int(12345)]]
        #expect(OutputRenderer.render(records: numbers, format: .table) == "A      B\nx      5\ny  12345\n")
    }

    /// Ledger rows written by earlier builds say `auto_renew 1 → 0`; they are shown as the engine
    /// writes such changes now.
    @Test func storedDetailsShowAutoRenewAsTrueOrFalse() {
        let cases: [(String, String)] = [
            (
                "contract 1 updated: auto_renew 1 → 0, status active → expired; contract 2 created: auto_renew ∅ → 1",
                "contract 1 updated: auto_renew true → false, status active → expired; contract 2 created: auto_renew ∅ → true"
            ),
            ("auto_renew 0 → 1", "auto_renew false → true"), ("auto_renew ∅ → 0;", "auto_renew ∅ → false;"),
            ("no change", "no change"), ("", ""), ("auto_renew 2 → 0", "auto_renew 2 → 0"),
            ("price 1 → 0", "price 1 → 0"), ("auto_renew true → false", "auto_renew true → false"),
        ]
        for (stored, shown) in cases {
            #expect(RowRendering.storedDetail(stored) == shown, "\(stored)")
        }
    }
}
