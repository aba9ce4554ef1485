internal import COpenSSL

/// Apple's `requestIdentifier` (a UUID that makes a write idempotent).
public enum RequestIdentifier {
    /// A UUID derived from `text` (SHA-256, formatted as a version-8 UUID): the same write asked again
    /// (after a timeout, say) carries the same identifier, so Apple does it once.
    public static func derived(from text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &digest) }
        var b = Array(digest.prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { byte -> String in
            let digits = Array("0123456789abcdef")
            return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
        }.joined()
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }

    /// Whether `text` is a UUID as Apple writes them: 8-4-4-4-12 hex digits (any case).
    public static func isUUID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
