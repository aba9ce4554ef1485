import AppStoreJWS
import CryptoDigest
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// Keeps refused items in the ledger (every JWS received is in the ledger
/// with its verdict, rejected ones too when their bytes can be read): a JWS that failed
/// verification, a verified item the command cannot take. Verdict `rejected`, why, the exact bytes
/// (read back like any ledger raw); never a fact, never a row change.
///
/// Such an item is kept once per distinct bytes: its exactly-once key (a claim, like a
/// notification's UUID) is the SHA-256 of its bytes, so the same rejected bytes delivered again,
/// or a replay of the same input, add nothing. It keeps no ids: they are unverified, and the
/// ledger's ids are what look-ups (`explain`, `orders show`, exactly-once) trust. (A poison item —
/// verified, fields too long for the store — is kept with the ids that fit at every delivery,
/// like any verified delivery: ``StoredFields/rejectedEntry(_:detail:receivedAt:)``.)
public enum RejectedItems {
    /// The claim key of refused bytes: `rejected sha256:<hex>` (never a notification UUID).
    public static func key(_ raw: String) -> String {
        "rejected sha256:" + Hex.encode(SHA256Digest.of(raw))
    }

    /// Appends `entry` (verdict `rejected`) inside the open transaction unless the same bytes were
    /// kept already; true when it was appended.
    @discardableResult
    package static func keep(_ entry: LedgerEntry, in session: any StoreSession) throws -> Bool {
        guard try session.claimNotification(key(entry.raw)) else { return false }
        _ = try session.appendLedger(entry)
        return true
    }

    /// Keeps refused bytes that carry nothing trusted: source, why and the bytes only.
    @discardableResult
    public static func keep(
        _ raw: String, source: EventSource, why: String, receivedAt: Int64, in session: any StoreSession
    ) throws -> Bool {
        try keep(LedgerEntry(receivedAt: receivedAt, source: source, verdict: .rejected, detail: why, raw: raw), in: session)
    }

    /// ``keep(_:source:why:receivedAt:in:)`` in its own transaction (rolled back when `dryRun`).
    @discardableResult
    public static func keep(
        _ raw: String, source: EventSource, why: String, store: any Store, dryRun: Bool,
        clock: () -> Int64 = Timestamp.now
    ) throws -> Bool {
        let receivedAt = clock()
        return try RetryPolicy.run {
            try store.write(commit: !dryRun) { try keep(raw, source: source, why: why, receivedAt: receivedAt, in: $0) }
        }
    }
}
