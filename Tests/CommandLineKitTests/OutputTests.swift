import IAPFoundation
import Testing

@testable import CommandLineKit

@Suite("Output renderers")
struct OutputTests {
    let records: [Record] = [
        ["no": .string("a1"), "user_id": .string("u1"), "amount": .int(5), "created_at": .int(1_757_035_472_000)],
        ["no": .string("b22222"), "user_id": .null, "amount": .int(1234), "created_at": .int(0)],
    ]

    @Test func tableIsAligned() {
        let text = OutputRenderer.render(records: records, format: .table)
        #expect(
            text == """
                NO      USER_ID  AMOUNT  CREATED_AT
                a1      u1            5  2025-09-05T01:24:32Z
                b22222  -          1234  1970-01-01T00:00:00Z

                """)
    }

    // A `maxWidth` does not cut output that is not a terminal; on a terminal, free text is cut to
    // fit its width.
    @Test func tableHonoursColumnsTitlesAndWidths() {
        let records: [Record] = [["note": .string("a very long note indeed"), "who": .string("漢字漢字")]]
        let columns = [Column("who", title: "Who"), Column("note", maxWidth: 8)]
        let text = OutputRenderer.render(
            records: records, columns: columns, format: .table, style: OutputStyle(width: 18))
        #expect(text == "Who       NOTE\n漢字漢字  a very …\n")
        let whole = OutputRenderer.render(records: records, columns: columns, format: .table)
        #expect(whole == "Who       NOTE\n漢字漢字  a very long note indeed\n")
        #expect(TextWidth.of("漢字") == 4)
        #expect(TextWidth.of("e\u{301}") == 1)
    }

    @Test func tableKeepsRowsOnOneLine() {
        let text = OutputRenderer.render(records: [["x": .string("a\nb")]], format: .table)
        #expect(text == "X\na\\nb\n")
    }

    @Test func colourOnlyWhenAsked() {
        #expect(!OutputRenderer.render(records: records, format: .table).contains("\u{1B}"))
        #expect(OutputRenderer.render(records: records, format: .table, style: OutputStyle(color: true)).contains("\u{1B}[1m"))
    }

    @Test func csvQuoting() {
        let text = OutputRenderer.render(
            records: [["a": .string("x,y"), "b": .string("say \"hi\""), "c": .string("two\nlines"), "d": .null]],
            format: .csv)
        #expect(text == "a,b,c,d\n\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",\n")
    }

    @Test func csvDatesAndHeaderOnlyWhenEmpty() {
        let text = OutputRenderer.render(records: records, columns: ["no", "created_at"], format: .csv)
        #expect(text == "no,created_at\na1,2025-09-05T01:24:32Z\nb22222,1970-01-01T00:00:00Z\n")
        #expect(OutputRenderer.render(records: [], columns: ["no"], format: .csv) == "no\n")
    }

    @Test func ndjsonOneObjectPerLineWithBothDateForms() {
        let text = OutputRenderer.render(records: records, format: .ndjson)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines[0]
                == #"{"no":"a1","user_id":"u1","amount":5,"created_at":"2025-09-05T01:24:32Z","created_at_ms":1757035472000}"#
        )
        #expect(OutputRenderer.render(records: [], format: .ndjson) == "")
    }

    @Test func jsonIsOneDocument() throws {
        let text = OutputRenderer.render(records: records, format: .json)
        let parsed = try JSONText.parse(text)
        #expect(parsed.arrayValue?.count == 2)
        #expect(parsed.arrayValue?[1]["user_id"] == .null)
        #expect(OutputRenderer.render(records: [], format: .json) == "[]\n")
        let single = try JSONText.parse(OutputRenderer.render(document: records[0], format: .json))
        #expect(single["no"] == .string("a1"))
        #expect(single["created_at_ms"] == .int(1_757_035_472_000))
    }

    @Test func detailView() throws {
        let detail = DetailView(sections: [
            .init(key: "order", title: "Order", content: .fields(["no": .string("a1"), "status": .string("paid")])),
            .init(key: "history", title: "History", content: .table([["event": .string("SUBSCRIBED")]], columns: nil)),
            .init(key: "corrections", title: "Corrections", content: .table([], columns: nil)),
        ])
        #expect(
            OutputRenderer.render(detail: detail, format: .table)
                == "Order\n  no      a1\n  status  paid\n\nHistory\n  EVENT\n  SUBSCRIBED\n\nCorrections\n  (none)\n")
        let json = try JSONText.parse(OutputRenderer.render(detail: detail, format: .json))
        #expect(json["order"]?["status"] == .string("paid"))
        #expect(json["history"]?.arrayValue?.count == 1)
        #expect(json["corrections"] == .array([]))
        #expect(
            OutputRenderer.render(detail: detail, format: .csv)
                == "section,item,field,value\norder,,no,a1\norder,,status,paid\nhistory,1,event,SUBSCRIBED\n")
    }

    @Test func recordBuilding() {
        var record = Record()
        record.append("no", "x")
        record.append("count", 3 as Int?)
        record.append("expires_date", nil as Int64?)
        record.append("auto_renew", true)
        record["no"] = .string("y")
        #expect(record.keys == ["no", "count", "expires_date", "auto_renew"])
        #expect(
            record.jsonObject().serialized()
                == #"{"no":"y","count":3,"expires_date":null,"expires_date_ms":null,"auto_renew":true}"#)
    }
}
