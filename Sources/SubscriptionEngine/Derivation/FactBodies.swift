import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What Apple said about a subscription, beyond its payloads: one notification (its type, subtype
/// and `data.status`), or — with no type — the `status` of one subscription in a Get All Subscription
/// Statuses answer iapctl fetched itself.
public struct NotificationFact: Sendable, Equatable, Codable {
    /// nil for a status Apple's API answered (no notification).
    public var notificationType: NotificationType?
    public var subtype: NotificationSubtype?
    /// `data.status` (or the API's `status`): 1 active, 2 expired, 3 billing retry, 4 billing grace
    /// period, 5 revoked.
    public var status: Int?
    /// The transaction the notification carried (the one a REFUND or REVOKE is about), or the
    /// subscription's latest transaction in a status answer.
    public var transactionId: String?

    public init(
        notificationType: NotificationType?, subtype: NotificationSubtype? = nil, status: Int? = nil,
        transactionId: String? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.status = status
        self.transactionId = transactionId
    }

    /// `DID_RENEW`, `EXPIRED/VOLUNTARY`; `subscription status` for an API answer.
    public var name: String {
        guard let notificationType else { return "subscription status" }
        return subtype.map { "\(notificationType)/\($0)" } ?? notificationType.rawValue
    }
}

extension SubscriptionEvent {
    /// The facts this event carries, each dated by the JWS that carried it.
    ///
    /// Payloads nested in a notification are dated by the notification's `signedDate` (Apple signs
    /// them together); a client or restore submission, and an API answer, by each payload's own
    /// `signedDate` (when Apple signed it), whatever path it came by. A status Apple's API answered
    /// is dated by the newest of the answer's signed payloads.
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
        if source == .appleAPI, let status {
            let body = NotificationFact(notificationType: nil, status: status, transactionId: transaction?.transactionId)
            let signed = [signedDate, transaction?.signedDate, renewal?.signedDate].compactMap { $0 }.max() ?? 0
            out.append(
                Fact(
                    kind: .notification, key: original, originalTransactionId: original, signedDate: signed,
                    source: source, body: FactCoding.encode(body)))
        }
        return out
    }
}

/// Canonical JSON for fact bodies.
enum FactCoding {
    static func encode<T: Encodable>(_ value: T) -> String {
        if let body = CanonicalFactEncoding.encode(value) { return body }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A transaction in its canonical shape through ``CanonicalTransactionBody``; otherwise through
    /// ``FactBodyDecoder`` (IAPFoundation's parser); a body it refuses through `JSONDecoder`, as before.
    static func decode<T: Decodable>(_ type: T.Type, _ body: String) -> T? {
        if T.self == TransactionFacts.self, let tx = CanonicalTransactionBody.decode(body) { return tx as? T }
        return FactBodyDecoder.decode(type, body) ?? foundationDecode(type, body)
    }

    /// Foundation's `JSONDecoder`: what every body was decoded by before ``FactBodyDecoder``.
    static func foundationDecode<T: Decodable>(_ type: T.Type, _ body: String) -> T? {
        try? JSONDecoder().decode(type, from: Data(body.utf8))
    }
}
