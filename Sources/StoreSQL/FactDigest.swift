import CryptoDigest
import IAPFoundation
import SubscriptionEngine

/// The digest a fact is kept under (with `fact_key`, the unique key that keeps a fact once): the
/// SHA-256 of its ``Fact/identity``, the first 16 bytes as 32 hex digits.
///
/// Why 128 bits are enough: a fact is lost only if two different facts of the same key share the
/// digest. With SHA-256 that takes a 128-bit collision between two payloads Apple signed (or a
/// 2^64-work search nobody can feed to Apple's signer); the 64-bit FNV-1a used before was no hash
/// against collisions at all. 32 hex digits also fit the column as it was (`VARCHAR(32)`), so
/// existing tables only get their digests recomputed (``StoreSchema/factDigestMigrationName``).
public enum FactDigest {
    public static func of(_ fact: Fact) -> String {
        Hex.encode(SHA256Digest.of(fact.identity).prefix(16))
    }
}
