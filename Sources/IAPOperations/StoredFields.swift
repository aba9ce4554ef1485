import SubscriptionDerivation
import SubscriptionModel

/// What the store's columns hold, checked before any write: a signed item whose fields do not fit
/// (a poison item) is refused on its own — verdict `rejected`, kept in the ledger — instead of
/// failing its transaction, and the same on SQLite (which would store anything) and MySQL (whose
/// strict mode fails the statement).
public enum StoredFields {
    /// Ids, product ids, notification types: `VARCHAR(255)` on MySQL.
    public static let maxId = 255
    /// `environment`: `VARCHAR(32)`.
    public static let maxEnvironment = 32
    /// `currency`: `VARCHAR(16)`.
    public static let maxCurrency = 16

    /// Every stored text field of `event` with its limit, named as Apple names it.
    public static func fields(of event: SubscriptionEvent) -> [(name: String, value: String?, limit: Int)] {
        var fields: [(String, String?, Int)] = [
            ("notificationUUID", event.notificationUUID, maxId),
            ("notificationType", event.notificationType?.rawValue, maxId),
            ("subtype", event.subtype?.rawValue, maxId),
            ("environment", event.environment, maxEnvironment),
        ]
        if let tx = event.transaction {
            fields += [
                ("transactionId", tx.transactionId, maxId),
                ("originalTransactionId", tx.originalTransactionId, maxId),
                ("productId", tx.productId, maxId),
                ("appAccountToken", tx.appAccountToken, maxId),
                ("environment", tx.environment, maxEnvironment),
                ("currency", tx.currency, maxCurrency),
            ]
        }
        if let renewal = event.renewal {
            fields += [
                ("signedRenewalInfo.originalTransactionId", renewal.originalTransactionId, maxId),
                ("autoRenewProductId", renewal.autoRenewProductId, maxId),
                ("signedRenewalInfo.productId", renewal.productId, maxId),
                ("signedRenewalInfo.currency", renewal.currency, maxCurrency),
            ]
        }
        return fields
    }

    /// Why `event` cannot be stored (each field too long, with its length and limit), or nil.
    public static func violation(_ event: SubscriptionEvent) -> String? {
        let problems = fields(of: event).compactMap { field -> String? in
            guard let value = field.value else { return nil }
            let length = value.unicodeScalars.count
            guard length > field.limit else { return nil }
            return "\(field.name) is \(length) characters long (at most \(field.limit) are stored)"
        }
        guard !problems.isEmpty else { return nil }
        return problems.joined(separator: "; ") + ": refused, nothing changed (kept in the ledger as rejected)"
    }

    /// The value when it fits, else nil (a ledger row keeps what fits; the raw JWS keeps all).
    public static func fitting(_ value: String?, _ limit: Int = maxId) -> String? {
        guard let value, value.unicodeScalars.count <= limit else { return nil }
        return value
    }

    /// The ledger row of a refused poison item: its ids that fit, the verdict, why, the raw JWS.
    public static func rejectedEntry(_ event: SubscriptionEvent, detail: String, receivedAt: Int64) -> LedgerEntry {
        let tx = event.transaction
        return LedgerEntry(
            receivedAt: receivedAt, source: event.source, notificationUUID: fitting(event.notificationUUID),
            notificationType: fitting(event.notificationType?.rawValue), subtype: fitting(event.subtype?.rawValue),
            transactionId: fitting(tx?.transactionId),
            originalTransactionId: fitting(tx?.originalTransactionId ?? event.renewal?.originalTransactionId),
            appAccountToken: fitting(tx?.appAccountToken), signedDate: event.signedDate ?? tx?.signedDate,
            verdict: .rejected, detail: detail, raw: event.raw)
    }
}
