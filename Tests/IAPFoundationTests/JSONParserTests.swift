import Testing

@testable import IAPFoundation

@Suite("Strict JSON parser")
struct JSONParserTests {
    @Test func parsesAllTypesAndKeepsKeyOrder() throws {
        let value = try JSONParser.parse(#" {"z":1,"a":[true,false,null,-0.5,"x\u00e9\n"],"m":{"k":1.0e2}} "#)
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["z", "a", "m"])
        #expect(value["z"] == .int(1))
        #expect(value["a"] == .array([.bool(true), .bool(false), .null, .double(-0.5), .string("xé\n")]))
        #expect(value["m"]?["k"] == .double(100))
    }

    @Test func integersInRangeAreInt64OthersDouble() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .int(Int64.min))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9223372036854775808))
        #expect(try JSONParser.parse("1697679936049.7297") == .double(1697679936049.7297))
        #expect(try JSONParser.parse("1757035472686") == .int(1757035472686))
    }

    @Test func surrogatePairEscapes() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(throws: JSONError.self) { try JSONParser.parse(#""\ud83d""#) }
        #expect(throws: JSONError.self) { try JSONParser.parse(#""\ude00x""#) }
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity", "tru", "nul",
        "{'a':1}", "{\"a\" 1}", "[1 2]", "\"unterminated", "\"tab\there\"", "// c\n1", "1 2", "\"\\x\"", "1e999",
    ])
    func refusesInvalidText(_ text: String) {
        #expect(throws: JSONError.self) { try JSONParser.parse(text) }
    }

    @Test func refusesDuplicateKeysWithPosition() {
        do {
            _ = try JSONParser.parse(#"{"a":1,"b":2,"a":3}"#)
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.reason.contains("duplicate object key \"a\""))
            #expect(error.offset == 13)
        }
        // Past the small-object linear scan too.
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(throws: JSONError.self) { try JSONParser.parse("{\(many),\"k7\":0}") }
        #expect((try? JSONParser.parse("{\(many)}")) != nil)
    }

    @Test func refusesInvalidUTF8() throws {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22],  // invalid byte
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xE2, 0x82, 0x22],  // truncated
            [0xEF, 0xBB, 0xBF, 0x31],  // BOM
        ]
        for bytes in cases {
            #expect(throws: JSONError.self) { try JSONParser.parse(bytes) }
        }
        #expect(try JSONParser.parse([0x22, 0xE2, 0x82, 0xAC, 0x22]) == .string("€"))
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONParser.parse(ok)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError.self) { try JSONParser.parse(deep) }
    }

    @Test func sizeLimit() {
        let big = "\"" + String(repeating: "a", count: 100) + "\""
        #expect(throws: JSONError.self) { try JSONParser.parse(big, limits: .init(maxBytes: 50)) }
    }

    @Test func roundTripsThroughSerializer() throws {
        let text = #"{"b":[1,-2.5,"\"q\""],"a":{"c":null}}"#
        #expect(try JSONParser.parse(text).serialized() == text)
    }
}

/// The names messages give a JSON value's type ("found an array", "is JSON number").
@Suite("JSON type names")
struct JSONTypeNameTests {
    @Test func everyTypeHasItsNameAndArticle() throws {
        let cases: [(String, String, String)] = [
            ("null", "null", "null"), ("true", "boolean", "a boolean"), ("12", "number", "a number"),
            ("1.5", "number", "a number"), ("\"x\"", "string", "a string"), ("[1]", "array", "an array"),
            ("{\"a\":1}", "object", "an object"),
        ]
        for (text, name, withArticle) in cases {
            let value = try JSONParser.parse(text)
            #expect(value.typeName == name, "\(text)")
            #expect(value.typeNameWithArticle == withArticle, "\(text)")
        }
    }
}
