import IAPFoundation

/// Why a batch cell or option value is not the value its field takes.
public enum BatchFieldError: Error, Sendable, Equatable {
    /// Not a non-empty string (or an integer, for Apple ids).
    case notText(field: String, found: JSONValue)
    /// Longer than `limit` characters.
    case tooLong(field: String, length: Int, limit: Int)
    /// Neither milliseconds nor a time ``Timestamp`` reads.
    case notTime(field: String, value: JSONValue)
    /// Not on/off, true/false, yes/no or 1/0.
    case notFlag(field: String, value: JSONValue)
    /// None of `allowed` (matched without regard to case).
    case unknownChoice(field: String, value: JSONValue, allowed: [String])
}

/// Conversions of batch cells and option values to column values (`--from` rows, corrections,
/// new orders).
public enum BatchField {
    /// The longest id or text value a row may hold: both backends' columns take 255 characters.
    public static let maxLength = 255

    /// A non-empty string (numbers accepted as their digits, for Apple ids).
    public static func text(_ value: JSONValue, field: String) throws(BatchFieldError) -> String {
        switch value {
        case .string(let s) where !s.isEmpty && !s.allSatisfy(\.isWhitespace):
            try checkLength(s, field: field)
            return s
        case .int(let n): return String(n)
        default: throw .notText(field: field, found: value)
        }
    }

    /// Refuses a value longer than ``maxLength`` characters (MySQL's columns would refuse it later).
    public static func checkLength(_ text: String, field: String) throws(BatchFieldError) {
        if text.count > maxLength { throw .tooLong(field: field, length: text.count, limit: maxLength) }
    }

    /// A string, or nil for JSON null or "".
    public static func optionalText(_ value: JSONValue, field: String) throws(BatchFieldError) -> String? {
        if value.isNull || value == .string("") { return nil }
        return try text(value, field: field)
    }

    /// A time: integer milliseconds (number or digits) or a time ``Timestamp/parse(_:now:)`` reads
    /// (ISO-8601…); nil for null or "".
    public static func optionalTime(
        _ value: JSONValue, field: String, now: Int64 = Timestamp.now()
    ) throws(BatchFieldError) -> Int64? {
        switch value {
        case .null, .string(""): return nil
        case .int(let ms): return ms
        case .string(let s):
            if let ms = Int64(s) { return ms }
            if let ms = Timestamp.parse(s, now: now) { return ms }
            fallthrough
        default: throw .notTime(field: field, value: value)
        }
    }

    /// true/false, on/off, yes/no, 1/0.
    public static func flag(_ value: JSONValue, field: String) throws(BatchFieldError) -> Bool {
        switch value {
        case .bool(let b): return b
        case .int(1): return true
        case .int(0): return false
        case .string(let s):
            switch s.lowercased() {
            case "true", "on", "yes", "1": return true
            case "false", "off", "no", "0": return false
            default: break
            }
        default: break
        }
        throw .notFlag(field: field, value: value)
    }

    /// One of `Choice`'s cases, matched without regard to case.
    public static func choice<Choice: CaseIterable & RawRepresentable<String>>(
        _ value: JSONValue, field: String, of type: Choice.Type = Choice.self
    ) throws(BatchFieldError) -> Choice {
        let text = value.stringValue ?? ""
        if let match = Choice.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) { return match }
        throw .unknownChoice(field: field, value: value, allowed: Choice.allCases.map(\.rawValue))
    }
}
