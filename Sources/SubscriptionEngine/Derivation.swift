import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One version of a fact: its value and the JWS that carried it.
public struct Versioned<Value: Sendable & Equatable>: Sendable, Equatable {
    public var value: Value
    public var signedDate: Int64
    public var source: EventSource
    /// The stored body, the last tie-breaker between versions signed at the same moment.
    var body: String

    /// Newer: later `signedDate`; at the same moment Apple's word (a notification or an API answer)
    /// before a restore before the app's submission; then the body, so the choice never depends on
    /// arrival order.
    func isNewer(than other: Versioned) -> Bool {
        if signedDate != other.signedDate { return signedDate > other.signedDate }
        if source.authority != other.source.authority { return source.authority > other.source.authority }
        return body > other.body
    }
}

extension EventSource {
    /// Apple's word first (pushed or pulled), then restore, then the app's own submissions.
    var authority: Int {
        switch self {
        case .apple, .appleAPI: return 2
        case .restore: return 1
        case .client: return 0
        }
    }
}

/// Every fact known about one subscription (or one-time purchase), optionally only those signed by a time.
public struct FactSet: Sendable, Equatable {
    /// Every version of each transaction, by `transactionId`.
    public var transactions: [String: [Versioned<TransactionFacts>]] = [:]
    public var renewals: [Versioned<RenewalFacts>] = []
    public var notifications: [Versioned<NotificationFact>] = []

    /// - Parameter cutoff: keep only facts signed at or before it (what was known then).
    public init(_ facts: [Fact], signedBy cutoff: Int64? = nil) {
        add(facts, signedBy: cutoff)
    }

    /// Adds more facts (those signed after `cutoff`, if given, are left out).
    public mutating func add(_ facts: [Fact], signedBy cutoff: Int64? = nil) {
        for fact in facts where cutoff == nil || fact.signedDate <= cutoff! {
            switch DecodedFacts.decode(fact) {
            case .transaction(let tx):
                transactions[fact.key, default: []].append(
                    Versioned(value: tx, signedDate: fact.signedDate, source: fact.source, body: fact.body))
            case .renewal(let renewal):
                renewals.append(Versioned(value: renewal, signedDate: fact.signedDate, source: fact.source, body: fact.body))
            case .notification(let note):
                notifications.append(Versioned(value: note, signedDate: fact.signedDate, source: fact.source, body: fact.body))
            case .unreadable: continue
            }
        }
    }

    public var isEmpty: Bool { transactions.isEmpty && renewals.isEmpty && notifications.isEmpty }

    /// The newest signed date of any fact.
    public var newestSignedDate: Int64? { newestSignedDate(excludingReceipts: false) }

    /// The newest signed date of any fact, optionally leaving out StoreKit 1 receipt entries.
    public func newestSignedDate(excludingReceipts: Bool) -> Int64? {
        let transactionDates = transactions.values.flatMap { versions in
            versions.filter { !(excludingReceipts && $0.value.isFromReceipt) }.map(\.signedDate)
        }
        return (transactionDates + renewals.map(\.signedDate) + notifications.map(\.signedDate)).max()
    }
}

/// Fact bodies decoded. Every event reads all facts of its subscription again; a per-process cache
/// of decoded bodies (issue 17) cost more than ``FactBodyDecoder`` itself once bodies no longer went
/// through `JSONDecoder` (hashing and inserting each ~500-byte body: 14 % of a long history's run
/// against 13 % for decoding), and it never helps a webhook's one-notification process (issue 25).
enum DecodedFacts {
    enum Value: Sendable {
        case transaction(TransactionFacts)
        case renewal(RenewalFacts)
        case notification(NotificationFact)
        case unreadable
    }

    static func decode(_ fact: Fact) -> Value {
        switch fact.kind {
        case .transaction: FactCoding.decode(TransactionFacts.self, fact.body).map { .transaction($0) } ?? .unreadable
        case .renewal: FactCoding.decode(RenewalFacts.self, fact.body).map { .renewal($0) } ?? .unreadable
        case .notification: FactCoding.decode(NotificationFact.self, fact.body).map { .notification($0) } ?? .unreadable
        }
    }
}

/// Which fact decided a field, for `contracts explain` and `entitled`.
public struct FieldReason: Sendable, Equatable {
    public var field: String
    public var value: String
    /// The fact, in words (`EXPIRED/VOLUNTARY data.status 2`, `transaction 2000… purchased …`).
    public var fact: String
    /// When the JWS carrying it was signed (nil for defaults).
    public var signedDate: Int64?
    public var source: EventSource?
}

/// One transaction as the newest facts say, and the order status it gives.
public struct DerivedOrder: Sendable, Equatable {
    /// The newest version (a revocation kept unless a newer Apple version lifted it; `isUpgraded` once seen).
    public var transaction: TransactionFacts
    public var status: OrderStatus
    /// signedDate of the newest version.
    public var signedDate: Int64
    public var source: EventSource
    /// Known only from StoreKit 1 receipt entries (lower authority: they prove a payment, not a state).
    public var onlyFromReceipts: Bool = false
}

/// A subscription's contract fields as the newest facts say.
public struct DerivedContract: Sendable, Equatable {
    public var productId: String
    public var status: ContractStatus
    public var autoRenew: Bool
    public var expiresDate: Int64?
    public var nextProductId: String?
    public var environment: String?
    /// The current period: the newest purchase not superseded by an upgrade.
    public var current: TransactionFacts
    /// From the newest renewal info, while in the billing grace period.
    public var gracePeriodExpiresDate: Int64?
    /// The newest signedDate of any fact that is not a receipt entry (nil when only receipts are known).
    public var newestSignedDate: Int64?
    /// Whether the status was decided by the proven period of receipts alone (no Apple statement).
    public var statusFromReceipts: Bool = false
    /// Which fact decided each field.
    public var reasons: [FieldReason]

    public func reason(_ field: String) -> FieldReason? { reasons.first { $0.field == field } }
}

/// The rows the facts give: one order per transaction and, for subscriptions, the contract.
public struct Derived: Sendable, Equatable {
    public var contract: DerivedContract?
    public var orders: [DerivedOrder]

    /// The row values alone (not which fact decided them), to tell whether new facts change the rows.
    var rows: [String] {
        let c = contract.map { c in
            "\(c.productId)|\(c.status.rawValue)|\(c.autoRenew)|\(c.expiresDate ?? -1)|\(c.nextProductId ?? "")|\(c.environment ?? "")"
        }
        return [c ?? "-"]
            + orders.map { o in
                let t = o.transaction
                return "\(t.transactionId)|\(o.status.rawValue)|\(t.productId)|\(t.purchaseDate ?? -1)|\(t.expiresDate ?? -1)|"
                    + "\(t.price ?? -1)|\(t.currency ?? "")|\(t.environment ?? "")"
            }
    }
}

/// The one pure function from signed facts to rows. The engine stores its output; `entitled --at`
/// and `contracts explain` call it on the facts signed by then.
///
/// - Transactions: the newest signed version of each wins. A refund or revocation stays until a
///   newer version that is Apple's word lifts it (REFUND_REVERSED, or Apple's API answering the
///   transaction unrevoked); the app's or a restore's submission never lifts it.
/// - Current period: the subscription's transaction with the latest purchase that no newer version
///   marks `isUpgraded` (so an upgrade takes effect at once, a downgrade or crossgrade at the next renewal).
/// - Status: the newest of (a) Apple's `data.status` of each notification (or the `status` Apple's
///   API answered), or what its type/subtype implies when it carries none, and (b) a paid period's
///   payment (`active`), dated by when Apple signed it — whatever path it came by — within its
///   period (a renewal signed ahead of its period counts from its purchase, a period signed after it
///   ended from its end), or the current period's revocation (`revoked`); at the same moment Apple's
///   statement wins. A revoked
///   current period is `revoked` whatever was said after (only a newer Apple version lifts it). Auto-renew
///   toggles carry no status of their own. `active` with auto-renew off is `canceled`.
/// - auto_renew and next_product_id: the newest renewal info (or DID_CHANGE_RENEWAL_STATUS).
public enum Derivation {
    /// - Parameter now: only for subscriptions known from StoreKit 1 receipts alone, whose status is
    ///   the proven period's (active while it lasts, else expired); everything else ignores it.
    public static func derive(_ facts: FactSet, now: Int64? = nil) -> Derived {
        var orders: [DerivedOrder] = []
        for (_, versions) in facts.transactions {
            guard let order = effective(versions, notifications: facts.notifications) else { continue }
            orders.append(order)
        }
        orders.sort {
            ($0.transaction.purchaseDate ?? 0, $0.transaction.transactionId)
                < ($1.transaction.purchaseDate ?? 0, $1.transaction.transactionId)
        }
        return Derived(contract: contract(orders: orders, facts: facts, now: now), orders: orders)
    }

    /// The newest version of one transaction, with the revocation rule applied.
    static func effective(_ versions: [Versioned<TransactionFacts>], notifications: [Versioned<NotificationFact>])
        -> DerivedOrder?
    {
        // A StoreKit 1 receipt never revokes: its revocation fields count for nothing.
        let versions = versions.map { v -> Versioned<TransactionFacts> in
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
        let status: OrderStatus
        if tx.revocationDate == nil {
            status = .paid
        } else {
            let family =
                tx.revocationType == .known(.familyRevoke) || tx.inAppOwnershipType == .known(.familyShared)
                || notifications.contains {
                    $0.value.notificationType == .known(.revoke) && $0.value.transactionId == tx.transactionId
                }
            status = family ? .revoked : .refunded
        }
        return DerivedOrder(
            transaction: tx, status: status, signedDate: newest.signedDate, source: newest.source,
            onlyFromReceipts: versions.allSatisfy { $0.value.isFromReceipt })
    }

    static func newestOf<V>(_ versions: [Versioned<V>]) -> Versioned<V>? {
        versions.max { $1.isNewer(than: $0) }
    }

    static func contract(orders: [DerivedOrder], facts: FactSet, now: Int64?) -> DerivedContract? {
        let subscriptions = orders.filter { $0.transaction.isAutoRenewable }
        guard !subscriptions.isEmpty else { return nil }
        let live = subscriptions.filter { $0.transaction.isUpgraded != true }
        let periods = live.isEmpty ? subscriptions : live
        let current = periods.max {
            ($0.transaction.purchaseDate ?? 0, $0.transaction.expiresDate ?? 0, $0.transaction.transactionId)
                < ($1.transaction.purchaseDate ?? 0, $1.transaction.expiresDate ?? 0, $1.transaction.transactionId)
        }!
        let tx = current.transaction
        var reasons: [FieldReason] = []
        let txFact = "transaction \(tx.transactionId) (\(tx.productId), purchased \(Timestamp.iso8601(tx.purchaseDate ?? 0)))"
        reasons.append(
            FieldReason(
                field: "product_id", value: tx.productId, fact: "current period: " + txFact, signedDate: current.signedDate,
                source: current.source))
        reasons.append(
            FieldReason(
                field: "expires_date", value: tx.expiresDate.map(Timestamp.iso8601) ?? "∅", fact: "current period: " + txFact,
                signedDate: current.signedDate, source: current.source))

        // Status: the newest statement about the subscription. A statement's reason is worded only
        // for the one that decides (or to break a tie): most of a long history never is.
        enum Said {
            /// `facts.notifications[index]`, with Apple's data.status when it gave one.
            case note(Int, dataStatus: Int?)
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
            case .note(let index, let raw):
                let note = facts.notifications[index]
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
        var candidates: [Candidate] = []
        for (index, note) in facts.notifications.enumerated() {
            let n = note.value
            if let raw = n.status, let status = appleStatus(raw) {
                candidates.append(Candidate(time: note.signedDate, priority: 1, status: status, said: .note(index, dataStatus: raw)))
            } else if let status = inferred(n, current: tx) {
                candidates.append(Candidate(time: note.signedDate, priority: 1, status: status, said: .note(index, dataStatus: nil)))
            }
        }
        for (index, period) in periods.enumerated() where !period.onlyFromReceipts {
            if period.transaction.revocationDate == nil, period.transaction.purchaseDate != nil {
                candidates.append(Candidate(time: paymentEvidenceTime(period), priority: 0, status: .active, said: .paid(index)))
            }
        }
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
        let statusFromReceipts = decided == nil && current.onlyFromReceipts
        if statusFromReceipts {
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

        // Auto-renew: the newest renewal info, or the newest DID_CHANGE_RENEWAL_STATUS (worded for the pick).
        enum AutoRenewSaid {
            /// `facts.renewals[index]` with its autoRenewStatus.
            case renewal(Int, Int)
            /// `facts.notifications[index]`.
            case note(Int)
        }
        func autoRenewReason(_ said: AutoRenewSaid) -> FieldReason {
            switch said {
            case .renewal(let index, let on):
                let r = facts.renewals[index]
                return FieldReason(
                    field: "auto_renew", value: on == 1 ? "true" : "false", fact: "renewal info autoRenewStatus \(on)",
                    signedDate: r.signedDate, source: r.source)
            case .note(let index):
                let note = facts.notifications[index]
                let on = note.value.subtype == .known(.autoRenewEnabled)
                return FieldReason(
                    field: "auto_renew", value: on ? "true" : "false", fact: note.value.name, signedDate: note.signedDate,
                    source: note.source)
            }
        }
        var autoRenewSources: [(Int64, Int, Bool, AutoRenewSaid)] = []
        for (index, r) in facts.renewals.enumerated() {
            if let on = r.value.autoRenewStatus {
                autoRenewSources.append((r.signedDate, r.source.authority, on == 1, .renewal(index, on)))
            }
        }
        for (index, note) in facts.notifications.enumerated() where note.value.notificationType == .known(.didChangeRenewalStatus) {
            let on: Bool
            switch note.value.subtype {
            case .known(.autoRenewEnabled)?: on = true
            case .known(.autoRenewDisabled)?: on = false
            default: continue
            }
            autoRenewSources.append((note.signedDate, -1, on, .note(index)))
        }
        let autoRenewPick = autoRenewSources.max { a, b in
            if (a.0, a.1, a.2 ? 1 : 0) != (b.0, b.1, b.2 ? 1 : 0) { return (a.0, a.1, a.2 ? 1 : 0) < (b.0, b.1, b.2 ? 1 : 0) }
            return autoRenewReason(a.3).fact < autoRenewReason(b.3).fact
        }
        let autoRenew = autoRenewPick?.2 ?? true
        reasons.append(
            autoRenewPick.map { autoRenewReason($0.3) }
                ?? FieldReason(field: "auto_renew", value: "true", fact: "no renewal info yet: on by default", signedDate: nil, source: nil)
        )

        if status == .active, !autoRenew {
            status = .canceled
        }
        var statusReason =
            decided.map(reason) ?? FieldReason(field: "status", value: "active", fact: "no statement yet", signedDate: nil, source: nil)
        statusReason.value = status.rawValue
        if status == .canceled { statusReason.fact += "; auto-renew off: canceled, entitled until expiry" }
        reasons.insert(statusReason, at: 0)

        let newestRenewal = newestOf(facts.renewals.filter { $0.value.autoRenewProductId != nil })
        var next = newestRenewal?.value.autoRenewProductId
        if next == tx.productId { next = nil }
        if let next, let r = newestRenewal {
            reasons.append(
                FieldReason(
                    field: "next_product_id", value: next, fact: "renewal info autoRenewProductId", signedDate: r.signedDate,
                    source: r.source))
        }
        let grace = newestOf(facts.renewals)?.value.gracePeriodExpiresDate
        return DerivedContract(
            productId: tx.productId, status: status, autoRenew: autoRenew, expiresDate: tx.expiresDate, nextProductId: next,
            environment: tx.environment, current: tx, gracePeriodExpiresDate: status == .gracePeriod ? grace : nil,
            newestSignedDate: facts.newestSignedDate(excludingReceipts: true), statusFromReceipts: statusFromReceipts,
            reasons: reasons)
    }

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
