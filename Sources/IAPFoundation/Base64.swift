#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Strict base64 decoders (RFC 4648), which the platform does not offer: base64url without padding for JWS segments, and
/// standard base64 with padding for the DER certificates of an `x5c` header.
///
/// Both refuse characters outside their alphabet, whitespace, impossible lengths and
/// non-zero trailing bits, so one byte string has exactly one accepted encoding. Standard encoding
/// is the platform's (`Data.base64EncodedString`); base64url encoding is written here.
public enum Base64 {
    private static let invalid: UInt8 = 0xFF

    private static let urlTable: [UInt8] = makeTable(plus: UInt8(ascii: "-"), slash: UInt8(ascii: "_"))
    private static let standardTable: [UInt8] = makeTable(plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"))

    private static func makeTable(plus: UInt8, slash: UInt8) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(c)] = UInt8(i)
        }
        table[Int(plus)] = 62
        table[Int(slash)] = 63
        return table
    }

    /// Decodes unpadded base64url (`A–Z a–z 0–9 - _`); nil if anything is off.
    public static func decodeURL<S: Collection<UInt8>>(_ text: S) -> [UInt8]? {
        decode(text, table: urlTable, padded: false)
    }

    /// Decodes unpadded base64url from a string or substring.
    public static func decodeURL(_ text: Substring) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, table: urlTable, padded: false) }
    }

    /// Decodes unpadded base64url from a string.
    public static func decodeURL(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, table: urlTable, padded: false) }
    }

    /// Decodes standard, padded base64 (`A–Z a–z 0–9 + /`, `=`); nil if anything is off.
    public static func decodeStandard<S: Collection<UInt8>>(_ text: S) -> [UInt8]? {
        decode(text, table: standardTable, padded: true)
    }

    /// Decodes standard, padded base64 from a string.
    public static func decodeStandard(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, table: standardTable, padded: true) }
    }

    /// Encodes bytes as unpadded base64url.
    public static func encodeURL<C: Collection<UInt8>>(_ bytes: C) -> String {
        var out: [UInt8] = []
        encodeURL(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Appends the unpadded base64url encoding of `bytes` to `out` (no intermediate string: the
    /// ledger rebuilds kilobytes of JWS text this way).
    public static func encodeURL<C: Collection<UInt8>>(_ bytes: C, into out: inout [UInt8]) {
        if bytes.withContiguousStorageIfAvailable({ encodeURLBuffer($0, into: &out) }) == nil {
            Array(bytes).withUnsafeBufferPointer { encodeURLBuffer($0, into: &out) }
        }
    }

    /// Every 12 bits as their two base64url characters (first character in the low byte).
    private static let urlPairs: [UInt16] = (0..<4096).map { v in
        UInt16(urlAlphabet[v >> 6]) | UInt16(urlAlphabet[v & 63]) << 8
    }

    private static func encodeURLBuffer(_ input: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let n = input.count
        let produced = n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: produced))
        urlAlphabet.withUnsafeBufferPointer { alphabet in
            out.withUnsafeMutableBufferPointer { buffer in
                guard produced > 0, let output = buffer.baseAddress.map({ $0 + start }) else { return }
                var i = 0
                var o = 0
                // Two characters per table look-up (the same bytes as one per 6 bits).
                urlPairs.withUnsafeBufferPointer { pairs in
                    let raw = UnsafeMutableRawPointer(output)
                    while i + 3 <= n {
                        let v = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
                        raw.storeBytes(of: pairs[v >> 12].littleEndian, toByteOffset: o, as: UInt16.self)
                        raw.storeBytes(of: pairs[v & 0xFFF].littleEndian, toByteOffset: o + 2, as: UInt16.self)
                        i += 3
                        o += 4
                    }
                }
                if n - i == 1 {
                    let v = UInt32(input[i]) << 16
                    output[o] = alphabet[Int(v >> 18 & 63)]
                    output[o + 1] = alphabet[Int(v >> 12 & 63)]
                } else if n - i == 2 {
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                    output[o] = alphabet[Int(v >> 18 & 63)]
                    output[o + 1] = alphabet[Int(v >> 12 & 63)]
                    output[o + 2] = alphabet[Int(v >> 6 & 63)]
                }
            }
        }
    }

    /// Encodes bytes as standard, padded base64 (the platform's encoder).
    public static func encodeStandard<C: Collection<UInt8>>(_ bytes: C) -> String {
        Data(bytes).base64EncodedString()
    }

    private static func decode<S: Collection<UInt8>>(_ text: S, table: [UInt8], padded: Bool) -> [UInt8]? {
        if let result = text.withContiguousStorageIfAvailable({ decodeBuffer($0, table: table, padded: padded) }) {
            return result
        }
        return Array(text).withUnsafeBufferPointer { decodeBuffer($0, table: table, padded: padded) }
    }

    private static func decodeBuffer(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool) -> [UInt8]? {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { return nil }
            if count > 0, input[count - 1] == UInt8(ascii: "=") {
                count -= 1
                if input[count - 1] == UInt8(ascii: "=") { count -= 1 }
            }
        }
        let rest = count % 4
        if rest == 1 { return nil }
        let capacity = count / 4 * 3 + (rest == 0 ? 0 : rest - 1)
        var valid = true
        // Written straight into the result's storage (no per-byte append checks).
        let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            initialized = 0
            table.withUnsafeBufferPointer { t in
                var i = 0
                var o = 0
                while i + 4 <= count {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])], d = t[Int(input[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 {
                        valid = false
                        return
                    }
                    let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[o] = UInt8(truncatingIfNeeded: n >> 16)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                    buffer[o + 2] = UInt8(truncatingIfNeeded: n)
                    o += 3
                    i += 4
                }
                if rest == 2 {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])]
                    if (a | b) & 0xC0 != 0 || b & 0x0F != 0 {
                        valid = false
                        return
                    }
                    buffer[o] = a << 2 | b >> 4
                    o += 1
                } else if rest == 3 {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])]
                    if (a | b | c) & 0xC0 != 0 || c & 0x03 != 0 {
                        valid = false
                        return
                    }
                    buffer[o] = a << 2 | b >> 4
                    buffer[o + 1] = b << 4 | c >> 2
                    o += 2
                }
                initialized = o
            }
        }
        return valid ? out : nil
    }
}
