// Why a hand-written parser rather than FoundationEssentials' JSONDecoder (scripts/json-measure-run
// measures both: callgrind instruction counts of a release build, each edge case run through both):
//
// - JSONDecoder accepts what a signed payload must not carry. A key given twice: it keeps the first
//   value (`{"bundleId":"com.a","bundleId":"com.b"}` decodes as com.a), so a payload signed with two
//   `bundleId`s would pass our checks with one and mean the other to a reader that keeps the last. A
//   UTF-8 byte-order mark, a trailing comma (`{"price":1,}`), arrays nested 65 deep (past this
//   parser's limit of 64; both refuse 600). This parser refuses each, naming the byte. Both refuse
//   lone surrogate escapes, invalid or overlong UTF-8, leading zeros, 1e400, an integer beyond the
//   field's type, comments, NaN, unescaped control characters and data after the value.
// - It costs less: a real Apple-signed transaction payload (699 bytes, AppStoreJWSTests' fixture
//   real/03-loki-did-renew) is 101,960 instructions through `parse` + `TransactionPayload(json:)`
//   (51,987 of them the parse) and 144,722 through JSONDecoder into the same fields, which also
//   loses the JSONValue that keeps the fields the model does not know.
//
// Strings, escapes, UTF-8, numbers and literals are read by ``JSONBytes``, which SubscriptionModel's
// fact-body reader shares.

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

/// The parser's walk over the text: values, arrays and objects (nesting, duplicate keys); the bytes
/// of strings, numbers and literals are read by ``JSONBytes``.
private struct Reader {
    var json: JSONBytes
    let maxDepth: Int
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        json = JSONBytes(bytes)
        self.maxDepth = maxDepth
    }

    var bytes: UnsafeBufferPointer<UInt8> { json.bytes }
    var pos: Int {
        get { json.pos }
        set { json.pos = newValue }
    }

    func fail(_ reason: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? pos, reason: reason)
    }

    /// A byte-level failure in this parser's words.
    func fail(_ failure: JSONBytes.Failure) -> JSONError {
        let reason =
            switch failure.kind {
            case .unterminatedString: "unterminated string"
            case .controlCharacter: "control character in string"
            case .unterminatedEscape: "unterminated escape"
            case .invalidEscape: "invalid escape"
            case .unpairedSurrogate: "unpaired surrogate escape"
            case .truncatedHexEscape: "truncated \\u escape"
            case .invalidHexEscape: "invalid hex digit in \\u escape"
            case .invalidUTF8: "invalid UTF-8"
            case .truncatedUTF8: "invalid UTF-8 (truncated sequence)"
            case .numberWithoutDigit: "invalid number"
            case .leadingZero: "leading zero in number"
            case .fractionWithoutDigit: "digit expected after '.'"
            case .exponentWithoutDigit: "digit expected in exponent"
            }
        return JSONError(offset: failure.offset, reason: reason)
    }

    mutating func skipWhitespace() { json.skipWhitespace() }

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
        guard json.take(literal: word) else { throw fail("invalid literal", at: json.mismatch(of: word)) }
    }

    mutating func parseString() throws(JSONError) -> String {
        do throws(JSONBytes.Failure) {
            return try json.string()
        } catch {
            throw fail(error)
        }
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

    /// Integers that fit in `Int64` become `.int`, other numbers `.double`.
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let number: JSONBytes.Number
        do throws(JSONBytes.Failure) {
            number = try json.number()
        } catch {
            throw fail(error)
        }
        if let value = number.int64 { return .int(value) }
        guard let value = Double(json.text(number.range)), value.isFinite else {
            throw fail("number out of range", at: number.range.lowerBound)
        }
        return .double(value)
    }
}
