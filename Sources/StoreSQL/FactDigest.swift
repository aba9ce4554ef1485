import CryptoDigest
import IAPFoundation
import SubscriptionModel

/// The digest a fact is kept under (with `fact_key`, the unique key that keeps a fact once): the
/// SHA-256 of its ``Fact/identity``, the first 16 bytes as 22 characters of unpadded base64url
/// (to keep the database small: 32 hex digits until schema v8, whose migration rewrites each stored
/// digest from hex to base64url, ``hexToBase64URL(_:)``; the digest is in the row and in the unique
/// index, so 10 bytes less per fact twice).
///
/// Why 128 bits are enough: a fact is lost only if two different facts of the same key share the
/// digest. With SHA-256 that takes a 128-bit collision between two payloads Apple signed (or a
/// 2^64-work search nobody can feed to Apple's signer); the 64-bit FNV-1a used before was no hash
/// against collisions at all. 32 hex digits also fit the column as it was (`VARCHAR(32)`), so
/// existing tables only get their digests recomputed (``StoreSchema/factDigestMigrationName``).
public enum FactDigest {
    public static func of(_ fact: Fact) -> String {
        Base64.encodeURL(SHA256Digest.of(fact.identity).prefix(16))
    }

    /// A digest as schema v7 stored it (32 lower-case hex digits) as this build computes it; nil
    /// for anything else (left as it is).
    static func hexToBase64URL(_ hex: String) -> String? {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: 32, by: 2) {
            guard let high = nibble(digits[pair]), let low = nibble(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return Base64.encodeURL(bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: return digit - 0x30
        case 0x61...0x66: return digit - 0x61 + 10
        default: return nil
        }
    }
}
