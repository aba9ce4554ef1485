import IAPFoundation
import SubscriptionModel

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
///
/// Transactions are decoded as they are added (each is one order); renewal infos and notifications
/// are kept as stored and decoded by the derivation newest first, only as far as its rules need
/// (``StoredVersions``).
public struct FactSet: Sendable, Equatable {
    /// Every version of each transaction, by `transactionId`.
    public var transactions: [String: [Versioned<TransactionFacts>]] = [:]
    /// Renewal infos and notifications as stored, in arrival order.
    var storedRenewals = StoredVersions<RenewalFacts>()
    var storedNotifications = StoredVersions<NotificationFact>()

    /// Every readable renewal info, decoded (in arrival order).
    public var renewals: [Versioned<RenewalFacts>] { storedRenewals.decodedAll }
    /// Every readable notification, decoded (in arrival order).
    public var notifications: [Versioned<NotificationFact>] { storedNotifications.decodedAll }

    /// - Parameter cutoff: keep only facts signed at or before it (what was known then).
    public init(_ facts: [Fact], signedBy cutoff: Int64? = nil) {
        add(facts, signedBy: cutoff)
    }

    /// Adds more facts (those signed after `cutoff`, if given, are left out).
    public mutating func add(_ facts: [Fact], signedBy cutoff: Int64? = nil) {
        for fact in facts where cutoff == nil || fact.signedDate <= cutoff! {
            switch fact.kind {
            case .transaction:
                // An unreadable body is left out.
                guard let tx = FactCoding.decode(TransactionFacts.self, fact.body) else { continue }
                transactions[fact.key, default: []].append(
                    Versioned(value: tx, signedDate: fact.signedDate, source: fact.source, body: fact.body))
            case .renewal: storedRenewals.append(fact)
            case .notification: storedNotifications.append(fact)
            }
        }
    }

    public var isEmpty: Bool { transactions.isEmpty && renewals.isEmpty && notifications.isEmpty }

    /// The newest signed date of any fact.
    public var newestSignedDate: Int64? { newestSignedDate(excludingReceipts: false) }

    /// The newest signed date of any fact, optionally leaving out StoreKit 1 receipt entries.
    public func newestSignedDate(excludingReceipts: Bool) -> Int64? {
        var renewals = VersionReader(storedRenewals)
        var notifications = VersionReader(storedNotifications)
        return newestSignedDate(excludingReceipts: excludingReceipts, renewals: &renewals, notifications: &notifications)
    }

    /// The same, through a derivation's readers (a renewal info or notification counts once it is readable).
    func newestSignedDate(
        excludingReceipts: Bool, renewals: inout VersionReader<RenewalFacts>, notifications: inout VersionReader<NotificationFact>
    ) -> Int64? {
        let transactionDates = transactions.values.lazy.flatMap { versions in
            versions.lazy.filter { !(excludingReceipts && $0.value.isFromReceipt) }.map(\.signedDate)
        }
        return [transactionDates.max(), renewals.newestSignedDate(), notifications.newestSignedDate()].compactMap { $0 }.max()
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
    var rows: RowValues { RowValues(self) }
}

/// The values a derivation writes to the rows, compared as values (no text is built for them).
/// An absent value compares as the stand-in the rows' text once used (-1, empty).
struct RowValues: Equatable {
    struct ContractValues: Equatable {
        var productId: String
        var status: ContractStatus
        var autoRenew: Bool
        var expiresDate: Int64
        var nextProductId: String
        var environment: String
    }
    struct OrderValues: Equatable {
        var transactionId: String
        var status: OrderStatus
        var productId: String
        var purchaseDate: Int64
        var expiresDate: Int64
        var price: Int64
        var currency: String
        var environment: String
    }
    var contract: ContractValues?
    var orders: [OrderValues]

    init(_ derived: Derived) {
        contract = derived.contract.map { c in
            ContractValues(
                productId: c.productId, status: c.status, autoRenew: c.autoRenew, expiresDate: c.expiresDate ?? -1,
                nextProductId: c.nextProductId ?? "", environment: c.environment ?? "")
        }
        orders = derived.orders.map { o in
            let t = o.transaction
            return OrderValues(
                transactionId: t.transactionId, status: o.status, productId: t.productId, purchaseDate: t.purchaseDate ?? -1,
                expiresDate: t.expiresDate ?? -1, price: t.price ?? -1, currency: t.currency ?? "",
                environment: t.environment ?? "")
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
        derive(facts, now: now, decodingEverything: false)
    }

    /// Renewal infos and notifications are decoded newest first, only until no older one can
    /// decide (``VersionReader``); `decodingEverything` decodes all of them and lets the rules pick
    /// among all: the reference the tests hold the newest-first reading to.
    static func derive(_ facts: FactSet, now: Int64?, decodingEverything: Bool) -> Derived {
        var renewals = VersionReader(facts.storedRenewals, everything: decodingEverything)
        var notes = VersionReader(facts.storedNotifications, everything: decodingEverything)
        // The transactions a REVOKE notification was about: read (all notifications) only for a revoked transaction.
        var revokeNoticed: Set<String>?
        var orders: [DerivedOrder] = []
        for (_, versions) in facts.transactions {
            let order = effective(versions) { transactionId in
                if revokeNoticed == nil {
                    revokeNoticed = Set(
                        notes.versions(signedSince: nil).compactMap {
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
        let contract = contract(orders: orders, facts: facts, renewals: &renewals, notes: &notes, now: now)
        return Derived(contract: contract, orders: orders)
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

    static func contract(
        orders: [DerivedOrder], facts: FactSet, renewals: inout VersionReader<RenewalFacts>,
        notes: inout VersionReader<NotificationFact>, now: Int64?
    ) -> DerivedContract? {
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
        // What a notification says of the status (Apple's data.status, else what its type implies), if anything.
        func said(_ note: Versioned<NotificationFact>) -> (status: ContractStatus, dataStatus: Int?)? {
            if let raw = note.value.status, let status = appleStatus(raw) { return (status, raw) }
            return inferred(note.value, current: tx).map { ($0, nil) }
        }
        var paid: [Candidate] = []
        for (index, period) in periods.enumerated() where !period.onlyFromReceipts {
            if period.transaction.revocationDate == nil, period.transaction.purchaseDate != nil {
                paid.append(Candidate(time: paymentEvidenceTime(period), priority: 0, status: .active, said: .paid(index)))
            }
        }
        // The newest statement is signed no earlier than the newest notification that says a
        // status or the newest payment: notifications signed before that cannot decide (not decoded).
        let newestPayment = paid.map(\.time).max()
        let statusBound = [newestPayment, notes.newestSignedDate(notBefore: newestPayment) { said($0) != nil }].compactMap { $0 }.max()
        var candidates: [Candidate] = []
        for note in notes.versions(signedSince: statusBound) {
            guard let (status, raw) = said(note) else { continue }
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
            /// A renewal info with its autoRenewStatus.
            case renewal(Versioned<RenewalFacts>, Int)
            /// A DID_CHANGE_RENEWAL_STATUS notification.
            case note(Versioned<NotificationFact>)
        }
        func autoRenewReason(_ said: AutoRenewSaid) -> FieldReason {
            switch said {
            case .renewal(let r, let on):
                return FieldReason(
                    field: "auto_renew", value: on == 1 ? "true" : "false", fact: "renewal info autoRenewStatus \(on)",
                    signedDate: r.signedDate, source: r.source)
            case .note(let note):
                let on = note.value.subtype == .known(.autoRenewEnabled)
                return FieldReason(
                    field: "auto_renew", value: on ? "true" : "false", fact: note.value.name, signedDate: note.signedDate,
                    source: note.source)
            }
        }
        // What a DID_CHANGE_RENEWAL_STATUS notification says of auto-renew, if anything.
        func toggled(_ note: Versioned<NotificationFact>) -> Bool? {
            guard note.value.notificationType == .known(.didChangeRenewalStatus) else { return nil }
            switch note.value.subtype {
            case .known(.autoRenewEnabled)?: return true
            case .known(.autoRenewDisabled)?: return false
            default: return nil
            }
        }
        // Renewal infos and toggles signed before the newest of either cannot decide (not decoded).
        let newestRenewalInfo = renewals.newestSignedDate { $0.value.autoRenewStatus != nil }
        let autoRenewBound = [newestRenewalInfo, notes.newestSignedDate(notBefore: newestRenewalInfo) { toggled($0) != nil }]
            .compactMap { $0 }.max()
        var autoRenewSources: [(Int64, Int, Bool, AutoRenewSaid)] = []
        for r in renewals.versions(signedSince: autoRenewBound) {
            if let on = r.value.autoRenewStatus {
                autoRenewSources.append((r.signedDate, r.source.authority, on == 1, .renewal(r, on)))
            }
        }
        for note in notes.versions(signedSince: autoRenewBound) {
            guard let on = toggled(note) else { continue }
            autoRenewSources.append((note.signedDate, -1, on, .note(note)))
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

        let namesNext = { (r: Versioned<RenewalFacts>) in r.value.autoRenewProductId != nil }
        let newestRenewal = newestOf(renewals.versions(signedSince: renewals.newestSignedDate(where: namesNext)).filter(namesNext))
        var next = newestRenewal?.value.autoRenewProductId
        if next == tx.productId { next = nil }
        if let next, let r = newestRenewal {
            reasons.append(
                FieldReason(
                    field: "next_product_id", value: next, fact: "renewal info autoRenewProductId", signedDate: r.signedDate,
                    source: r.source))
        }
        let grace = newestOf(renewals.versions(signedSince: renewals.newestSignedDate()))?.value.gracePeriodExpiresDate
        return DerivedContract(
            productId: tx.productId, status: status, autoRenew: autoRenew, expiresDate: tx.expiresDate, nextProductId: next,
            environment: tx.environment, current: tx, gracePeriodExpiresDate: status == .gracePeriod ? grace : nil,
            newestSignedDate: facts.newestSignedDate(excludingReceipts: true, renewals: &renewals, notifications: &notes),
            statusFromReceipts: statusFromReceipts,
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
