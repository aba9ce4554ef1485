import IAPFoundation
import Testing

@testable import CommandLineKit

/// Notes and messages wrapped for a terminal: between words, under their text, a command in them
/// never broken except with ` \`; folding cells (EVENT) broken after their `/`, never cut.
@Suite("Notes wrap with their commands whole")
struct NoteWrapTests {
    static func words(_ lines: [String]) -> [String] {
        lines.joined(separator: " ").split(separator: " ").map(String.init).filter { $0 != "\\" }
    }

    @Test func commandSpansAreOneUnit() {
        let units = TextWrap.units("run `iapctl notify --replay-unmatched` now; or try: iapctl db init --db x.db, then go")
        #expect(units.contains(.init(text: "`iapctl notify --replay-unmatched`", isCommand: true)), "\(units)")
        #expect(units.contains(.init(text: "iapctl db init --db x.db,", isCommand: true)), "\(units)")
        #expect(units.last == .init(text: "go", isCommand: false), "\(units)")
        // An option keeps its value; a quoted command ends at its closing quote.
        #expect(TextWrap.units("add --request-id 7f3a to send").contains(.init(text: "--request-id 7f3a", isCommand: false)))
        let quoted = TextWrap.units("see 'iapctl help apple' for the steps")
        #expect(quoted.contains(.init(text: "'iapctl help apple'", isCommand: true)), "\(quoted)")
        #expect(quoted.last?.text == "steps")
    }

    @Test func aCommandMovesToTheNextLineWhole() {
        let text =
            "doctor: information, not a finding: contract 2000000900000001 status active by hand; to go back to the facts: "
            + "iapctl contracts update 2000000900000001 --clear-override status --reason 'back to the facts'"
        for width in [60, 80, 120] {
            let lines = TextWrap.hanging(text, prefix: "", width: width, hang: 2)
            #expect(lines.allSatisfy { TextWidth.of($0) <= width }, "\(width): \(lines)")
            #expect(Self.words(lines) == Self.words([text]), "\(width): \(lines)")
            #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") }, "\(lines)")
            // The command starts a line and any break inside it ends with ` \`.
            let start = lines.firstIndex { $0.contains("iapctl") }!
            #expect(lines[start].trimmingCharacters(in: .whitespaces).hasPrefix("iapctl") || start == 0, "\(lines)")
            #expect(lines[start...].dropLast().allSatisfy { $0.hasSuffix(" \\") }, "\(width): \(lines)")
            #expect(!lines.contains { $0.hasSuffix("'back") }, "\(lines)")
        }
        // Off a terminal: one line, as given.
        #expect(TextWrap.hanging(text, prefix: "", width: nil, hang: 2) == [text])
    }

    @Test func plainWordsAreNeverSplit() {
        let text = "no checkpoint default yet: reading the last 1 day (--since to choose) of the notification history"
        let lines = TextWrap.hanging(text, prefix: "warning: ", width: 40)
        #expect(lines.allSatisfy { TextWidth.of($0) <= 40 }, "\(lines)")
        #expect(Self.words(lines) == Self.words(["warning: " + text]), "\(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(String(repeating: " ", count: 9)) }, "\(lines)")
    }

    @Test func eventsFoldAfterTheirSlashBeforeDetailTakesTheRoom() {
        let columns: [Column] = [
            Column("signed", title: "SIGNED"), Column("event", title: "EVENT", important: true, folds: true),
            Column("verdict", title: "VERDICT", important: true),
            Column("transaction", title: "TRANSACTION", important: true),
            Column("detail", title: "DETAIL", maxWidth: 80, wraps: true),
        ]
        let records: [Record] = [
            [
                "signed": .string("2026-01-01T10:00:00Z"), "event": .string("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"),
                "verdict": .string("applied"), "transaction": .string("2000000900000001"),
                "detail": .string("contract 2000000900000001 updated: auto renew on → off"),
            ],
            [
                "signed": .string("2026-01-01T09:00:00Z"), "event": .string("SUBSCRIBED/INITIAL_BUY"),
                "verdict": .string("applied"), "transaction": .string("2000000900000001"), "detail": .string("created"),
            ],
        ]
        for width in [80, 120] {
            let lines = OutputRenderer.render(
                records: records, columns: columns, format: .table, style: OutputStyle(width: width)
            ).split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { TextWidth.of($0) <= width }, "\(width): \(lines)")
            #expect(!lines.contains { $0.contains("…") }, "\(width): \(lines)")
            #expect(lines.contains { $0.contains("SUBSCRIBED/INITIAL_BUY") }, "\(width): \(lines)")
            let text = Self.words(lines).joined(separator: " ")
            #expect(text.contains("auto renew on → off"), "\(width): \(lines)")
            if width == 120 {
                #expect(lines.contains { $0.contains("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED") }, "\(lines)")
            } else {
                // Folded in its column: the second part right under the first.
                let first = lines.firstIndex { $0.contains("DID_CHANGE_RENEWAL_STATUS/") }!
                let column = lines[first].distance(
                    from: lines[first].startIndex, to: lines[first].range(of: "DID_CHANGE_RENEWAL_STATUS/")!.lowerBound)
                #expect(lines[first + 1].dropFirst(column).hasPrefix("AUTO_RENEW_DISABLED"), "\(lines)")
            }
        }
    }
}
