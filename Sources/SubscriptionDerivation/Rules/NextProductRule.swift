import IAPFoundation
import SubscriptionModel

/// The next product: the newest renewal info's `autoRenewProductId`, when it is not the current
/// period's product.
///
/// - Selects the newest (``Versioned/isNewer(than:)``) renewal info naming a product.
/// - Keeps the renewal infos signed at or after the newest one naming a product.
enum NextProductRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [CurrentPeriodRule.self] }

    static func select(_ reading: inout FactReading, current: TransactionFacts) -> (next: String?, reason: FieldReason?) {
        let namesNext = { (r: Versioned<RenewalFacts>) in r.value.autoRenewProductId != nil }
        let newest = OrderRule.newestOf(
            reading.renewals.versions(signedSince: reading.renewals.newestSignedDate(where: namesNext)).filter(namesNext))
        var next = newest?.value.autoRenewProductId
        if next == current.productId { next = nil }
        guard let next, let r = newest else { return (nil, nil) }
        return (
            next,
            FieldReason(
                field: "next_product_id", value: next, fact: "renewal info autoRenewProductId", signedDate: r.signedDate, source: r.source)
        )
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        KeptFacts(renewalsSince: reading.renewals.newestSignedDate { $0.value.autoRenewProductId != nil })
    }

    static func selection(_ derived: Derived) -> FieldReason? { derived.contract?.reason("next_product_id") }
}
