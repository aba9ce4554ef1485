import IAPFoundation
import Testing

@testable import CommandLineKit

/// Which columns a narrow terminal keeps, and how ids are shortened.
@Suite("Tables fitted to a terminal")
struct TableFitTests {
    static let columns: [Column] = [
        Column("no", title: "NO"), Column("user_id", title: "USER", owner: true),
        Column("product_id", title: "PRODUCT", important: true), Column("status", title: "STATUS", important: true),
        Column("trade_no", title: "TRADE_NO"), Column("origin_no", title: "ORIGIN_NO"),
        Column("expires_date", title: "EXPIRES", important: true), Column("updated_at", title: "UPDATED"),
    ]

    static func order(_ no: String, product: String, trade: String) -> Record {
        [
            "no": .string(no), "user_id": .string("alice"), "product_id": .string(product), "status": .string("paid"),
            "trade_no": .string(trade), "origin_no": .string("2000000900000001"),
            "expires_date": .int(1_757_035_472_000), "updated_at": .int(1_757_035_472_000),
        ]
    }

    static let records = [
        order("7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e", product: "com.example.iapctl.pro.monthly", trade: "2000000900000001"),
        order("96cb4091-7e14-4ced-96cd-7853cfdd91b6", product: "com.example.iapctl.basic.yearly", trade: "2000000900000011"),
    ]

    static func render(_ width: Int) -> [String] {
        OutputRenderer.render(records: records, columns: columns, format: .table, style: OutputStyle(width: width))
            .split(separator: "\n").map(String.init)
    }

    /// Rows of several users keep USER (whose row) at 80 columns: the order number gives way first,
    /// and the note after the last header costs only what it overhangs that column.
    @Test func severalUsersKeepTheirColumn() {
        var records = Self.records
        records[1]["user_id"] = .string("bob")
        let lines = OutputRenderer.render(
            records: records, columns: Self.columns, format: .table, style: OutputStyle(width: 80)
        ).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { TextWidth.of($0) <= 80 }, "\(lines)")
        for title in ["USER", "PRODUCT", "STATUS", "EXPIRES"] { #expect(lines[0].contains(title), "\(lines)") }
        #expect(lines[1].contains("alice") && lines[2].contains("bob"))
    }

    @Test func aFixedColumnGoesFirstAndExpiryStays() {
        for width in [80, 120] {
            let lines = Self.render(width)
            #expect(lines.allSatisfy { TextWidth.of($0) <= width }, "\(lines)")
            #expect(!lines[0].contains("USER"), "\(width): \(lines)")
            #expect(lines[0].contains("EXPIRES") && lines[0].contains("STATUS"), "\(width): \(lines)")
            #expect(lines[1].contains("2025-09-05T01:24:32Z"))
            // The product keeps the part that differs.
            #expect(lines[1].contains("pro.monthly") && lines[2].contains("basic.yearly"), "\(lines)")
            #expect(!lines[1].contains("com.example.…"))
        }
        // At 120 the order number is whole; at 80 it gives way, to no fewer than 16 columns.
        #expect(Self.render(120)[1].hasPrefix("7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"))
        let cut = Self.render(80)[1].prefix { $0 != " " }
        #expect(cut.count >= 16 && cut.hasSuffix("…") && cut.hasPrefix("7b1f0c1e"), "\(cut)")
    }

    @Test func idsAreNeverCutBelowSixteen() {
        let columns: [Column] = ["line", "verdict", "transaction", "contract", "owner", Column("detail", maxWidth: 40)]
        let records: [Record] = [
            [
                "line": .int(1), "verdict": .string("owned-by-other-user"), "transaction": .string("2000000900000001"),
                "contract": .string("2000000900000001"), "owner": .string("alice-with-a-long-name"),
                "detail": .string(String(repeating: "x ", count: 60)),
            ]
        ]
        let text = OutputRenderer.render(records: records, columns: columns, format: .table, style: OutputStyle(width: 60))
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) where word.hasSuffix("…") {
            #expect(word.count >= 16 || word.allSatisfy { $0 == "x" || $0 == "…" }, "\(text)")
        }
        #expect(text.contains("owned-by-other-user") || text.contains("owned-by-other-…"), "\(text)")
    }

    @Test func aWrappingColumnWrapsInsideItself() {
        let why = (1...40).map { "word\($0)" }.joined(separator: " ")
        let records: [Record] = [["step": .int(1), "state": .string("active → canceled"), "why": .string(why)]]
        let columns: [Column] = [
            Column("step", title: "#"), Column("state", title: "STATE", important: true),
            Column("why", title: "WHY", maxWidth: 110, important: true, wraps: true),
        ]
        let lines = OutputRenderer.render(records: records, columns: columns, format: .table, style: OutputStyle(width: 80))
            .split(separator: "\n").map(String.init)
        #expect(lines.count > 2 && lines.allSatisfy { TextWidth.of($0) <= 80 }, "\(lines)")
        let start = TextWidth.of(String(lines[0].prefix { $0 != "W" }))
        #expect(lines.dropFirst(2).allSatisfy { $0.prefix(start).allSatisfy { $0 == " " } })
        #expect(lines.joined(separator: " ").split(separator: " ").joined(separator: " ").contains(why))
        // --wide (no width, on a terminal): nothing cut, but WHY wraps at the terminal's edge.
        let wide = OutputRenderer.render(
            records: records, columns: columns, format: .table, style: OutputStyle(width: nil, wrapWidth: 80))
        #expect(wide.split(separator: "\n").allSatisfy { TextWidth.of(String($0)) <= 80 }, "\(wide)")
        // Off a terminal: one line.
        #expect(OutputRenderer.render(records: records, columns: columns, format: .table).contains(why))
    }

    /// A date in the first column is never cut, even when an important column would be left out.
    @Test func aFirstColumnDateIsNeverCut() {
        let columns: [Column] = [
            Column("signed_date", title: "SIGNED"), Column("event", title: "EVENT", important: true),
            Column("transaction_id", title: "TRANSACTION", important: true),
        ]
        let records: [Record] = [
            [
                "signed_date": .int(1_757_035_472_000), "event": .string("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"),
                "transaction_id": .string("2000000900000021"),
            ]
        ]
        let text = OutputRenderer.render(records: records, columns: columns, format: .table, style: OutputStyle(width: 40))
        #expect(text.contains("2025-09-05T01:24:32Z"), "\(text)")
    }
}
