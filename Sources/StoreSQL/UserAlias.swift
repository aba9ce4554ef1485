import CryptoDigest
import IAPFoundation
import SubscriptionModel

/// The alias `users forget` gives a user: `forgotten-` and the first 16 hex digits of the SHA-256
/// of the database's salt and the user id, the same each time for the same user in the same
/// database; and the full salted hash the audit row keeps (never the id in clear).
///
/// The salt is 32 random bytes made at the first `users forget` and kept in `iap_checkpoints`
/// (name ``saltCheckpoint``): without it an alias cannot be computed from a guessed id. Whoever
/// holds the database (salt included) can still test a guess: this is pseudonymisation, the
/// way to keep the money records consistent; the id itself is nowhere.
public enum UserAlias {
    /// The checkpoint that keeps the salt (hex).
    public static let saltCheckpoint = "users forget salt"

    /// The prefix of every alias.
    public static let prefix = "forgotten-"

    /// The salt of this database, made (inside the caller's write transaction) when there is none
    /// (`made`: a dry run's alias is then not the one a later run makes).
    public static func salt(in session: any StoreSession, now: Int64) throws -> (bytes: [UInt8], made: Bool) {
        if let saved = try session.checkpoint(named: saltCheckpoint), let bytes = hexBytes(saved.value), bytes.count == 32 {
            return (bytes, false)
        }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try session.saveCheckpoint(Checkpoint(name: saltCheckpoint, value: Hex.encode(bytes), updatedAt: now))
        return (bytes, true)
    }

    /// Lower-case hex digits back to bytes; nil for anything else.
    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    /// The SHA-256 of the salt then the id's UTF-8, as 64 hex digits.
    public static func saltedHash(_ userId: String, salt: [UInt8]) -> String {
        Hex.encode(SHA256Digest.of(salt + Array(userId.utf8)))
    }

    /// `forgotten-` and the salted hash's first 16 hex digits.
    public static func alias(_ userId: String, salt: [UInt8]) -> String {
        prefix + saltedHash(userId, salt: salt).prefix(16)
    }
}
