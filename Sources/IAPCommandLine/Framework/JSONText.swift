import AppStoreJWS

/// A strict RFC 8259 parser into `JSONValue` (for the `--config` file and other small inputs).
public enum JSONText {
    /// Why a text is not JSON, with the 1-based line and column of the problem.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var line: Int
        public var column: Int
        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// Parses one JSON document (surrounding whitespace allowed).
    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the document") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func error(_ reason: String) -> SyntaxError {
            var line = 1
            var column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == 10 {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return SyntaxError(reason: reason, line: line, column: column)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func literal(_ word: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected
            else { throw error("invalid literal") }
            index += expected.count
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < 256 else { throw error("nested too deeply") }
            guard let byte = current else { throw error("unexpected end of input") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("unexpected character")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let key = try string()
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if current == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                throw error("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var items: [JSONValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if current == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                throw error("expected ',' or ']'")
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw error("short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - 48
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - 87
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - 55
                default: throw error("bad \\u escape")
                }
                value = value * 16 + UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flushRun() {
                if !run.isEmpty {
                    scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                    run.removeAll()
                }
            }
            while true {
                guard let byte = current else { throw error("unterminated string") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flushRun()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flushRun()
                    guard let escape = current else { throw error("unterminated string") }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u")
                            else { throw error("unpaired surrogate") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("unpaired surrogate") }
                        scalars.append(scalar)
                    default: throw error("bad escape")
                    }
                default:
                    guard byte >= 0x20 else { throw error("control character in string") }
                    run.append(byte)
                }
            }
        }

        mutating func number() throws(SyntaxError) -> JSONValue {
            let start = index
            var isInteger = true
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, first >= 48, first <= 57 else { throw error("bad number") }
            if first == 48 { index += 1 } else { while let b = current, b >= 48, b <= 57 { index += 1 } }
            if current == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard let b = current, b >= 48, b <= 57 else { throw error("bad number") }
                while let b = current, b >= 48, b <= 57 { index += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let b = current, b >= 48, b <= 57 else { throw error("bad number") }
                while let b = current, b >= 48, b <= 57 { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .int(integer) }
            guard let double = Double(text) else { throw error("bad number") }
            return .double(double)
        }
    }
}
