/// The byte-level pieces of reading JSON text that both JSON readers use: ``JSONParser`` (any JSON
/// text into a ``JSONValue``) and SubscriptionModel's fact-body reader (one stored body into its
/// struct, members by name). Whitespace, literals, strings with their escapes and strict UTF-8,
/// numbers with an integer's `Int64` value: each checked as RFC 8259 and RFC 3629 say, a problem
/// thrown as a ``Failure`` (what and where) that each reader words its own way.
///
/// The fact-body reader calls these across modules for every member it reads: a stored transaction
/// body costs 27,664 instructions that way against 26,379 with its own copies of these pieces, and
/// the same with them `@inlinable` (scripts/json-measure-run).
package struct JSONBytes {
    /// What a piece found wrong, and the byte offset where.
    package struct Failure: Error, Sendable, Equatable {
        package enum Kind: Sendable, Equatable {
            /// A string without its closing quote (offset: its opening quote).
            case unterminatedString
            /// A byte below 0x20 inside a string.
            case controlCharacter
            /// A backslash at the end of the input.
            case unterminatedEscape
            /// A backslash followed by a byte that starts no escape (offset: the backslash).
            case invalidEscape
            /// A `\u` escape of a surrogate without its pair (offset: the escape).
            case unpairedSurrogate
            /// A `\u` escape with fewer than four bytes left.
            case truncatedHexEscape
            /// A `\u` escape with a byte that is not a hex digit.
            case invalidHexEscape
            /// A byte sequence that is not UTF-8 (overlong, a surrogate, above U+10FFFF, a stray byte).
            case invalidUTF8
            /// A UTF-8 sequence cut off by the end of the input.
            case truncatedUTF8
            /// A number without a digit where one must be (after `-`, or not a number at all).
            case numberWithoutDigit
            /// A number with a leading zero (`007`).
            case leadingZero
            /// A `.` without a digit after it.
            case fractionWithoutDigit
            /// An exponent without a digit.
            case exponentWithoutDigit
        }
        package var kind: Kind
        package var offset: Int

        package init(_ kind: Kind, at offset: Int) {
            self.kind = kind
            self.offset = offset
        }
    }

    /// A number's place in the input and, for an integer (no fraction, no exponent) that fits, its value.
    package struct Number: Sendable {
        package var range: Range<Int>
        /// False when it has a fraction or an exponent.
        package var isInteger: Bool
        /// The integer's value; nil when it is not an integer or does not fit in `Int64`.
        package var int64: Int64?
        /// Whether it starts with `-`.
        package var isNegative: Bool

        package init(range: Range<Int>, isInteger: Bool, int64: Int64?, isNegative: Bool) {
            self.range = range
            self.isInteger = isInteger
            self.int64 = int64
            self.isNegative = isNegative
        }
    }

    package let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    package var pos = 0
    /// Where a string with escapes is put together (kept between strings).
    var scratch: [UInt8] = []

    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    package var atEnd: Bool { pos >= bytes.count }

    package mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// Takes `byte` when it is next.
    package mutating func take(_ byte: UInt8) -> Bool {
        guard pos < bytes.count, bytes[pos] == byte else { return false }
        pos += 1
        return true
    }

    /// Takes `word` (`true`, `false`, `null`) when it is next.
    package mutating func take(literal word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard pos + count <= bytes.count else { return false }
        let start = word.utf8Start
        var i = 0
        while i < count {
            if bytes[pos + i] != start[i] { return false }
            i += 1
        }
        pos += count
        return true
    }

    /// Where the input stops matching `word` from `pos` (`pos` itself when it is cut off before `word` ends).
    package func mismatch(of word: StaticString) -> Int {
        let count = word.utf8CodeUnitCount
        guard pos + count <= bytes.count else { return pos }
        let start = word.utf8Start
        for i in 0..<count where bytes[pos + i] != start[i] { return pos + i }
        return pos + count
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// A number from `pos` (its first byte, `-` or a digit): the syntax of RFC 8259, an integer's value
    /// counted on the way.
    package mutating func number() throws(Failure) -> Number {
        let start = pos
        let negative = take(0x2D)
        guard pos < bytes.count, Self.isDigit(bytes[pos]) else { throw Failure(.numberWithoutDigit, at: pos) }
        var value: Int64 = 0
        var fits = true
        if bytes[pos] == 0x30 {
            pos += 1
            if pos < bytes.count, Self.isDigit(bytes[pos]) { throw Failure(.leadingZero, at: pos) }
        } else {
            while pos < bytes.count, Self.isDigit(bytes[pos]) {
                if fits {
                    let digit = Int64(bytes[pos] &- 0x30)
                    let (times, o1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                    fits = !o1 && !o2
                    value = sum
                }
                pos += 1
            }
        }
        var isInteger = true
        if pos < bytes.count, bytes[pos] == 0x2E {
            isInteger = false
            pos += 1
            guard pos < bytes.count, Self.isDigit(bytes[pos]) else { throw Failure(.fractionWithoutDigit, at: pos) }
            while pos < bytes.count, Self.isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == 0x65 || bytes[pos] == 0x45 {
            isInteger = false
            pos += 1
            if pos < bytes.count, bytes[pos] == 0x2B || bytes[pos] == 0x2D { pos += 1 }
            guard pos < bytes.count, Self.isDigit(bytes[pos]) else { throw Failure(.exponentWithoutDigit, at: pos) }
            while pos < bytes.count, Self.isDigit(bytes[pos]) { pos += 1 }
        }
        return Number(range: start..<pos, isInteger: isInteger, int64: isInteger && fits ? value : nil, isNegative: negative)
    }

    /// The text of `range` (valid UTF-8: checked when it was read).
    package func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// A string from `pos` (its opening quote) to its closing quote, escapes resolved, its UTF-8 checked.
    package mutating func string() throws(Failure) -> String {
        pos += 1
        let start = pos
        // Without escapes, the string is the bytes as they stand.
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == 0x22 {
                pos += 1
                return text(start..<(pos - 1))
            }
            if byte == 0x5C { break }
            if byte < 0x20 { throw Failure(.controlCharacter, at: pos) }
            if byte < 0x80 { pos += 1 } else { try skipUTF8Sequence() }
        }
        guard pos < bytes.count else { throw Failure(.unterminatedString, at: start - 1) }
        return try escapedString(from: start)
    }

    /// The rest of a string that has an escape at `pos`, its bytes from `start`.
    mutating func escapedString(from start: Int) throws(Failure) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<pos]))
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == 0x22 {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 { throw Failure(.controlCharacter, at: pos) }
            if byte == 0x5C {
                try escape()
            } else if byte < 0x80 {
                scratch.append(byte)
                pos += 1
            } else {
                let sequence = pos
                try skipUTF8Sequence()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[sequence..<pos]))
            }
        }
        throw Failure(.unterminatedString, at: start - 1)
    }

    /// One escape from its backslash at `pos`, its bytes appended to `scratch`.
    mutating func escape() throws(Failure) {
        pos += 1
        guard pos < bytes.count else { throw Failure(.unterminatedEscape, at: pos) }
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
            var scalar = try hex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard pos + 1 < bytes.count, bytes[pos] == 0x5C, bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw Failure(.unpairedSurrogate, at: escapeStart)
                }
                pos += 2
                let low = try hex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw Failure(.unpairedSurrogate, at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw Failure(.unpairedSurrogate, at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            throw Failure(.invalidEscape, at: pos - 2)
        }
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw Failure(.truncatedHexEscape, at: pos) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[pos]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw Failure(.invalidHexEscape, at: pos)
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

    /// Advances over one multi-byte UTF-8 sequence, refusing overlong forms, surrogates and code
    /// points above U+10FFFF (RFC 3629).
    mutating func skipUTF8Sequence() throws(Failure) {
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
        default: throw Failure(.invalidUTF8, at: pos)
        }
        guard pos + length <= bytes.count else { throw Failure(.truncatedUTF8, at: pos) }
        let second = bytes[pos + 1]
        guard second >= lower && second <= upper else { throw Failure(.invalidUTF8, at: pos + 1) }
        for i in 2..<length where bytes[pos + i] & 0xC0 != 0x80 {
            throw Failure(.invalidUTF8, at: pos + i)
        }
        pos += length
    }
}
