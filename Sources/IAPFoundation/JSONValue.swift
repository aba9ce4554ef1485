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
        var out = JSONWriter()
        out.value(self)
        return out.text
    }

    /// Indented serialization for people (two spaces).
    public func prettySerialized() -> String {
        var out = JSONWriter()
        out.value(self, indent: "  ")
        return out.text
    }
}

/// The one JSON writer: values, strings and objects appended to a UTF-8 buffer.
///
/// ``JSONValue/serialized()`` writes through it, the engine's audit JSON and the test forge's
/// payloads build objects member by member with it.
public struct JSONWriter: Sendable {
    /// How strings are escaped. Both escape `"`, `\` and control characters (`\n`, `\r`, `\t`,
    /// `\b`, `\f`, others as `\u00XX`).
    public enum Escaping: Sendable {
        /// Also U+2028/U+2029 (they end a line in JavaScript); `/` as is. The command line's output.
        case standard
        /// Also `/` as `\/`, U+2028/U+2029 as is: byte for byte what `JSONEncoder` writes (the
        /// audit trail's stored JSON was written by it once and must not change).
        case foundation
    }

    /// The text written so far, as UTF-8.
    public private(set) var bytes: [UInt8] = []
    public let escaping: Escaping

    /// An empty writer.
    public init(escaping: Escaping = .standard, capacity: Int = 0) {
        self.escaping = escaping
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends text that is already JSON.
    public mutating func raw(_ json: String) { bytes.append(contentsOf: json.utf8) }

    /// Appends an integer.
    public mutating func int(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    /// Appends a value; `indent` writes one member or item per line (`nil`: compact).
    public mutating func value(_ value: JSONValue, indent: String? = nil) {
        write(value, indent: indent, level: 0)
    }

    private mutating func newline(_ indent: String?, _ level: Int) {
        guard let indent else { return }
        bytes.append(UInt8(ascii: "\n"))
        for _ in 0..<level { bytes.append(contentsOf: indent.utf8) }
    }

    private mutating func write(_ value: JSONValue, indent: String?, level: Int) {
        switch value {
        case .null: raw("null")
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(), abs(d) < 1e15 { int(Int64(d)) } else { raw("\(d)") }
            } else {
                raw("null")
            }
        case .string(let s): string(s)
        case .array(let items):
            if items.isEmpty { return raw("[]") }
            bytes.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent, level + 1)
                write(item, indent: indent, level: level + 1)
            }
            newline(indent, level)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { return raw("{}") }
            bytes.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent, level + 1)
                string(member.key)
                raw(indent == nil ? ":" : ": ")
                write(member.value, indent: indent, level: level + 1)
            }
            newline(indent, level)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `s` as a JSON string literal.
    public mutating func string(_ s: String) {
        var s = s
        let slash = escaping == .foundation
        let separators = escaping == .standard
        bytes.append(UInt8(ascii: "\""))
        s.withUTF8 { input in
            // Clean runs are copied whole; only what must be escaped is looked at.
            func needsEscape(_ i: Int) -> Bool {
                let b = input[i]
                if b < 0x20 || b == 0x22 || b == 0x5C || (slash && b == 0x2F) { return true }
                return separators && b == 0xE2 && i + 2 < input.count && input[i + 1] == 0x80
                    && (input[i + 2] == 0xA8 || input[i + 2] == 0xA9)
            }
            var run = 0
            var i = 0
            while i < input.count {
                guard needsEscape(i) else {
                    i += 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[run..<i]))
                let b = input[i]
                switch b {
                case 0x22, 0x5C, 0x2F: bytes.append(contentsOf: [0x5C, b])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0xE2:
                    bytes.append(contentsOf: (input[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    i += 2
                default:
                    let hex: StaticString = "0123456789abcdef"
                    hex.withUTF8Buffer { h in
                        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, h[Int(b >> 4)], h[Int(b & 0xF)]])
                    }
                }
                i += 1
                run = i
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[run..<input.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A JSON object written member by member, in the order they are added.
public struct JSONObjectWriter: Sendable {
    private var writer: JSONWriter
    private var empty = true

    /// Starts an empty object.
    public init(escaping: JSONWriter.Escaping = .standard, capacity: Int = 0) {
        writer = JSONWriter(escaping: escaping, capacity: capacity)
        writer.raw("{")
    }

    /// Adds a string member.
    public mutating func add(_ key: String, _ value: String) {
        openMember(key)
        writer.string(value)
    }

    /// Adds an integer member.
    public mutating func add(_ key: String, _ value: Int64) {
        openMember(key)
        writer.int(value)
    }

    /// Adds a boolean member.
    public mutating func add(_ key: String, _ value: Bool) {
        openMember(key)
        writer.bool(value)
    }

    /// Adds any JSON value.
    public mutating func add(_ key: String, _ value: JSONValue) {
        openMember(key)
        writer.value(value)
    }

    /// Adds a member whose value is already-serialized JSON.
    public mutating func add(_ key: String, raw: String) {
        openMember(key)
        writer.raw(raw)
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
    public var json: String {
        var done = writer
        done.raw("}")
        return done.text
    }

    private mutating func openMember(_ key: String) {
        if !empty { writer.raw(",") }
        empty = false
        writer.string(key)
        writer.raw(":")
    }
}

extension JSONValue {
    /// The JSON type's name for messages: "string", "number", "object"…
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The type's name with its article for a sentence: "null", "a boolean", "an object"….
    public var typeNameWithArticle: String {
        switch self {
        case .null: "null"
        case .array, .object: "an " + typeName
        default: "a " + typeName
        }
    }
}
