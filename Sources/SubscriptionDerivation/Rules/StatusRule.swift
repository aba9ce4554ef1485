import IAPFoundation
import SubscriptionModel

/// The contract's status: the newest statement about the subscription.
///
/// - Selects the newest of (a) Apple's `data.status` of each notification (or the `status` Apple's
///   API answered), or what its type/subtype implies when it carries none, and (b) a paid period's
///   payment (`active`), dated by ``paymentEvidenceTime(_:)``; at the same moment Apple's statement
///   wins, and ties are broken by content, never by arrival order. A revoked current period is
///   `revoked` whatever was said after (only a newer Apple version lifts it). Auto-renew toggles
///   carry no status of their own; `active` with auto-renew off is `canceled` (``AutoRenewRule``).
///   A subscription known only from StoreKit 1 receipts has the proven period's status.
/// - Its bound: the newest payment, or the newest notification saying a status signed at or after
///   it. Keeps the periods with the newest payment (ties included), every notification signed at
///   or after the bound, and every REFUND, REVOKE and REFUND_REVERSED notification (what they say
///   depends on which period is current, which an added period changes).
enum StatusRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [OrderRule.self, CurrentPeriodRule.self, AutoRenewRule.self] }

    /// The status decided, and why; before auto-renew is applied (`active`, not yet `canceled`).
    struct Decision {
        var status: ContractStatus
        /// nil: no statement yet.
        var reason: FieldReason?
        /// Decided by the proven period of receipts alone (no Apple statement).
        var fromReceipts: Bool
    }

    static func select(
        periods: [DerivedOrder], current: DerivedOrder, reading: inout FactReading, now: Int64?
    ) -> Decision {
        let tx = current.transaction
        // A statement's reason is worded only for the one that decides (or to break a tie): most
        // of a long history never is.
        enum Said {
            /// A notification, with Apple's data.status when it gave one.
            case note(Versioned<NotificationFact>, dataStatus: Int?)
            /// `periods[index]`, paid.
            case paid(Int)
            case other(FieldReason)
        }
        struct Candidate {
            var time: Int64
            var priority: Int
            var status: ContractStatus
            var said: Said
        }
        func reason(_ c: Candidate) -> FieldReason {
            switch c.said {
            case .note(let note, let raw):
                let n = note.value
                let fact = raw.map { "\(n.name): Apple's data.status \($0)" } ?? "\(n.name) (no data.status; the type implies it)"
                return FieldReason(field: "status", value: c.status.rawValue, fact: fact, signedDate: note.signedDate, source: note.source)
            case .paid(let index):
                let period = periods[index]
                let t = period.transaction
                return FieldReason(
                    field: "status", value: "active",
                    fact: "paid period \(t.transactionId) purchased \(Timestamp.iso8601(t.purchaseDate ?? 0))",
                    signedDate: period.signedDate, source: period.source)
            case .other(let reason):
                return reason
            }
        }
        var paid: [Candidate] = []
        for (index, period) in periods.enumerated() where isPayment(period) {
            paid.append(Candidate(time: paymentEvidenceTime(period), priority: 0, status: .active, said: .paid(index)))
        }
        let newestPayment = paid.map(\.time).max()
        let statusBound = bound(newestPayment: newestPayment, current: tx, notes: &reading.notes)
        var candidates: [Candidate] = []
        for note in reading.notes.versions(signedSince: statusBound) {
            guard let (status, raw) = said(note, current: tx) else { continue }
            candidates.append(Candidate(time: note.signedDate, priority: 1, status: status, said: .note(note, dataStatus: raw)))
        }
        candidates += paid
        // Ties (two statements signed at the same moment) are broken by their content, never by arrival order.
        var decided = candidates.max { a, b in
            if (a.time, a.priority, a.status.rawValue) != (b.time, b.priority, b.status.rawValue) {
                return (a.time, a.priority, a.status.rawValue) < (b.time, b.priority, b.status.rawValue)
            }
            return reason(a).fact < reason(b).fact
        }
        // The current period's refund or revocation is final until a newer Apple version of that
        // transaction lifts it (then it is no longer revoked here): whatever status was said after.
        if let revoked = tx.revocationDate, decided?.status != .revoked {
            decided = Candidate(
                time: revoked, priority: 2, status: .revoked,
                said: .other(
                    FieldReason(
                        field: "status", value: "revoked",
                        fact: "current period \(tx.transactionId) \(current.status.rawValue) \(Timestamp.iso8601(revoked))",
                        signedDate: current.signedDate, source: current.source)))
        }
        var status = decided?.status ?? .active
        // Known only from receipts: a receipt proves a period, not a state.
        let fromReceipts = decided == nil && current.onlyFromReceipts
        if fromReceipts {
            let running = tx.expiresDate.map { end in now.map { $0 < end } ?? true } ?? true
            status = running ? .active : .expired
            decided = Candidate(
                time: tx.purchaseDate ?? 0, priority: 0, status: status,
                said: .other(
                    FieldReason(
                        field: "status", value: status.rawValue,
                        fact: "app receipt period \(tx.transactionId) \(running ? "still running" : "ended") (no Apple statement yet)",
                        signedDate: current.signedDate, source: current.source)))
        }
        return Decision(status: status, reason: decided.map(reason), fromReceipts: fromReceipts)
    }

    /// Whether a period is a payment candidate: paid (not revoked), dated, not known only from receipts.
    static func isPayment(_ period: DerivedOrder) -> Bool {
        !period.onlyFromReceipts && period.transaction.revocationDate == nil && period.transaction.purchaseDate != nil
    }

    /// What a notification says of the status (Apple's data.status, else what its type implies), if anything.
    static func said(_ note: Versioned<NotificationFact>, current: TransactionFacts) -> (status: ContractStatus, dataStatus: Int?)? {
        if let raw = note.value.status, let status = appleStatus(raw) { return (status, raw) }
        return inferred(note.value, current: current).map { ($0, nil) }
    }

    /// The newest statement is signed no earlier than the newest notification that says a status
    /// or the newest payment: notifications signed before that cannot decide (not decoded).
    static func bound(newestPayment: Int64?, current: TransactionFacts, notes: inout VersionReader<NotificationFact>) -> Int64? {
        let newestStatement = notes.newestSignedDate(notBefore: newestPayment) { said($0, current: current) != nil }
        return [newestPayment, newestStatement].compactMap { $0 }.max()
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        var kept = KeptFacts()
        guard let contract = derived.contract, let periods = CurrentPeriodRule.select(derived.orders)?.periods else { return kept }
        let payments = periods.filter(isPayment).map { ($0.transaction.transactionId, paymentEvidenceTime($0)) }
        let newestPayment = payments.map(\.1).max()
        for (id, time) in payments where time == newestPayment { kept.transactions.insert(id) }
        kept.notificationsSince = bound(newestPayment: newestPayment, current: contract.current, notes: &reading.notes)
        for note in reading.notes.versions(signedSince: nil) {
            switch note.value.notificationType {
            case .known(.refund)?, .known(.revoke)?, .known(.refundReversed)?: kept.notificationsAt.insert(note.signedDate)
            default: break
            }
        }
        return kept
    }

    static func selection(_ derived: Derived) -> FieldReason? { derived.contract?.reason("status") }

    /// When a paid period is evidence of `active`: when Apple signed it, kept within the period. A
    /// period signed before it starts (Apple signs DID_RENEW ahead of the new period) counts from
    /// its purchase; one signed after it ended (a restore or history answer of an old period) only
    /// until its end, so it never outweighs what Apple said after that end. A period recovered
    /// within the billing grace period starts at the original renewal date, before the
    /// DID_FAIL_TO_RENEW that started grace, but is signed after it: it ends grace whoever sent it.
    static func paymentEvidenceTime(_ period: DerivedOrder) -> Int64 {
        let t = period.transaction
        let purchased = t.purchaseDate ?? 0
        var time = Swift.max(purchased, period.signedDate)
        if let expires = t.expiresDate { time = Swift.min(time, Swift.max(purchased, expires)) }
        return time
    }

    /// Apple's `data.status`.
    static func appleStatus(_ raw: Int) -> ContractStatus? {
        switch raw {
        case 1: return .active
        case 2: return .expired
        case 3: return .billingRetry
        case 4: return .gracePeriod
        case 5: return .revoked
        default: return nil
        }
    }

    /// What a notification's type/subtype says of the subscription's state, when it has no `data.status`.
    static func inferred(_ n: NotificationFact, current: TransactionFacts) -> ContractStatus? {
        guard case .known(let type) = n.notificationType else { return nil }
        switch type {
        case .subscribed, .didRenew, .offerRedeemed, .renewalExtended: return .active
        case .didChangeRenewalPref: return n.subtype == .known(.upgrade) ? .active : nil
        case .didFailToRenew: return n.subtype == .known(.gracePeriod) ? .gracePeriod : .billingRetry
        case .gracePeriodExpired: return .billingRetry
        case .expired: return .expired
        case .refund, .revoke: return n.transactionId == current.transactionId ? .revoked : nil
        case .refundReversed: return n.transactionId == current.transactionId ? .active : nil
        default: return nil
        }
    }
}
