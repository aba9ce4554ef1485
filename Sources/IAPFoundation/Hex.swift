/// Bytes as hexadecimal text: two digits a byte, lower-case unless asked, optionally separated
/// (`AB:CD` for a certificate fingerprint).
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * (2 + separator.utf8.count))
        for (index, byte) in bytes.enumerated() {
            if index > 0 { out += separator.utf8 }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
