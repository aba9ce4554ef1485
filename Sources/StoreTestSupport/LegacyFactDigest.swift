import SubscriptionModel

/// Facts as a schema-v6 database kept them: under the 64-bit FNV-1a digest iapctl used before the
/// facts' digest became SHA-256 (the migration tests build such a database and upgrade it).
public enum LegacyFactDigest {
    /// The old digest: FNV-1a of `kind|key|original|signedDate|origin|body`, as 16 hex digits.
    public static func fnv1a(_ fact: Fact) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let origin = fact.source.isApple ? (fact.source == .apple ? "apple" : "apple_api") : "app"
        let text = "\(fact.kind.rawValue)|\(fact.key)|\(fact.originalTransactionId)|\(fact.signedDate)|\(origin)|\(fact.body)"
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Facts of every kind and source, one per key, with a non-ASCII body and a negative date.
    public static let samples: [Fact] = [
        Fact(
            kind: .transaction, key: "t-1", originalTransactionId: "o-1", signedDate: 1_700_000_000_000, source: .apple,
            body: FactBody.encode(
                TransactionFacts(transactionId: "t-1", originalTransactionId: "o-1", productId: "com.example.monthly", price: 9990))),
        Fact(
            kind: .renewal, key: "o-1", originalTransactionId: "o-1", signedDate: 1_700_000_000_001, source: .appleAPI,
            body: FactBody.encode(RenewalFacts(autoRenewStatus: 1))),
        Fact(
            kind: .notification, key: "o-2", originalTransactionId: "o-2", signedDate: -5, source: .apple,
            body: FactBody.encode(NotificationFact(notificationType: .known(.didRenew), status: 1))),
        Fact(
            kind: .transaction, key: "t-3", originalTransactionId: "o-3", signedDate: 42, source: .client,
            body: FactBody.encode(
                TransactionFacts(transactionId: "t-3", originalTransactionId: "o-3", productId: "été €", currency: "EUR"))),
        Fact(
            kind: .transaction, key: "t-4", originalTransactionId: "o-4", signedDate: 43, source: .restore,
            body: FactBody.encode(TransactionFacts(transactionId: "t-4", originalTransactionId: "o-4", productId: "p"))),
    ]

    /// `INSERT` of `fact` under its old digest (SQL text; the samples hold no single quote).
    public static func insertStatement(_ fact: Fact) -> String {
        "INSERT INTO iap_facts (kind, fact_key, original_transaction_id, signed_date, source, digest, body) VALUES ('"
            + [fact.kind.rawValue, fact.key, fact.originalTransactionId].joined(separator: "', '") + "', \(fact.signedDate), '"
            + [fact.source.rawValue, fnv1a(fact), fact.body].joined(separator: "', '") + "')"
    }
}
