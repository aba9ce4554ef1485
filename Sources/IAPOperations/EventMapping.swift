import AppStoreJWS
import SubscriptionEngine

/// Turns verified Apple payloads into the engine's input. The only place that knows both.
public enum EventMapping {
    /// The engine event of a verified report: a notification (source apple) or a transaction
    /// (client or restore submission). Nil for kinds the engine does not take (renewal info alone,
    /// AppTransaction).
    public static func event(from report: VerificationReport, raw: String, source: EventSource) -> SubscriptionEvent? {
        switch report.kind {
        case .notification:
            guard let n = report.notification else { return nil }
            let tx = report.nestedReport("signedTransactionInfo")?.transaction.flatMap(facts)
            let renewal = report.nestedReport("signedRenewalInfo")?.renewalInfo.map(facts)
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
            offerType: r.offerType.map { Int($0.rawValue) }, offerIdentifier: r.offerIdentifier, offerPeriod: r.offerPeriod)
    }
}
