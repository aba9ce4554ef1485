/// One signed fact the engine keeps: a version of a transaction, of a subscription's renewal info,
/// or what a notification said about a subscription (its `data.status` and type/subtype).
///
/// Facts are only ever added. Every version is kept with the `signedDate` of the JWS that carried
/// it; the derivation (``Derivation``) takes the newest signed version of each, so the rows are the
/// same whatever order the facts arrived in.
public struct Fact: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A version of one transaction (key: `transactionId`).
        case transaction
        /// A version of one subscription's renewal info (key: `originalTransactionId`).
        case renewal
        /// What Apple said about a subscription (key: `originalTransactionId`): one notification's
        /// type, subtype and `data.status`, or the `status` of a Get All Subscription Statuses answer.
        case notification
    }

    public var kind: Kind
    /// `transactionId` for transactions, `originalTransactionId` otherwise.
    public var key: String
    public var originalTransactionId: String
    /// `signedDate` of the JWS that carried the fact (the notification's for nested payloads).
    public var signedDate: Int64
    /// Who delivered it: Apple's notification, Apple's API answer, the app (`verify --apply`) or a restore.
    public var source: EventSource
    /// The fact's fields as canonical JSON (sorted keys).
    public var body: String

    public init(kind: Kind, key: String, originalTransactionId: String, signedDate: Int64, source: EventSource, body: String) {
        self.kind = kind
        self.key = key
        self.originalTransactionId = originalTransactionId
        self.signedDate = signedDate
        self.source = source
        self.body = body
    }

    /// Who delivered it, as far as identity goes: the app's submissions and restores count as one
    /// source (the same signed payload through either path is one fact); Apple's notifications are
    /// another, and Apple's API answers a third.
    public var origin: String { source.isApple ? (source == .apple ? "apple" : "apple_api") : "app" }

    /// Everything that makes the fact what it is, as one text: `kind|key|original|signedDate|origin|body`.
    /// The same fact received twice has the same identity, so the store keeps it once (under the
    /// SHA-256 of this text: `FactDigest` in StoreSQL).
    public var identity: String { "\(kind.rawValue)|\(key)|\(originalTransactionId)|\(signedDate)|\(origin)|\(body)" }

    /// Whether `other` is the same fact (the same ``identity``), compared field by field.
    public func isSameFact(as other: Fact) -> Bool {
        kind == other.kind && signedDate == other.signedDate && key == other.key
            && originalTransactionId == other.originalTransactionId && origin == other.origin && body == other.body
    }
}
