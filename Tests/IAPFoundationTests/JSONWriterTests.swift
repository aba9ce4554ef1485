import Testing

@testable import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("The one JSON writer")
struct JSONWriterTests {
    static let hostile = "a/b \"q\" \\ \n\r\t\u{8}\u{C}\u{1}\u{1F} \u{2028}\u{2029} é😀"

    @Test func standardEscaping() {
        var w = JSONWriter()
        w.string(Self.hostile)
        #expect(
            w.text == #""a/b \"q\" \\ \n\r\t\b\f\u0001\u001f \u2028\u2029 é😀""#)
        #expect(JSONValue.string(Self.hostile).serialized() == w.text)
    }

    /// `.foundation` writes what `JSONEncoder` writes (the audit trail's stored JSON).
    @Test func foundationEscapingMatchesJSONEncoder() throws {
        struct Row: Encodable {
            var a: String
            var b: Int64?
            var c: Bool
            var d: String?
        }
        for text in [Self.hostile, "", "plain", "/", "\u{7F}"] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let expected = String(decoding: try encoder.encode(Row(a: text, b: -5, c: true, d: nil)), as: UTF8.self)
            var w = JSONObjectWriter(escaping: .foundation)
            w.add("a", text)
            w.addIfPresent("b", Int64(-5))
            w.add("c", true)
            w.addIfPresent("d", String?.none)
            #expect(w.json == expected, "\(text)")
        }
    }

    @Test func objectWriterKeepsOrder() {
        var w = JSONObjectWriter()
        w.add("z", "1")
        w.add("a", Int64(2))
        w.add("m", raw: "[null]")
        w.add("v", JSONValue.object([("k", .bool(false))]))
        #expect(w.json == #"{"z":"1","a":2,"m":[null],"v":{"k":false}}"#)
        #expect(JSONObjectWriter().json == "{}")
    }

    @Test func prettyAndCompact() throws {
        let value = try JSONParser.parse(#"{"a":[1,2.5,{}],"b":[],"c":{"d":null}}"#)
        #expect(value.serialized() == #"{"a":[1,2.5,{}],"b":[],"c":{"d":null}}"#)
        #expect(
            value.prettySerialized() == """
                {
                  "a": [
                    1,
                    2.5,
                    {}
                  ],
                  "b": [],
                  "c": {
                    "d": null
                  }
                }
                """)
        #expect(JSONValue.double(3).serialized() == "3")
        #expect(JSONValue.double(.infinity).serialized() == "null")
    }
}
