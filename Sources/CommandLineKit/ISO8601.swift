import AppStoreJWS

/// ISO-8601 UTC text for the command line: what people read and type. The date arithmetic is
/// AppStoreJWS's ``ISO8601Millis``; this adds the command line's rules.
public enum ISO8601 {
    /// `2025-09-05T01:24:32Z` for milliseconds since the Unix epoch (sub-second part dropped,
    /// rounding toward the past).
    public static func format(milliseconds: Int64) -> String {
        ISO8601Millis.formatSeconds(ms: milliseconds)
    }

    /// Milliseconds since the epoch for `2025-09-05`, `2025-09-05T01:24:32Z`,
    /// `2025-09-05T01:24:32.5+08:00` (a space may replace `T`); nil if the text is not such a date.
    /// A time of day must say its zone (`Z` or an offset): a local time is ambiguous on a server.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        if bytes.count > 10 && !hasZone(bytes) { return nil }
        return ISO8601Millis.parse(text)
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
}
