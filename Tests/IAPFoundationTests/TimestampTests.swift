import Testing

@testable import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Timestamp: the clock, ISO-8601 output, the time-option grammar")
struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (1_757_035_472_000, "2025-09-05T01:24:32Z"),
        (1_757_035_472_999, "2025-09-05T01:24:32Z"),
        (951_782_400_000, "2000-02-29T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
    ])
    func commandLineFormatting(ms: Int64, text: String) {
        #expect(Timestamp.iso8601(ms) == text)
    }

    @Test func commandLineParsingNeedsAZone() {
        #expect(Timestamp.parseISO8601("2025-09-05T01:24:32Z", zoneRequired: true) == 1_757_035_472_000)
        #expect(Timestamp.parseISO8601("2025-09-05T09:24:32+08:00", zoneRequired: true) == 1_757_035_472_000)
        #expect(Timestamp.parseISO8601("2025-09-05T01:24:32.5Z", zoneRequired: true) == 1_757_035_472_500)
        #expect(Timestamp.parseISO8601("2025-09-05", zoneRequired: true) == 1_757_030_400_000)
        #expect(Timestamp.parseISO8601("2025-02-29", zoneRequired: true) == nil)
        #expect(Timestamp.parseISO8601("2025-09-05T01:24:32", zoneRequired: true) == nil)
        #expect(Timestamp.parseISO8601("yesterday", zoneRequired: true) == nil)
        for ms: Int64 in [0, 86_399_000, 4_102_444_800_000, -86_400_000] {
            #expect(Timestamp.parseISO8601(Timestamp.iso8601(ms), zoneRequired: true) == ms)
        }
    }

    /// The exact formatter writes what the platform's `ISO8601FormatStyle` writes from the Gregorian
    /// reform on (1582-10-15) to 9999; before it the platform counts in the Julian calendar, while
    /// ISO-8601 and Apple count proleptic Gregorian days.
    @Test func matchesThePlatformFormatStyle() {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        let first: Int64 = -12_219_292_800_000  // 1582-10-15T00:00:00Z
        let last: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z
        for _ in 0..<2000 {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            let ms = first + Int64(x % UInt64(last - first + 1))
            let platform = Date(timeIntervalSince1970: Double(ms) / 1000).formatted(Date.ISO8601FormatStyle())
            #expect(Timestamp.iso8601(ms) == platform, "\(ms)")
        }
        // The day before the reform: proleptic Gregorian here, Julian (10 days apart) there.
        #expect(Timestamp.iso8601(-12_219_292_800_001) == "1582-10-14T23:59:59Z")
    }

    /// Every example the help text gives is accepted by the grammar it describes.
    @Test func theHelpTextsExamplesParse() {
        let text = Timestamp.inputFormsInFull
        for example in ["2025-06-01T12:00:00Z", "2025-06-01T20:00:00+08:00", "2025-06-01", "now", "90m", "36h", "7d", "2w"] {
            #expect(text.contains(example))
            #expect(Timestamp.parse(example, now: 1_757_035_472_686) != nil, "\(example)")
        }
        #expect(Timestamp.parse("2025-06-01T20:00:00+08:00", now: 0) == Timestamp.parse("2025-06-01T12:00:00Z", now: 0))
    }

    @Test func oneGrammarForEveryTimeOption() {
        let now: Int64 = 1_757_035_472_686
        #expect(Timestamp.parse("now", now: now) == now)
        #expect(Timestamp.parse(" NOW\t", now: now) == now)
        #expect(Timestamp.parse("2025-09-05T01:24:32Z", now: now) == 1_757_035_472_000)
        #expect(Timestamp.parse("2025-09-05", now: now) == 1_757_030_400_000)
        #expect(Timestamp.parse("1757035472000", now: now) == 1_757_035_472_000)
        #expect(Timestamp.parse("90m", now: now) == now - 90 * 60_000)
        #expect(Timestamp.parse("36h", now: now) == now - 36 * 3_600_000)
        #expect(Timestamp.parse("7d", now: now) == now - 7 * 86_400_000)
        #expect(Timestamp.parse("2w", now: now) == now - 14 * 86_400_000)
        for bad in [
            "", "yesterday", "36", "175703547", "2025-09-05T01:24:32", "-3d", "3y", "9223372036854775807d",
            "2025-02-29",
        ] {
            #expect(Timestamp.parse(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test func theClockIsInMillisecondsNow() {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let now = Timestamp.now()
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(now >= before - 1 && now <= after + 1)
    }
}

@Suite("Trimming")
struct TrimTests {
    @Test func sets() {
        #expect(" \t a b \t".trimmed(.spacesAndTabs) == "a b")
        #expect("\r\n x\n".trimmed(.spacesAndTabs) == "\r\n x\n")
        #expect("\r\n x\r\n".trimmed(.spacesAndNewlines) == "x")
        #expect(" x \r".trimmed(.spacesAndNewlines, leading: false) == " x")
        #expect("\u{2003}x\u{2003}".trimmed(.whitespace, trailing: false) == "x\u{2003}")
        #expect("   ".trimmed(.spacesAndTabs) == "")
    }
}
