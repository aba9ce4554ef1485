import Testing

@testable import IAPFoundation

/// The byte-level pieces both JSON readers share (`JSONParser`, SubscriptionModel's fact-body
/// reader): what each reads, and what it refuses with which failure where.
@Suite("JSON bytes: strings, numbers, literals")
struct JSONBytesTests {
    func reading<T>(_ text: String, _ read: (inout JSONBytes) throws(JSONBytes.Failure) -> T) -> Result<T, JSONBytes.Failure> {
        Array(text.utf8).withUnsafeBufferPointer { buffer in
            var json = JSONBytes(buffer)
            do throws(JSONBytes.Failure) {
                return .success(try read(&json))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func stringsWithAndWithoutEscapes() throws {
        #expect(try reading(#""plain é""#) { (j) throws(JSONBytes.Failure) in try j.string() }.get() == "plain é")
        #expect(
            try reading(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00z""#) { (j) throws(JSONBytes.Failure) in try j.string() }.get()
                == "a\"\\/\u{8}\u{c}\n\r\té😀z")
    }

    @Test(arguments: [
        (#""abc"#, JSONBytes.Failure.Kind.unterminatedString, 0),
        ("\"a\u{1}\"", .controlCharacter, 2),
        (#""a\"#, .unterminatedEscape, 3),
        (#""a\x""#, .invalidEscape, 2),
        (#""a\ud83d""#, .unpairedSurrogate, 2),
        (#""a\ude00""#, .unpairedSurrogate, 2),
        (#""a\ud83d\u0041""#, .unpairedSurrogate, 2),
        (#""a\u12""#, .truncatedHexEscape, 4),
        (#""a\u12g4""#, .invalidHexEscape, 6),
    ])
    func stringFailures(_ text: String, _ kind: JSONBytes.Failure.Kind, _ offset: Int) {
        let result = reading(text) { (j) throws(JSONBytes.Failure) in try j.string() }
        #expect(throws: JSONBytes.Failure(kind, at: offset), "\(text)") { try result.get() }
    }

    @Test func invalidUTF8() {
        for (bytes, kind, offset) in [
            ([0x22, 0xFF, 0x22], JSONBytes.Failure.Kind.invalidUTF8, 1), ([0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, 1),
            ([0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, 2), ([0x22, 0x61, 0xE2, 0x82], .truncatedUTF8, 2),
        ] as [([UInt8], JSONBytes.Failure.Kind, Int)] {
            let result: Result<String, JSONBytes.Failure> = bytes.withUnsafeBufferPointer { buffer in
                var json = JSONBytes(buffer)
                do throws(JSONBytes.Failure) { return .success(try json.string()) } catch { return .failure(error) }
            }
            #expect(throws: JSONBytes.Failure(kind, at: offset), "\(bytes)") { try result.get() }
        }
    }

    @Test func numbersGiveAnIntegersValueWhenItFits() throws {
        func number(_ text: String) throws -> JSONBytes.Number {
            try reading(text) { (j) throws(JSONBytes.Failure) in try j.number() }.get()
        }
        #expect(try number("9223372036854775807").int64 == Int64.max)
        #expect(try number("-9223372036854775808").int64 == Int64.min)
        let above = try number("9223372036854775808")
        #expect(above.isInteger && above.int64 == nil)
        let negativeZero = try number("-0")
        #expect(negativeZero.int64 == 0 && negativeZero.isNegative)
        for text in ["2.0", "1e3", "1E+3", "-0.5e-2"] {
            let value = try number(text)
            #expect(!value.isInteger && value.int64 == nil && value.range == 0..<text.utf8.count, "\(text)")
        }
        let cases: [(String, JSONBytes.Failure.Kind, Int)] = [
            ("-", .numberWithoutDigit, 1), ("-x", .numberWithoutDigit, 1), ("007", .leadingZero, 1),
            ("1.", .fractionWithoutDigit, 2), ("1.e3", .fractionWithoutDigit, 2), ("1e", .exponentWithoutDigit, 2),
            ("1e+", .exponentWithoutDigit, 3),
        ]
        for (text, kind, offset) in cases {
            let result = reading(text) { (j) throws(JSONBytes.Failure) in try j.number() }
            #expect(throws: JSONBytes.Failure(kind, at: offset), "\(text)") { try result.get() }
        }
    }

    @Test func literalsAndWhereTheyStopMatching() throws {
        #expect(
            try reading(" \t\n\rnull") { (j) throws(JSONBytes.Failure) in
                j.skipWhitespace()
                return j.take(literal: "null") && j.atEnd
            }.get())
        #expect(try reading("nul") { (j) throws(JSONBytes.Failure) in !j.take(literal: "null") && j.mismatch(of: "null") == 0 }.get())
        #expect(try reading("trxe") { (j) throws(JSONBytes.Failure) in !j.take(literal: "true") && j.mismatch(of: "true") == 2 }.get())
    }
}
