/// A strict DER reader for the receipt payload (the signed content of a StoreKit 1 receipt).
///
/// Refuses what DER forbids or a receipt never needs: indefinite lengths, non-minimal length
/// encodings, lengths over 4 bytes, high tag numbers, elements running past their parent, trailing
/// bytes, nesting deeper than ``maxDepth``, non-minimal INTEGERs and INTEGERs wider than 64 bits,
/// invalid UTF-8 in UTF8String and non-ASCII in IA5String. Element order inside a SET is not checked
/// (Apple's receipts are not sorted).
struct DERReader {
    /// Deepest nesting accepted (a receipt needs 6: SET ▸ SEQUENCE ▸ OCTET ▸ SET ▸ SEQUENCE ▸ OCTET).
    static let maxDepth = 8

    /// One element: its tag byte and where its content lies in ``bytes``.
    struct Element {
        let tag: UInt8
        let offset: Int
        let contentStart: Int
        let contentEnd: Int
        let depth: Int

        var isConstructed: Bool { tag & 0x20 != 0 }
        var length: Int { contentEnd - contentStart }
    }

    /// Tags the receipt uses.
    enum Tag {
        static let integer: UInt8 = 0x02
        static let octetString: UInt8 = 0x04
        static let utf8String: UInt8 = 0x0C
        static let ia5String: UInt8 = 0x16
        static let sequence: UInt8 = 0x30
        static let set: UInt8 = 0x31
    }

    let bytes: [UInt8]

    /// The single element that spans `start..<end` exactly (trailing bytes refused).
    func single(from start: Int, to end: Int, depth: Int) throws(DERError) -> Element {
        let element = try element(at: start, limit: end, depth: depth)
        guard element.contentEnd == end else {
            throw DERError(offset: element.contentEnd, "\(end - element.contentEnd) trailing byte(s) after the element")
        }
        return element
    }

    /// The element starting at `offset`, which must end by `limit`.
    func element(at offset: Int, limit: Int, depth: Int) throws(DERError) -> Element {
        guard depth <= Self.maxDepth else { throw DERError(offset: offset, "nesting deeper than \(Self.maxDepth)") }
        guard offset < limit else { throw DERError(offset: offset, "element expected, input ends") }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else { throw DERError(offset: offset, "high-tag-number form is not used by receipts") }
        guard offset + 1 < limit else { throw DERError(offset: offset + 1, "length expected, input ends") }
        let first = bytes[offset + 1]
        var length = 0
        var cursor = offset + 2
        if first < 0x80 {
            length = Int(first)
        } else if first == 0x80 {
            throw DERError(offset: offset + 1, "indefinite length is not DER")
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4 else { throw DERError(offset: offset + 1, "length of \(count) bytes is too large") }
            guard cursor + count <= limit else { throw DERError(offset: cursor, "length bytes run past the end") }
            guard bytes[cursor] != 0 else { throw DERError(offset: cursor, "length has a leading zero byte (not minimal)") }
            for i in 0..<count { length = length << 8 | Int(bytes[cursor + i]) }
            guard length >= 0x80 else { throw DERError(offset: offset + 1, "length \(length) in long form (not minimal)") }
            cursor += count
        }
        guard length <= limit - cursor else {
            throw DERError(offset: offset, "element of \(length) bytes runs past its container (\(limit - cursor) left)")
        }
        return Element(tag: tag, offset: offset, contentStart: cursor, contentEnd: cursor + length, depth: depth)
    }

    /// The children of a constructed element, which must fill it exactly.
    func children(of parent: Element) throws(DERError) -> [Element] {
        guard parent.isConstructed else { throw DERError(offset: parent.offset, "element is not constructed") }
        var out: [Element] = []
        var cursor = parent.contentStart
        while cursor < parent.contentEnd {
            let child = try element(at: cursor, limit: parent.contentEnd, depth: parent.depth + 1)
            out.append(child)
            cursor = child.contentEnd
        }
        return out
    }

    /// Checks the element's tag.
    func expect(_ element: Element, _ tag: UInt8, _ what: String) throws(DERError) {
        guard element.tag == tag else {
            throw DERError(
                offset: element.offset, "\(what): tag 0x\(String(element.tag, radix: 16)) where 0x\(String(tag, radix: 16)) was expected")
        }
    }

    /// A minimal two's-complement INTEGER of at most 64 bits.
    func integer(_ element: Element, _ what: String) throws(DERError) -> Int64 {
        try expect(element, Tag.integer, what)
        let n = element.length
        guard n > 0 else { throw DERError(offset: element.offset, "\(what): empty INTEGER") }
        guard n <= 8 else { throw DERError(offset: element.offset, "\(what): INTEGER wider than 64 bits") }
        let s = element.contentStart
        if n > 1 {
            let a = bytes[s], b = bytes[s + 1]
            guard !(a == 0x00 && b < 0x80) && !(a == 0xFF && b >= 0x80) else {
                throw DERError(offset: element.offset, "\(what): INTEGER is not minimally encoded")
            }
        }
        var value: Int64 = bytes[s] >= 0x80 ? -1 : 0
        for i in 0..<n { value = value << 8 | Int64(bytes[s + i]) }
        return value
    }

    /// A UTF8String or IA5String, validated.
    func string(_ element: Element, _ what: String) throws(DERError) -> String {
        let content = bytes[element.contentStart..<element.contentEnd]
        switch element.tag {
        case Tag.utf8String:
            guard let text = String(validating: content, as: UTF8.self) else {
                throw DERError(offset: element.offset, "\(what): UTF8String is not valid UTF-8")
            }
            return text
        case Tag.ia5String:
            guard content.allSatisfy({ $0 < 0x80 }) else {
                throw DERError(offset: element.offset, "\(what): IA5String holds a non-ASCII byte")
            }
            return String(decoding: content, as: UTF8.self)
        default:
            throw DERError(offset: element.offset, "\(what): tag 0x\(String(element.tag, radix: 16)) is not a UTF8String or IA5String")
        }
    }

    /// The content bytes of a primitive element.
    func content(_ element: Element) -> [UInt8] {
        Array(bytes[element.contentStart..<element.contentEnd])
    }
}

/// Why the receipt payload is not the strict DER a receipt is: the byte offset and the rule broken.
public struct DERError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Offset into the payload (the signed content) where the problem was found.
    public let offset: Int
    public let reason: String

    init(offset: Int, _ reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "at byte \(offset): \(reason)" }
}

/// A walk over a whole BER container (definite and indefinite lengths), for what OpenSSL's BER
/// reader lets through but a faithful encoding never has: chunks of a constructed OCTET STRING
/// that are not OCTET STRINGs, end-of-contents markers with content, elements running past their
/// parent. (Xcode writes receipts in BER; such a change would leave the signed content intact but
/// the file altered.)
enum BERShape {
    static let maxDepth = 32

    /// Why `bytes` is not a faithful BER encoding; nil when it is.
    static func problem(_ bytes: [UInt8]) -> String? {
        do {
            let end = try walk(bytes, from: 0, to: bytes.count, depth: 0, inside: nil, untilEOC: false)
            return end == bytes.count ? nil : "trailing bytes after the PKCS#7 structure"
        } catch {
            return error.description
        }
    }

    /// Walks the elements from `start` until `limit` (or an end-of-contents marker when
    /// `untilEOC`); returns where the walk ended (after the marker).
    private static func walk(
        _ b: [UInt8], from start: Int, to limit: Int, depth: Int, inside parent: UInt8?, untilEOC: Bool
    ) throws(DERError) -> Int {
        guard depth <= maxDepth else { throw DERError(offset: start, "nesting deeper than \(maxDepth)") }
        var i = start
        while i < limit {
            let tag = b[i]
            guard tag & 0x1F != 0x1F else { throw DERError(offset: i, "high-tag-number form") }
            guard i + 1 < limit else { throw DERError(offset: i, "length expected, input ends") }
            if tag == 0, b[i + 1] == 0, untilEOC { return i + 2 }
            if tag == 0 { throw DERError(offset: i, "end-of-contents marker out of place") }
            if let parent, parent & 0xDF == 0x04, tag & 0xDF != 0x04 {
                throw DERError(offset: i, "a chunk of a constructed OCTET STRING is not an OCTET STRING")
            }
            let first = b[i + 1]
            var cursor = i + 2
            if first == 0x80 {
                guard tag & 0x20 != 0 else { throw DERError(offset: i, "indefinite length on a primitive element") }
                i = try walk(b, from: cursor, to: limit, depth: depth + 1, inside: tag, untilEOC: true)
                continue
            }
            var length = 0
            if first < 0x80 {
                length = Int(first)
            } else {
                let count = Int(first & 0x7F)
                guard count <= 4, cursor + count <= limit else { throw DERError(offset: i + 1, "bad length") }
                for k in 0..<count { length = length << 8 | Int(b[cursor + k]) }
                cursor += count
            }
            guard length <= limit - cursor else { throw DERError(offset: i, "element runs past its container") }
            if tag & 0x20 != 0 {
                let end = try walk(b, from: cursor, to: cursor + length, depth: depth + 1, inside: tag, untilEOC: false)
                guard end == cursor + length else { throw DERError(offset: i, "constructed element ends early") }
            }
            i = cursor + length
        }
        if untilEOC { throw DERError(offset: limit, "end-of-contents marker missing") }
        return i
    }
}
