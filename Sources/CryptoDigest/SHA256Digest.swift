internal import COpenSSL

/// SHA-256 from libcrypto: the one wrapper every module that needs the digest uses (the ledger's
/// chain keys and the facts' digest in StoreSQL, the key of refused bytes in IAPOperations,
/// JWSForge's signatures). IAPFoundation links no C library, so it lives here.
public enum SHA256Digest {
    /// The digest's length in bytes.
    public static let byteCount = 32

    /// The SHA-256 of `bytes`.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, count in
            _ = SHA256(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, out.baseAddress)
            count = byteCount
        }
    }

    /// The SHA-256 of `bytes`.
    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { of($0) }
    }

    /// The SHA-256 of `text`'s UTF-8 bytes.
    public static func of(_ text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { of(UnsafeRawBufferPointer($0)) }
    }
}
