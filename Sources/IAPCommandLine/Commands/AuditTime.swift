import IAPFoundation

/// Time arguments (`--since`, `--until`, `--as-of`, `--at`) in the one grammar of ``Timestamp/parse(_:now:)``:
/// ISO-8601, milliseconds, `now`, or a span back from now (`90m`, `36h`, `7d`).
enum AuditTime {
    /// Milliseconds since the epoch, or a usage error naming `option`.
    static func parse(_ text: String, option: String, now: Int64) throws(CLIError) -> Int64 {
        if let ms = Timestamp.parse(text, now: now) { return ms }
        throw CLIError.usage("--\(option) '\(text)' is not a time", hint: "use " + Timestamp.inputForms)
    }

    /// The value of `option` as a time, or nil when not given.
    static func option(_ invocation: Invocation, _ option: OptionSpec, now: Int64) throws(CLIError) -> Int64? {
        guard let raw = invocation.value(option) else { return nil }
        return try parse(raw, option: option.long, now: now)
    }
}
