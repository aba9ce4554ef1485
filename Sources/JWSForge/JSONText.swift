import IAPFoundation

/// A JSON value written verbatim (already-serialized JSON), for header fields a test wants exactly, e.g. `null`.
public struct JSONRaw: Sendable {
    /// The JSON text, inserted as is.
    public let text: String

    /// Wraps already-serialized JSON text.
    public init(_ text: String) {
        self.text = text
    }
}

extension JSONObjectWriter {
    /// Serializes a loosely typed value (String, Bool, integers, Double, JSONRaw, arrays, `[String: Any]` with
    /// sorted keys); anything else becomes its description as a string.
    static func serialize(any value: Any) -> String {
        switch value {
        case let raw as JSONRaw: return raw.text
        case let s as String: return JSONValue.string(s).serialized()
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
        default: return JSONValue.string(String(describing: value)).serialized()
        }
    }
}
