import IAPFoundation
import SubscriptionModel

/// The current period: the subscription's transaction with the latest purchase that no version
/// marks `isUpgraded` (so an upgrade takes effect at once, a downgrade or crossgrade at the next
/// renewal); it gives the contract's product and expiry.
///
/// - Selects the maximum of the periods by (purchaseDate, expiresDate, transactionId).
/// - Keeps the current period. A pure addition is a period that is not upgraded: it is either the
///   new maximum or beaten by the kept one, so no other period can become current.
enum CurrentPeriodRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [] }

    /// The periods the contract's rules read (the subscription's orders, those not upgraded when
    /// any is not) and the current one; nil when the facts hold no subscription.
    static func select(_ orders: [DerivedOrder]) -> (periods: [DerivedOrder], current: DerivedOrder)? {
        let subscriptions = orders.filter { $0.transaction.isAutoRenewable }
        guard !subscriptions.isEmpty else { return nil }
        let live = subscriptions.filter { $0.transaction.isUpgraded != true }
        let periods = live.isEmpty ? subscriptions : live
        let current = periods.max {
            ($0.transaction.purchaseDate ?? 0, $0.transaction.expiresDate ?? 0, $0.transaction.transactionId)
                < ($1.transaction.purchaseDate ?? 0, $1.transaction.expiresDate ?? 0, $1.transaction.transactionId)
        }!
        return (periods, current)
    }

    /// The reasons of the fields the current period decides.
    static func reasons(_ current: DerivedOrder) -> [FieldReason] {
        let tx = current.transaction
        let txFact = "transaction \(tx.transactionId) (\(tx.productId), purchased \(Timestamp.iso8601(tx.purchaseDate ?? 0)))"
        return [
            FieldReason(
                field: "product_id", value: tx.productId, fact: "current period: " + txFact, signedDate: current.signedDate,
                source: current.source),
            FieldReason(
                field: "expires_date", value: tx.expiresDate.map(Timestamp.iso8601) ?? "∅", fact: "current period: " + txFact,
                signedDate: current.signedDate, source: current.source),
        ]
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        var kept = KeptFacts()
        if let current = derived.contract?.current { kept.transactions.insert(current.transactionId) }
        return kept
    }

    static func selection(_ derived: Derived) -> TransactionFacts? { derived.contract?.current }
}
