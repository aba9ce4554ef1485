#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Time as the whole program counts it: integer milliseconds since the Unix epoch (UTC), as Apple
/// and the store do. This is the one place that reads the wall clock, writes ISO-8601 text and
/// reads the time people type (every time option: `--at`, `--as-of`, `--since`, `--until`,
/// `--expires`).
///
/// Output keeps its own exact formatter rather than `Date.ISO8601FormatStyle`: they agree byte for
/// byte from 1582-10-15 to 9999 (a test checks this), but before the Gregorian reform the platform
/// counts Julian days while ISO-8601 and Apple count proleptic Gregorian ones, and a hostile
/// payload may carry any date; the exact formatter is also much faster on the per-row output path.
public enum Timestamp {
    /// The wall clock: milliseconds since the epoch, rounded toward the past.
    @Sendable public static func now() -> Int64 {
        var ts = timespec()
        guard clock_gettime(CLOCK_REALTIME, &ts) == 0 else { return 0 }
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// `2025-09-05T01:24:32.686Z` for milliseconds since the Unix epoch.
    public static func iso8601Millis(_ ms: Int64) -> String {
        let (seconds, millis) = floorDivMod(ms, 1000)
        return formatSeconds(seconds) + "." + pad(Int(millis), 3) + "Z"
    }

    /// `2025-09-05T01:24:32Z` for milliseconds since the Unix epoch (the sub-second part dropped,
    /// rounding toward the past).
    public static func iso8601(_ ms: Int64) -> String {
        formatSeconds(floorDivMod(ms, 1000).0, zulu: true)
    }

    /// `zulu`: with the `Z` after the seconds.
    private static func formatSeconds(_ seconds: Int64, zulu: Bool = false) -> String {
        let (days, secOfDay) = floorDivMod(seconds, 86_400)
        let (y, m, d) = civil(fromDays: days)
        let hh = Int(secOfDay / 3600), mm = Int(secOfDay / 60 % 60), ss = Int(secOfDay % 60)
        // Years 0…9999 (every real date) written digit by digit into one small buffer (this runs
        // for every date of every change summary); others through the general path.
        guard (0...9999).contains(y) else {
            let year = y < 0 ? "-" + pad(Int(-y), 4) : pad(Int(y), 4)
            return "\(year)-\(pad(m, 2))-\(pad(d, 2))T\(pad(hh, 2)):\(pad(mm, 2)):\(pad(ss, 2))" + (zulu ? "Z" : "")
        }
        return String(unsafeUninitializedCapacity: 20) { out in
            func two(_ value: Int, at index: Int) {
                out[index] = UInt8(truncatingIfNeeded: 0x30 + value / 10)
                out[index + 1] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
            }
            let year = Int(y)
            two(year / 100, at: 0)
            two(year % 100, at: 2)
            out[4] = UInt8(ascii: "-")
            two(m, at: 5)
            out[7] = UInt8(ascii: "-")
            two(d, at: 8)
            out[10] = UInt8(ascii: "T")
            two(hh, at: 11)
            out[13] = UInt8(ascii: ":")
            two(mm, at: 14)
            out[16] = UInt8(ascii: ":")
            two(ss, at: 17)
            guard zulu else { return 19 }
            out[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// The one grammar of every time option, in milliseconds since the epoch: ISO-8601 (a time of
    /// day must say its zone), integer milliseconds since 1970 (at least 10 digits, so a forgotten
    /// unit is not read as 1970), `now`, or a span back from `now` (`90m`, `36h`, `7d`, `2w`).
    /// Surrounding spaces and tabs are ignored; nil for anything else.
    public static func parse(_ text: String, now: Int64) -> Int64? {
        let trimmed = String(text.trimmed(.spacesAndTabs))
        if trimmed.lowercased() == "now" { return now }
        if let ms = Int64(trimmed), trimmed.count >= 10 { return ms }
        if let ms = parseISO8601(trimmed, zoneRequired: true) { return ms }
        if let unit = trimmed.last, let amount = Int64(trimmed.dropLast()), amount >= 0 {
            let scale: Int64? =
                switch unit {
                case "m": 60_000
                case "h": 3_600_000
                case "d": 86_400_000
                case "w": 7 * 86_400_000
                default: nil
                }
            if let scale {
                let (back, overflow) = amount.multipliedReportingOverflow(by: scale)
                return overflow ? nil : now - back
            }
        }
        return nil
    }

    /// What ``parse(_:now:)`` accepts, in full, for help text.
    public static let inputFormsInFull =
        "ISO-8601 with a zone (2025-06-01T12:00:00Z, 2025-06-01T20:00:00+08:00) or a date (2025-06-01), "
        + "milliseconds since 1970, now, or a span back from now (90m, 36h, 7d, 2w)"

    /// What ``parse(_:now:)`` accepts, for error hints.
    public static let inputForms =
        "ISO-8601 (2025-06-01T12:00:00Z), milliseconds since 1970, now, or a span back like 36h or 7d"

    /// Parses ISO-8601 text into milliseconds since the Unix epoch.
    ///
    /// Accepts `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z`,
    /// `±HH:MM` or `±HHMM`; `t`/space for `T` and `z` for `Z`. A missing offset means UTC unless
    /// `zoneRequired` (what people type: a local time is ambiguous on a server). Fractions beyond
    /// milliseconds are truncated. Returns nil for anything else or an impossible date.
    public static func parseISO8601(_ text: String, zoneRequired: Bool = false) -> Int64? {
        let b = Array(text.utf8)
        if zoneRequired, b.count > 10, !hasZone(b) { return nil }
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var hour = 0, minute = 0, second = 0, millis = 0
        var offsetSeconds = 0
        if i < b.count {
            guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ") else { return nil }
            i += 1
            guard let h = digits(2), expect(UInt8(ascii: ":")), let mi = digits(2) else { return nil }
            hour = h
            minute = mi
            if expect(UInt8(ascii: ":")) {
                guard let s = digits(2) else { return nil }
                second = s
                if expect(UInt8(ascii: ".")) || expect(UInt8(ascii: ",")) {
                    var count = 0
                    while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                        if count < 3 { millis = millis * 10 + Int(b[i] - 0x30) }
                        count += 1
                        i += 1
                    }
                    guard count > 0 else { return nil }
                    for _ in count..<max(count, 3) { millis *= 10 }
                }
            }
            guard hour < 24, minute < 60, second < 60 else { return nil }
            if i < b.count {
                if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
                    i += 1
                } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                    let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                    i += 1
                    guard let oh = digits(2) else { return nil }
                    _ = expect(UInt8(ascii: ":"))
                    guard let om = digits(2), oh < 24, om < 60 else { return nil }
                    offsetSeconds = sign * (oh * 3600 + om * 60)
                } else {
                    return nil
                }
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(Int64(year), month, day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * 1000 + Int64(millis)
    }

    /// Ends in `Z`/`z`, `±HH:MM` or `±HHMM`.
    private static func hasZone(_ b: [UInt8]) -> Bool {
        if let last = b.last, last == UInt8(ascii: "Z") || last == UInt8(ascii: "z") { return true }
        for length in [6, 5] where b.count > 10 + length {
            let sign = b[b.count - length]
            if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { return true }
        }
        return false
    }

    /// Seconds since the epoch for a UTC civil date and time.
    public static func epochSeconds(year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        daysFromCivil(year, month, day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    public static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int64, _ month: Int, _ day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (y, m, d)
    }
}
