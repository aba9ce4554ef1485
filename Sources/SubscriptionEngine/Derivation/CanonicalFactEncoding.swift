import IAPFoundation
import SubscriptionModel

/// The canonical JSON of the engine's fact bodies (transactions, renewal infos, notifications)
/// written member by member, without `JSONEncoder`: byte for byte what `JSONEncoder` with
/// `.sortedKeys` writes for them (keys in sorted order, nil members left out, strings escaped as
/// it escapes them: ``JSONWriter/Escaping/foundation``). Every event encodes one to three bodies,
/// and the generic encoder was about 5 % of the writer's CPU per notification.
/// `CanonicalFactEncodingTests` holds it to `JSONEncoder` on random values of each type.
enum CanonicalFactEncoding {
    /// The body of a value of one of the three fact types; nil for any other type.
    static func encode<T: Encodable>(_ value: T) -> String? {
        if let transaction = value as? TransactionFacts { return encode(transaction) }
        if let renewal = value as? RenewalFacts { return encode(renewal) }
        if let notification = value as? NotificationFact { return encode(notification) }
        return nil
    }

    /// Every stored property of `TransactionFacts`, keys sorted (``CanonicalTransactionBody/keys``).
    static func encode(_ t: TransactionFacts) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 512)
        w.addIfPresent("appAccountToken", t.appAccountToken)
        w.addIfPresent("appTransactionId", t.appTransactionId)
        w.addIfPresent("currency", t.currency)
        w.addIfPresent("environment", t.environment)
        w.addIfPresent("expiresDate", t.expiresDate)
        w.addIfPresent("inAppOwnershipType", t.inAppOwnershipType?.rawValue)
        w.add("isFromReceipt", t.isFromReceipt)
        w.addIfPresent("isUpgraded", t.isUpgraded)
        w.addIfPresent("offerIdentifier", t.offerIdentifier)
        w.addIfPresent("offerPeriod", t.offerPeriod)
        w.addIfPresent("offerType", t.offerType.map(Int64.init))
        w.addIfPresent("originalPurchaseDate", t.originalPurchaseDate)
        w.add("originalTransactionId", t.originalTransactionId)
        w.addIfPresent("price", t.price)
        w.add("productId", t.productId)
        w.addIfPresent("purchaseDate", t.purchaseDate)
        w.addIfPresent("revocationDate", t.revocationDate)
        w.addIfPresent("revocationPercentage", t.revocationPercentage.map(Int64.init))
        w.addIfPresent("revocationReason", t.revocationReason.map(Int64.init))
        w.addIfPresent("revocationType", t.revocationType?.rawValue)
        w.addIfPresent("signedDate", t.signedDate)
        w.add("transactionId", t.transactionId)
        w.addIfPresent("transactionReason", t.transactionReason?.rawValue)
        w.addIfPresent("type", t.type?.rawValue)
        return w.json
    }

    /// Every stored property of `RenewalFacts`, keys sorted.
    static func encode(_ r: RenewalFacts) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 256)
        w.addIfPresent("autoRenewProductId", r.autoRenewProductId)
        w.addIfPresent("autoRenewStatus", r.autoRenewStatus.map(Int64.init))
        w.addIfPresent("currency", r.currency)
        w.addIfPresent("expirationIntent", r.expirationIntent.map(Int64.init))
        w.addIfPresent("gracePeriodExpiresDate", r.gracePeriodExpiresDate)
        w.addIfPresent("isInBillingRetryPeriod", r.isInBillingRetryPeriod)
        w.addIfPresent("offerIdentifier", r.offerIdentifier)
        w.addIfPresent("offerPeriod", r.offerPeriod)
        w.addIfPresent("offerType", r.offerType.map(Int64.init))
        w.addIfPresent("originalTransactionId", r.originalTransactionId)
        w.addIfPresent("priceIncreaseStatus", r.priceIncreaseStatus.map(Int64.init))
        w.addIfPresent("productId", r.productId)
        w.addIfPresent("renewalDate", r.renewalDate)
        w.addIfPresent("renewalPrice", r.renewalPrice)
        w.addIfPresent("signedDate", r.signedDate)
        return w.json
    }

    /// Every stored property of `NotificationFact`, keys sorted.
    static func encode(_ n: NotificationFact) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 128)
        w.addIfPresent("notificationType", n.notificationType?.rawValue)
        w.addIfPresent("status", n.status.map(Int64.init))
        w.addIfPresent("subtype", n.subtype?.rawValue)
        w.addIfPresent("transactionId", n.transactionId)
        return w.json
    }
}
