/// A JSON value written verbatim (already-serialized JSON), for header fields a test wants exactly, e.g. `null`.
public struct JSONRaw: Sendable {
    /// The JSON text, inserted as is.
    public let text: String

    /// Wraps already-serialized JSON text.
    public init(_ text: String) {
        self.text = text
    }
}

/// A small ordered JSON object writer: members appear in the order they are added.
public struct JSONObjectWriter: Sendable {
    private var text = "{"
    private var empty = true

    /// Starts an empty object.
    public init() {}

    /// Adds a string member.
    public mutating func add(_ key: String, _ value: String) {
        openMember(key)
        JSONObjectWriter.appendQuoted(value, to: &text)
    }

    /// Adds an integer member.
    public mutating func add(_ key: String, _ value: Int64) {
        openMember(key)
        text += String(value)
    }

    /// Adds a boolean member.
    public mutating func add(_ key: String, _ value: Bool) {
        openMember(key)
        text += value ? "true" : "false"
    }

    /// Adds a member whose value is already-serialized JSON.
    public mutating func add(_ key: String, raw: String) {
        openMember(key)
        text += raw
    }

    /// Adds a string member when `value` is non-nil.
    public mutating func addIfPresent(_ key: String, _ value: String?) {
        if let value { add(key, value) }
    }

    /// Adds an integer member when `value` is non-nil.
    public mutating func addIfPresent(_ key: String, _ value: Int64?) {
        if let value { add(key, value) }
    }

    /// Adds a boolean member when `value` is non-nil.
    public mutating func addIfPresent(_ key: String, _ value: Bool?) {
        if let value { add(key, value) }
    }

    /// The finished object text.
    public var json: String { text + "}" }

    private mutating func openMember(_ key: String) {
        if !empty { text += "," }
        empty = false
        JSONObjectWriter.appendQuoted(key, to: &text)
        text += ":"
    }

    /// Appends `value` as a JSON string literal (RFC 8259 escaping, `/` not escaped).
    public static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        var needsEscape = false
        for b in value.utf8 where b < 0x20 || b == 0x22 || b == 0x5C {
            needsEscape = true
            break
        }
        if !needsEscape {
            out += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case let s where s.value < 0x20:
                    let hex = String(s.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Serializes a loosely typed value (String, Bool, integers, Double, JSONRaw, arrays, `[String: Any]` with
    /// sorted keys); anything else becomes its description as a string.
    static func serialize(any value: Any) -> String {
        switch value {
        case let raw as JSONRaw: return raw.text
        case let s as String:
            var out = ""
            appendQuoted(s, to: &out)
            return out
        case let b as Bool: return b ? "true" : "false"
        case let i as Int: return String(i)
        case let i as Int64: return String(i)
        case let i as Int32: return String(i)
        case let d as Double: return d.isFinite ? String(d) : "null"
        case let list as [Any]: return "[" + list.map { serialize(any: $0) }.joined(separator: ",") + "]"
        case let dict as [String: Any]:
            var writer = JSONObjectWriter()
            for key in dict.keys.sorted() { writer.add(key, raw: serialize(any: dict[key]!)) }
            return writer.json
        default:
            var out = ""
            appendQuoted(String(describing: value), to: &out)
            return out
        }
    }
}
