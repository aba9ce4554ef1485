/// A JSON document that keeps object key order, exact integers and every unknown field.
///
/// Apple's payloads are decoded into this first (so nothing Apple sends is lost), and the
/// command line renders its output through it (so JSON output has a stable, documented order).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer that fits in 64 bits (dates in ms, prices in milliunits, app ids).
    case int(Int64)
    /// Any other number (Xcode's fractional-millisecond dates).
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member `key` of an object (first occurrence), or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Integer value; a double with no fraction that fits is accepted, a fractional one is truncated
    /// toward zero (Xcode dates carry fractional milliseconds).
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.isFinite && d >= -9.2e18 && d <= 9.2e18: return Int64(d)
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let m) = self { return m }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue {
    /// Compact serialization (RFC 8259), keys in stored order, `/` not escaped.
    public func serialized() -> String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// Indented serialization for people (two spaces).
    public func prettySerialized() -> String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)) } else { out += "\(d)" }
            } else {
                out += "null"
            }
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if let indent { out += "\n" + String(repeating: indent, count: level + 1) }
                item.write(to: &out, indent: indent, level: level + 1)
            }
            if let indent { out += "\n" + String(repeating: indent, count: level) }
            out += "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                if let indent { out += "\n" + String(repeating: indent, count: level + 1) }
                JSONValue.writeString(member.key, to: &out)
                out += indent == nil ? ":" : ": "
                member.value.write(to: &out, indent: indent, level: level + 1)
            }
            if let indent { out += "\n" + String(repeating: indent, count: level) }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        var text = s
        // On the UTF-8 bytes: clean runs are copied whole; only control characters, quote,
        // backslash and U+2028/U+2029 (E2 80 A8/A9) are escaped.
        let escaped: String? = text.withUTF8 { bytes in
            func needsEscape(_ i: Int) -> Bool {
                let b = bytes[i]
                if b < 0x20 || b == 0x22 || b == 0x5C { return true }
                return b == 0xE2 && i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)
            }
            var first = 0
            while first < bytes.count, !needsEscape(first) { first += 1 }
            if first == bytes.count { return nil }
            var buffer: [UInt8] = []
            buffer.reserveCapacity(bytes.count + 16)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<first]))
            var i = first
            while i < bytes.count {
                guard needsEscape(i) else {
                    buffer.append(bytes[i])
                    i += 1
                    continue
                }
                let b = bytes[i]
                switch b {
                case 0x22: buffer.append(contentsOf: [0x5C, 0x22])
                case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x08: buffer.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: buffer.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0xE2:
                    buffer.append(contentsOf: Array((bytes[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8))
                    i += 3
                    continue
                default:
                    let hex = Array(String(b, radix: 16).utf8)
                    buffer.append(contentsOf: Array("\\u".utf8) + [UInt8](repeating: UInt8(ascii: "0"), count: 4 - hex.count) + hex)
                }
                i += 1
            }
            return String(decoding: buffer, as: UTF8.self)
        }
        out += "\""
        out += escaped ?? s
        out += "\""
    }
}
