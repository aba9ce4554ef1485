import AppStoreJWS
import SubscriptionDerivation
import SubscriptionModel

/// Turns verified Apple payloads into the engine's input. The only place that knows both.
public enum EventMapping {
    /// The engine event of a verified report: a notification (source apple) or a transaction
    /// (client or restore submission). Nil for kinds the engine does not take (renewal info alone,
    /// AppTransaction).
    public static func event(from report: VerificationReport, raw: String, source: EventSource) -> SubscriptionEvent? {
        switch report.kind {
        case .notification:
            guard let n = report.notification else { return nil }
            let tx = report.nestedTransaction.flatMap(facts)
            let renewal = report.nestedRenewalInfo.map(facts)
            return SubscriptionEvent(
                source: .apple, notificationUUID: n.notificationUUID, notificationType: n.notificationType,
                subtype: n.subtype, signedDate: n.signedDate, environment: report.environment,
                bundleId: n.appIdentity?.bundleId, transaction: tx, renewal: renewal, raw: raw,
                status: n.data?.status.map(Int.init))
        case .transaction:
            guard let t = report.transaction, let tx = facts(t) else { return nil }
            return SubscriptionEvent(
                source: source, signedDate: t.signedDate, environment: t.environment ?? report.environment,
                bundleId: t.bundleId, transaction: tx, raw: raw)
        default:
            return nil
        }
    }

    /// The engine's view of a signed transaction; nil when it lacks the ids the engine needs.
    public static func facts(_ t: TransactionPayload) -> TransactionFacts? {
        guard let id = t.transactionId, !id.isEmpty, let original = t.originalTransactionId, !original.isEmpty,
            let product = t.productId
        else { return nil }
        return TransactionFacts(
            transactionId: id, originalTransactionId: original, productId: product,
            appAccountToken: t.appAccountToken.flatMap { $0.isEmpty ? nil : $0 },
            purchaseDate: t.purchaseDate, originalPurchaseDate: t.originalPurchaseDate, expiresDate: t.expiresDate,
            revocationDate: t.revocationDate, revocationReason: t.revocationReason.map(Int.init), type: t.type,
            environment: t.environment, price: t.price, currency: t.currency, signedDate: t.signedDate,
            transactionReason: t.transactionReason, isUpgraded: t.isUpgraded, revocationType: t.revocationType,
            revocationPercentage: t.revocationPercentage.map(Int.init), inAppOwnershipType: t.inAppOwnershipType,
            offerType: t.offerType.map { Int($0.rawValue) }, offerIdentifier: t.offerIdentifier, offerPeriod: t.offerPeriod,
            appTransactionId: t.appTransactionId)
    }

    public static func facts(_ r: RenewalInfoPayload) -> RenewalFacts {
        RenewalFacts(
            originalTransactionId: r.originalTransactionId, autoRenewStatus: r.autoRenewStatus.map(Int.init),
            autoRenewProductId: r.autoRenewProductId, productId: r.productId,
            gracePeriodExpiresDate: r.gracePeriodExpiresDate, isInBillingRetryPeriod: r.isInBillingRetryPeriod,
            expirationIntent: r.expirationIntent.map(Int.init), signedDate: r.signedDate, renewalDate: r.renewalDate,
            offerType: r.offerType.map { Int($0.rawValue) }, offerIdentifier: r.offerIdentifier, offerPeriod: r.offerPeriod,
            priceIncreaseStatus: r.priceIncreaseStatus.map(Int.init), renewalPrice: r.renewalPrice, currency: r.currency)
    }
}

// The events of Get All Subscription Statuses (`apple reconcile` makes them; ``FactRebuild`` reads
// kept ones back).
extension EventMapping {
    /// The event of one subscription of Get All Subscription Statuses: its latest transaction, its
    /// renewal info and Apple's `status`, dated by the newest of its signed payloads; `raw` is the
    /// `lastTransactions` item as Apple sent it (what the ledger keeps and ``FactRebuild`` reads back).
    public static func statusEvent(
        _ transaction: TransactionPayload, _ renewal: RenewalInfoPayload?, status: Int, raw: String
    ) -> SubscriptionEvent? {
        guard let tx = EventMapping.facts(transaction) else { return nil }
        let signed = [transaction.signedDate, renewal?.signedDate].compactMap { $0 }.max()
        return SubscriptionEvent(
            source: .appleAPI, signedDate: signed, environment: transaction.environment, bundleId: transaction.bundleId,
            transaction: tx, renewal: renewal.map(EventMapping.facts), raw: raw, status: status)
    }

    /// The status event a kept `lastTransactions` item (``statusEvent(_:_:status:raw:)``'s `raw`)
    /// carried, decoded without verification (it was verified when it was fetched); nil when `raw` is
    /// not such an item.
    public static func storedStatusEvent(_ raw: String) -> SubscriptionEvent? {
        guard raw.utf8.first == UInt8(ascii: "{"), let json = try? JSONParser.parse(Array(raw.utf8)),
            let status = json["status"]?.int64Value, let signed = json["signedTransactionInfo"]?.stringValue,
            let transaction = FactRebuild.payload(signed).flatMap({ try? TransactionPayload(json: $0) })
        else { return nil }
        let renewal = json["signedRenewalInfo"]?.stringValue.flatMap(FactRebuild.payload).flatMap {
            try? RenewalInfoPayload(json: $0)
        }
        return statusEvent(transaction, renewal, status: Int(status), raw: raw)
    }
}
