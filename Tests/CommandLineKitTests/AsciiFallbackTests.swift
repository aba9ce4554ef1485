import Testing

@testable import CommandLineKit

/// Which locales make iapctl write plain ASCII symbols: the first of LC_ALL, LC_CTYPE and LANG that
/// is set and not empty decides, and only a locale naming UTF-8 (either spelling, any case) keeps them.
@Suite("ASCII fallback: the locale decides")
struct AsciiFallbackTests {
    @Test(arguments: ["en_US.UTF-8", "C.utf8", "de_DE.utf-8@euro", "C.UTF8", "utf8", "UTF-8"])
    func aUTF8LocaleKeepsTheSymbols(locale: String) {
        #expect(!AsciiFallback.isNeeded(["LANG": locale]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": locale, "LANG": "C"]))
    }

    @Test(arguments: ["C", "POSIX", "en_US.ISO-8859-1", "en_US", "utf", "utf-", "tf-8", "ut f8", "u", "utf_8"])
    func anyOtherLocaleAsksForASCII(locale: String) {
        #expect(AsciiFallback.isNeeded(["LANG": locale]))
        #expect(AsciiFallback.isNeeded(["LC_CTYPE": locale, "LANG": "en_US.UTF-8"]))
    }

    @Test func theFirstSetVariableDecidesAndEmptyOnesAreSkipped() {
        #expect(!AsciiFallback.isNeeded([:]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": "", "LC_CTYPE": "", "LANG": ""]))
        #expect(AsciiFallback.isNeeded(["LC_ALL": "", "LC_CTYPE": "C", "LANG": "en_US.UTF-8"]))
        #expect(!AsciiFallback.isNeeded(["LC_ALL": "C.UTF-8", "LC_CTYPE": "C", "LANG": "C"]))
        #expect(!AsciiFallback.isNeeded(["LANGUAGE": "C", "LANG": "en_US.UTF-8"]))
    }
}

/// Under `LC_ALL=C` a table is laid out in the ASCII it is written in: a cut ends in `...`, and `→` as
/// `->` or `∅` as `(none)` never pushes a column out of line.
@Suite("ASCII fallback: tables stay aligned")
struct AsciiTableTests {
    @Test func theEllipsisIsThreeDots() {
        #expect(AsciiFallback.apply("waiting for Apple…") == "waiting for Apple...")
        #expect(TextWidth.truncate("abcdefgh", to: 6, ellipsis: "...") == "abc...")
        #expect(TextWidth.truncate("abcdefgh", to: 8, ellipsis: "...") == "abcdefgh")
        #expect(TextWidth.truncate("漢字漢字", to: 6, ellipsis: "...") == "漢...")
        #expect(TextWidth.shorten("com.example.pro.monthly", to: 14, sharedPrefix: 0, ellipsis: "...") == "...pro.monthly")
    }

    @Test func cutsAndArrowsKeepTheColumnsAligned() {
        let columns = [
            Column("no", title: "NO"), Column("change", title: "CHANGE", important: true),
            Column("status", title: "STATUS", important: true),
        ]
        let records: [Record] = [
            ["no": .string("7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"), "change": .string("∅ → paid"), "status": .string("paid")],
            ["no": .string("96cb4091-7e14-4ced-96cd-7853cfdd91b6"), "change": .string("paid → refunded"), "status": .string("refunded")],
        ]
        let lines = OutputRenderer.render(
            records: records, columns: columns, format: .table, style: OutputStyle(width: 50, ascii: true)
        ).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } && $0.count <= 50 }, "\(lines)")
        #expect(lines[1].contains("(none) -> paid") && lines[2].contains("paid -> refunded"), "\(lines)")
        #expect(lines[1].contains("..."), "the order number is cut with three dots: \(lines)")
        let status = lines[0].distance(from: lines[0].startIndex, to: lines[0].range(of: "STATUS")!.lowerBound)
        #expect(lines[1].dropFirst(status).hasPrefix("paid") && lines[2].dropFirst(status).hasPrefix("refunded"), "\(lines)")
    }
}
