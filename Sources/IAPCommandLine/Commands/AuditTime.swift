/// Time arguments of the support tools (`--since`, `--as-of`, `--at`): ISO-8601, milliseconds,
/// `now`, or a span back from now (`90m`, `36h`, `7d`).
enum AuditTime {
    /// Milliseconds since the epoch, or a usage error naming `option`.
    static func parse(_ text: String, option: String, now: Int64) throws(CLIError) -> Int64 {
        let trimmed = text.trimmingSpaces()
        if trimmed.lowercased() == "now" { return now }
        if let ms = Int64(trimmed), trimmed.count >= 10 { return ms }
        if let ms = ISO8601.parse(trimmed) { return ms }
        if let unit = trimmed.last, let amount = Int64(trimmed.dropLast()), amount >= 0 {
            let scale: Int64? =
                switch unit {
                case "m": 60_000
                case "h": 3_600_000
                case "d": 86_400_000
                case "w": 7 * 86_400_000
                default: nil
                }
            if let scale { return now - amount * scale }
        }
        throw CLIError.usage(
            "--\(option) '\(text)' is not a time",
            hint: "use ISO-8601 (2025-06-01T12:00:00Z), milliseconds since 1970, now, or a span back like 36h or 7d")
    }

    /// The value of `option` as a time, or nil when not given.
    static func option(_ invocation: Invocation, _ option: String, now: Int64) throws(CLIError) -> Int64? {
        guard let raw = invocation.value(option) else { return nil }
        return try parse(raw, option: option, now: now)
    }
}
