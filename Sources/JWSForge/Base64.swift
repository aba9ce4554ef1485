/// Fast base64 (standard and URL-safe, unpadded) encoding and decoding over bytes.
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard base64 with `=` padding (the encoding of `x5c` entries).
    public static func standard<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(bytes, alphabet: standardAlphabet, pad: true)
    }

    /// Base64url without padding (the encoding of JWS segments).
    public static func url<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(bytes, alphabet: urlAlphabet, pad: false)
    }

    /// Decodes standard or URL-safe base64, padded or not; nil on any other character.
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): v = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            acc = (acc << 6) | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }

    private static func encode<C: Collection>(_ bytes: C, alphabet: [UInt8], pad: Bool) -> String
    where C.Element == UInt8 {
        let input = Array(bytes)
        let n = input.count
        let outCount = pad ? (n + 2) / 3 * 4 : (n * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: outCount) { out in
            var o = 0
            var i = 0
            while i + 3 <= n {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int((v >> 12) & 63)]
                out[o + 2] = alphabet[Int((v >> 6) & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                o += 4
                i += 3
            }
            let rest = n - i
            if rest > 0 {
                var v = UInt32(input[i]) << 16
                if rest == 2 { v |= UInt32(input[i + 1]) << 8 }
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int((v >> 12) & 63)]
                o += 2
                if rest == 2 {
                    out[o] = alphabet[Int((v >> 6) & 63)]
                    o += 1
                } else if pad {
                    out[o] = UInt8(ascii: "=")
                    o += 1
                }
                if pad {
                    out[o] = UInt8(ascii: "=")
                    o += 1
                }
            }
            return o
        }
    }
}
