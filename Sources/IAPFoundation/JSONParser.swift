/// Why a JSON text was refused, and at which byte offset.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset (0-based) into the input where the problem was found.
    public let offset: Int
    /// What is wrong, e.g. "duplicate object key \"a\"".
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 JSON parser producing ``JSONValue``.
///
/// Refuses what lenient parsers accept: duplicate object keys, invalid UTF-8, lone
/// surrogate escapes, leading zeros, trailing commas, comments, a byte-order mark,
/// non-finite numbers, nesting deeper than ``Limits/maxDepth`` and inputs larger than
/// ``Limits/maxBytes``. Integers that fit in `Int64` become `.int`, other numbers `.double`.
public enum JSONParser {
    /// Resource limits applied while parsing.
    public struct Limits: Sendable {
        /// Largest accepted input, in bytes.
        public var maxBytes: Int
        /// Deepest accepted nesting of arrays and objects.
        public var maxDepth: Int

        public init(maxBytes: Int = 1 << 20, maxDepth: Int = 64) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
        }

        /// 1 MiB, depth 64.
        public static let standard = Limits()
    }

    /// Parses one JSON text (surrounding whitespace allowed) from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8], limits: Limits = .standard) throws(JSONError) -> JSONValue {
        if bytes.count > limits.maxBytes {
            throw JSONError(offset: limits.maxBytes, reason: "JSON text larger than \(limits.maxBytes) bytes")
        }
        let result: Result<JSONValue, JSONError> = bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer, maxDepth: limits.maxDepth)
            do throws(JSONError) {
                return .success(try reader.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON text from a string.
    public static func parse(_ text: String, limits: Limits = .standard) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var pos = 0
    var depth = 0
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? pos, reason: reason)
    }

    mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw fail("byte-order mark not allowed", at: 0)
        }
        skipWhitespace()
        if pos >= bytes.count { throw fail("empty JSON text") }
        let value = try parseValue()
        skipWhitespace()
        if pos < bytes.count { throw fail("unexpected data after the JSON value") }
        return value
    }

    mutating func parseValue() throws(JSONError) -> JSONValue {
        guard pos < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func expectLiteral(_ word: StaticString) throws(JSONError) {
        let count = word.utf8CodeUnitCount
        guard pos + count <= bytes.count else { throw fail("invalid literal") }
        let start = word.utf8Start
        for i in 0..<count where bytes[pos + i] != start[i] {
            throw fail("invalid literal", at: pos + i)
        }
        pos += count
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
    }

    mutating func parseObject() throws(JSONError) -> JSONValue {
        try enter()
        pos += 1
        var members: [(key: String, value: JSONValue)] = []
        var keys: Set<String>? = nil
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard pos < bytes.count else { throw fail("unexpected end of input in object") }
            guard bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyOffset = pos
            let key = try parseString()
            if members.count < 16 {
                if members.contains(where: { $0.key == key }) {
                    throw fail("duplicate object key \"\(key)\"", at: keyOffset)
                }
            } else {
                if keys == nil { keys = Set(members.map(\.key)) }
                if keys!.insert(key).inserted == false {
                    throw fail("duplicate object key \"\(key)\"", at: keyOffset)
                }
            }
            skipWhitespace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            skipWhitespace()
            let value = try parseValue()
            members.append((key: key, value: value))
            skipWhitespace()
            guard pos < bytes.count else { throw fail("unexpected end of input in object") }
            if bytes[pos] == UInt8(ascii: ",") {
                pos += 1
                continue
            }
            if bytes[pos] == UInt8(ascii: "}") {
                pos += 1
                depth -= 1
                return .object(members)
            }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func parseArray() throws(JSONError) -> JSONValue {
        try enter()
        pos += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard pos < bytes.count else { throw fail("unexpected end of input in array") }
            if bytes[pos] == UInt8(ascii: ",") {
                pos += 1
                continue
            }
            if bytes[pos] == UInt8(ascii: "]") {
                pos += 1
                depth -= 1
                return .array(items)
            }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = pos
        var isInteger = true
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("invalid number") }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw fail("leading zero in number") }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("digit expected after '.'") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw fail("digit expected in exponent") }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw fail("number out of range", at: start)
        }
        return .double(value)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Parses a string starting at the opening quote; validates UTF-8 strictly.
    mutating func parseString() throws(JSONError) -> String {
        pos += 1
        let start = pos
        // Fast path: no escapes.
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
                pos += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            if byte < 0x80 { pos += 1 } else { try skipUTF8Sequence() }
        }
        guard pos < bytes.count else { throw fail("unterminated string", at: start - 1) }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte == UInt8(ascii: "\\") {
                try parseEscape()
            } else if byte < 0x80 {
                scratch.append(byte)
                pos += 1
            } else {
                let seqStart = pos
                try skipUTF8Sequence()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[seqStart..<pos]))
            }
        }
        throw fail("unterminated string", at: start - 1)
    }

    mutating func parseEscape() throws(JSONError) {
        pos += 1
        guard pos < bytes.count else { throw fail("unterminated escape") }
        let byte = bytes[pos]
        pos += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = pos - 2
            var scalar = try readHex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw fail("unpaired surrogate escape", at: escapeStart)
                }
                pos += 2
                let low = try readHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw fail("unpaired surrogate escape", at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw fail("unpaired surrogate escape", at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            throw fail("invalid escape", at: pos - 2)
        }
    }

    mutating func readHex4() throws(JSONError) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[pos]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            pos += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Advances over one multi-byte UTF-8 sequence, refusing overlong forms, surrogates
    /// and code points above U+10FFFF (RFC 3629).
    mutating func skipUTF8Sequence() throws(JSONError) {
        let lead = bytes[pos]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw fail("invalid UTF-8")
        }
        guard pos + length <= bytes.count else { throw fail("invalid UTF-8 (truncated sequence)") }
        let second = bytes[pos + 1]
        guard second >= lower && second <= upper else { throw fail("invalid UTF-8", at: pos + 1) }
        for i in 2..<length where bytes[pos + i] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8", at: pos + i)
        }
        pos += length
    }
}
