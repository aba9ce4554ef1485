import SubscriptionModel

/// The end of the billing grace period: the newest renewal info's `gracePeriodExpiresDate`,
/// shown while the status is `gracePeriod`.
///
/// - Selects the newest (``Versioned/isNewer(than:)``) renewal info.
/// - Keeps the renewal infos signed at or after the newest one.
enum GracePeriodRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [StatusRule.self] }

    static func select(_ reading: inout FactReading) -> Int64? {
        OrderRule.newestOf(reading.renewals.versions(signedSince: reading.renewals.newestSignedDate()))?.value.gracePeriodExpiresDate
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        KeptFacts(renewalsSince: reading.renewals.newestSignedDate())
    }

    static func selection(_ derived: Derived) -> Int64? { derived.contract?.gracePeriodExpiresDate }
}
