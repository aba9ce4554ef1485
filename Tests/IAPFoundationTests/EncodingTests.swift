import Testing

@testable import IAPFoundation

@Suite("Base64 and ISO-8601 helpers")
struct EncodingTests {
    @Test func base64URLStrict() {
        #expect(Base64.decodeURL(Array("eyJhIjoxfQ".utf8)) == Array(#"{"a":1}"#.utf8))
        #expect(Base64.decodeURL(Array("-_8".utf8)) == [0xFB, 0xFF])
        #expect(Base64.decodeURL(Array("".utf8)) == [])
        #expect(Base64.decodeURL(Array("a".utf8)) == nil)  // impossible length
        #expect(Base64.decodeURL(Array("eyJhIjoxfQ==".utf8)) == nil)  // padding refused
        #expect(Base64.decodeURL(Array("+/8".utf8)) == nil)  // standard alphabet refused
        #expect(Base64.decodeURL(Array("ab c".utf8)) == nil)  // whitespace refused
        #expect(Base64.decodeURL(Array("AB".utf8)) == nil)  // non-zero trailing bits
        #expect(Base64.decodeURL(Array("AA".utf8)) == [0])
    }

    @Test func base64StandardStrict() {
        #expect(Base64.decodeStandard("+/8=") == [0xFB, 0xFF])
        #expect(Base64.decodeStandard("AA==") == [0])
        #expect(Base64.decodeStandard("AA") == nil)  // padding required
        #expect(Base64.decodeStandard("-_8=") == nil)  // url alphabet refused
        #expect(Base64.decodeStandard("A===") == nil)
        #expect(Base64.decodeStandard("AA=A") == nil)
        #expect(Base64.decodeStandard("AB==") == nil)
    }

    @Test func base64RoundTrip() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decodeURL(Array(Base64.encodeURL(bytes).utf8)) == bytes)
            #expect(Base64.decodeStandard(Base64.encodeStandard(bytes)) == bytes)
        }
    }

    @Test func isoFormatting() {
        #expect(Timestamp.iso8601Millis(1757035472686) == "2025-09-05T01:24:32.686Z")
        #expect(Timestamp.iso8601Millis(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601Millis(-1) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.iso8601Millis(951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp.iso8601(1757035472686) == "2025-09-05T01:24:32Z")
    }

    @Test func isoParsing() {
        #expect(Timestamp.parseISO8601("2025-09-05T01:24:32.686Z") == 1757035472686)
        #expect(Timestamp.parseISO8601("2025-09-05T01:24:32Z") == 1757035472000)
        #expect(Timestamp.parseISO8601("2025-09-05T03:24:32.6+02:00") == 1757035472600)
        #expect(Timestamp.parseISO8601("2025-09-04T20:24:32.68655-0500") == 1757035472686)
        #expect(Timestamp.parseISO8601("2025-09-05") == 1757030400000)
        #expect(Timestamp.parseISO8601("2025-09-05T01:24") == 1757035440000)
        #expect(Timestamp.parseISO8601("2024-02-29T00:00:00Z") != nil)
        for bad in [
            "2023-02-29", "2025-13-01", "2025-09-05T24:00:00Z", "2025-09-05T01:24:32+", "yesterday", "2025-9-5",
            "2025-09-05T01:24:32.Z", "2025-09-05T01:24:32Zjunk", "",
        ] {
            #expect(Timestamp.parseISO8601(bad) == nil, "\(bad)")
        }
        for value: Int64 in [0, 1, 999, 1757035472686, 4_102_444_800_000, -86_400_001] {
            #expect(Timestamp.parseISO8601(Timestamp.iso8601Millis(value)) == value)
        }
    }
}
