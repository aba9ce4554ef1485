import IAPFoundation

/// Apple's `requestIdentifier` (a UUID that makes a write idempotent: Apple does a write once per
/// identifier).
public enum RequestIdentifier {
    /// A new random UUID (version 4): one per intended write. The client's retries resend the same
    /// request, so a write retried within one invocation keeps it; a new invocation gets a new one
    /// unless the caller repeats one on purpose.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A version-4 UUID from `generator`'s bytes.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var b = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let c = Array(Hex.encode(b))
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }

    /// Whether `text` is a UUID as Apple writes them: 8-4-4-4-12 hex digits (any case).
    public static func isUUID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
