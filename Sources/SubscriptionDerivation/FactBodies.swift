import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
                    source: source, body: FactBody.encode(body)))
        }
        if let renewal {
            let signed = (source == .apple ? signedDate ?? renewal.signedDate : renewal.signedDate ?? signedDate) ?? 0
            var body = renewal
            body.signedDate = nil
            body.originalTransactionId = nil
            out.append(
                Fact(
                    kind: .renewal, key: original, originalTransactionId: original, signedDate: signed, source: source,
                    body: FactBody.encode(body)))
        }
        if source == .apple, let type = notificationType {
            let body = NotificationFact(
                notificationType: type, subtype: subtype, status: status, transactionId: transaction?.transactionId)
            out.append(
                Fact(
                    kind: .notification, key: original, originalTransactionId: original, signedDate: signedDate ?? 0,
                    source: source, body: FactBody.encode(body)))
        }
        if source == .appleAPI, let status {
            let body = NotificationFact(notificationType: nil, status: status, transactionId: transaction?.transactionId)
            let signed = [signedDate, transaction?.signedDate, renewal?.signedDate].compactMap { $0 }.max() ?? 0
            out.append(
                Fact(
                    kind: .notification, key: original, originalTransactionId: original, signedDate: signed,
                    source: source, body: FactBody.encode(body)))
        }
        return out
    }
}
