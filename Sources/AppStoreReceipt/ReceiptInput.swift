#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// Recognises a StoreKit 1 receipt among what users feed the CLI: base64 text, DER bytes, or a
/// verifyReceipt-style body `{"receipt-data": "…"}`. JWS never match (they hold dots and start `eyJ`).
public enum ReceiptInput {
    /// True when `bytes` start like a DER/BER SEQUENCE (a PKCS#7 receipt file, not text).
    public static func looksLikeDER(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x30 && (bytes[1] == 0x80 || bytes[1] >= 0x81 && bytes[1] <= 0x84)
    }

    /// The total size the outer header of `der` announces (definite lengths only), e.g. to tell a
    /// complete receipt from the first line of a wrapped one; nil for an indefinite length.
    public static func declaredLength(_ der: [UInt8]) -> Int? {
        guard der.count >= 2, der[1] != 0x80 else { return nil }
        if der[1] < 0x80 { return 2 + Int(der[1]) }
        let count = Int(der[1] & 0x7F)
        guard count <= 4, der.count >= 2 + count else { return nil }
        var length = 0
        for i in 0..<count { length = length << 8 | Int(der[2 + i]) }
        return 2 + count + length
    }

    /// The DER of a base64 receipt (standard alphabet, padding optional, whitespace and line
    /// breaks ignored); nil when the text is not base64 of something that starts like DER.
    public static func der(fromBase64 text: String) -> [UInt8]? {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        // "MI" is base64 of 0x30 0x8x: a SEQUENCE with a long or indefinite length. Looked at before
        // the text is copied: `verify` asks it of every item it reads, and a JWS is 12 KB.
        guard text.utf8.lazy.filter({ !blank($0) }).starts(with: "MI".utf8) else { return nil }
        let cleaned = text.utf8.filter { !blank($0) }
        guard cleaned.count >= 8 else { return nil }
        guard let der = Base64.decodeStandard(cleaned), looksLikeDER(der) else { return nil }
        return der
    }

    /// The base64 receipt in a JSON body `{"receipt-data": "…"}` (other members, such as
    /// `password` or `exclude-old-transactions`, are ignored); nil when the object has no such member.
    /// Throws when `receipt-data` is not a string.
    public static func receiptData(in json: JSONValue) throws(VerificationFailure) -> String? {
        guard let value = json["receipt-data"] else { return nil }
        guard case .string(let text) = value else {
            throw VerificationFailure(.invalidContainer, "receipt-data must be a string, found \(value.typeName)")
        }
        return text
    }
}
