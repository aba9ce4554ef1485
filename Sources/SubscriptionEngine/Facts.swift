import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        /// What one notification said about a subscription (key: `originalTransactionId`).
        case notification
    }

    public var kind: Kind
    /// `transactionId` for transactions, `originalTransactionId` otherwise.
    public var key: String
    public var originalTransactionId: String
    /// `signedDate` of the JWS that carried the fact (the notification's for nested payloads).
    public var signedDate: Int64
    /// Who delivered it: Apple's notification, the app (`verify --apply`) or a restore.
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

    /// A stable 64-bit FNV-1a digest of everything in the fact, as 16 hex digits: the same fact
    /// received twice has the same digest, so it is stored once. The app's submissions and restores
    /// count as one source (the same signed payload through either path is one fact); Apple's
    /// notifications are another.
    public var digest: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let origin = source == .apple ? "apple" : "app"
        for byte in "\(kind.rawValue)|\(key)|\(originalTransactionId)|\(signedDate)|\(origin)|\(body)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// What one Apple notification said about a subscription, beyond its payloads.
public struct NotificationFact: Sendable, Equatable, Codable {
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    /// `data.status`: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int?
    /// The transaction the notification carried (the one a REFUND or REVOKE is about).
    public var transactionId: String?

    public init(notificationType: NotificationType, subtype: NotificationSubtype? = nil, status: Int? = nil, transactionId: String? = nil) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.status = status
        self.transactionId = transactionId
    }

    /// `DID_RENEW`, `EXPIRED/VOLUNTARY`.
    public var name: String { subtype.map { "\(notificationType)/\($0)" } ?? notificationType.rawValue }
}

extension SubscriptionEvent {
    /// The facts this event carries, each dated by the JWS that carried it.
    ///
    /// Payloads nested in a notification are dated by the notification's `signedDate` (Apple signs
    /// them together); a client or restore submission by the transaction's own `signedDate`.
    public var facts: [Fact] {
        var out: [Fact] = []
        let original = transaction?.originalTransactionId ?? renewal?.originalTransactionId
        guard let original, !original.isEmpty else { return [] }
        if let tx = transaction {
            let signed = (source == .apple ? signedDate ?? tx.signedDate : tx.signedDate ?? signedDate) ?? 0
            var body = tx
            body.signedDate = nil
            if body.environment == nil { body.environment = environment }
            out.append(
                Fact(
                    kind: .transaction, key: tx.transactionId, originalTransactionId: original, signedDate: signed,
                    source: source, body: FactCoding.encode(body)))
        }
        if let renewal {
            let signed = (source == .apple ? signedDate ?? renewal.signedDate : renewal.signedDate ?? signedDate) ?? 0
            var body = renewal
            body.signedDate = nil
            body.originalTransactionId = nil
            out.append(
                Fact(
                    kind: .renewal, key: original, originalTransactionId: original, signedDate: signed, source: source,
                    body: FactCoding.encode(body)))
        }
        if source == .apple, let type = notificationType {
            let body = NotificationFact(
                notificationType: type, subtype: subtype, status: status, transactionId: transaction?.transactionId)
            out.append(
                Fact(
                    kind: .notification, key: original, originalTransactionId: original, signedDate: signedDate ?? 0,
                    source: source, body: FactCoding.encode(body)))
        }
        return out
    }
}

/// Canonical JSON for fact bodies.
enum FactCoding {
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ body: String, with decoder: JSONDecoder = JSONDecoder()) -> T? {
        try? decoder.decode(type, from: Data(body.utf8))
    }
}
