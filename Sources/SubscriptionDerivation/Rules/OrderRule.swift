import IAPFoundation
import SubscriptionModel

/// Each transaction's order: its newest signed version, with the revocation rule applied.
///
/// - Selects, per transaction, the newest version (``Versioned/isNewer(than:)``). A refund or
///   revocation stays until a newer version that is Apple's word lifts it (REFUND_REVERSED, or
///   Apple's API answering the transaction unrevoked); the app's or a restore's submission never
///   lifts it. A revocation is a family one (`revoked`, else `refunded`) when a REVOKE notification
///   was about the transaction.
/// - Keeps every revoked transaction (its status depends on REVOKE notifications and on a newer
///   Apple version), the REVOKE notifications, and every transaction without an environment (its
///   row takes the environment of the event that writes it). Any other transaction is a settled
///   period when it is kept by no other rule: a pure addition is a new transaction or a version of
///   a kept one, so its order stays as it is.
enum OrderRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [] }

    /// Every transaction's order, sorted by (purchaseDate, transactionId).
    static func select(_ reading: inout FactReading) -> [DerivedOrder] {
        // The transactions a REVOKE notification was about: read (all notifications) only for a revoked transaction.
        var revokeNoticed: Set<String>?
        var orders: [DerivedOrder] = []
        for (_, versions) in reading.facts.transactions {
            let order = effective(versions) { transactionId in
                if revokeNoticed == nil {
                    revokeNoticed = Set(
                        reading.notes.versions(signedSince: nil).compactMap {
                            $0.value.notificationType == .known(.revoke) ? $0.value.transactionId : nil
                        })
                }
                return revokeNoticed?.contains(transactionId) == true
            }
            guard let order else { continue }
            orders.append(order)
        }
        orders.sort {
            ($0.transaction.purchaseDate ?? 0, $0.transaction.transactionId)
                < ($1.transaction.purchaseDate ?? 0, $1.transaction.transactionId)
        }
        return orders
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        var kept = KeptFacts()
        for order in derived.orders where order.transaction.revocationDate != nil || order.transaction.environment == nil {
            kept.transactions.insert(order.transaction.transactionId)
        }
        for note in reading.notes.versions(signedSince: nil) where note.value.notificationType == .known(.revoke) {
            kept.notificationsAt.insert(note.signedDate)
        }
        return kept
    }

    static func selection(_ derived: Derived) -> [DerivedOrder] { derived.orders }

    /// The orders derived from the kept facts are the full derivation's (the others are settled).
    static func agrees(_ partial: Derived, _ full: Derived) -> Bool {
        let byId = Dictionary(full.orders.map { ($0.transaction.transactionId, $0) }, uniquingKeysWith: { a, _ in a })
        return partial.orders.allSatisfy { byId[$0.transaction.transactionId] == $0 }
    }

    /// The newest version of one transaction, with the revocation rule applied. `revokeNoticed`:
    /// whether a REVOKE notification was about a transaction (asked only of a revoked one).
    static func effective(_ versions: [Versioned<TransactionFacts>], revokeNoticed: (String) -> Bool) -> DerivedOrder? {
        // A StoreKit 1 receipt never revokes: its revocation fields count for nothing. (Copied
        // only when there is one: most transactions have one version, and it is Apple's.)
        let receiptRevokes = versions.contains { $0.value.isFromReceipt && $0.value.revocationDate != nil }
        let versions =
            !receiptRevokes
            ? versions
            : versions.map { v -> Versioned<TransactionFacts> in
                guard v.value.isFromReceipt, v.value.revocationDate != nil else { return v }
                var cleared = v
                cleared.value.revocationDate = nil
                cleared.value.revocationReason = nil
                cleared.value.revocationType = nil
                cleared.value.revocationPercentage = nil
                return cleared
            }
        guard let newest = newestOf(versions) else { return nil }
        var tx = newest.value
        if tx.revocationDate == nil, let revoked = newestOf(versions.filter { $0.value.revocationDate != nil }) {
            let lifted = versions.contains {
                $0.source.isApple && $0.value.revocationDate == nil && $0.signedDate > revoked.signedDate
            }
            if !lifted {
                tx.revocationDate = revoked.value.revocationDate
                tx.revocationReason = revoked.value.revocationReason
                tx.revocationType = revoked.value.revocationType
                tx.revocationPercentage = revoked.value.revocationPercentage
            }
        }
        if versions.contains(where: { $0.value.isUpgraded == true }) { tx.isUpgraded = true }
        // The order a restore linked (its product fallback records the order's number as the
        // token) holds when a newer version carries no token: Apple's copy of a purchase made
        // without one never names an order, so it cannot undo the link.
        if tx.appAccountToken?.isEmpty ?? true,
            let linked = newestOf(versions.filter { $0.source == .restore && !($0.value.appAccountToken?.isEmpty ?? true) })
        {
            tx.appAccountToken = linked.value.appAccountToken
        }
        let status: OrderStatus
        if tx.revocationDate == nil {
            status = .paid
        } else {
            let family =
                tx.revocationType == .known(.familyRevoke) || tx.inAppOwnershipType == .known(.familyShared)
                || revokeNoticed(tx.transactionId)
            status = family ? .revoked : .refunded
        }
        return DerivedOrder(
            transaction: tx, status: status, signedDate: newest.signedDate, source: newest.source,
            onlyFromReceipts: versions.allSatisfy { $0.value.isFromReceipt })
    }

    static func newestOf<V>(_ versions: [Versioned<V>]) -> Versioned<V>? {
        versions.max { $1.isNewer(than: $0) }
    }
}
