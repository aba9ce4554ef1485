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
    package func isNewer(than other: Versioned) -> Bool {
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
    /// Transactions whose body cannot be read (left out; the derivation reports them).
    public private(set) var unreadable: [FactBodyError] = []

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
                let tx: TransactionFacts
                do {
                    tx = try FactBody.transaction(fact.body, key: fact.key)
                } catch {
                    // Left out, and said so (``Derived/unreadable``).
                    unreadable.append(error)
                    continue
                }
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
    /// The facts the derivation needed and could not read (left out): the set's transactions, and
    /// the renewal infos and notifications it decoded. Not compared by `==` (which compares the
    /// rows and their reasons): how far a reading went decides which unreadable versions it met.
    public var unreadable: [FactBodyError] = []

    public static func == (a: Derived, b: Derived) -> Bool { a.contract == b.contract && a.orders == b.orders }

    /// The row values alone (not which fact decided them), to tell whether new facts change the rows.
    package var rows: RowValues { RowValues(self) }
}

/// The values a derivation writes to the rows, compared as values (no text is built for them).
/// An absent value compares as the stand-in the rows' text once used (-1, empty).
package struct RowValues: Equatable {
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
/// The derivation is a set of rules (the `Rules` folder, one file each: ``DerivationRule``), each
/// a maximum over candidates that says which facts it keeps: ``OrderRule`` (each transaction's
/// order), ``CurrentPeriodRule`` (product and expiry), ``StatusRule``, ``AutoRenewRule``,
/// ``NextProductRule`` and ``GracePeriodRule``. A new rule goes in that folder, declares its kept
/// facts, and is listed in ``rules``; its property test comes with it.
public enum Derivation {
    /// Every rule, in the order the derivation applies them.
    static var rules: [any DerivationRule.Type] {
        [OrderRule.self, CurrentPeriodRule.self, StatusRule.self, AutoRenewRule.self, NextProductRule.self, GracePeriodRule.self]
    }

    /// - Parameter now: only for subscriptions known from StoreKit 1 receipts alone, whose status is
    ///   the proven period's (active while it lasts, else expired); everything else ignores it.
    public static func derive(_ facts: FactSet, now: Int64? = nil) -> Derived {
        derive(facts, now: now, decodingEverything: false)
    }

    /// Renewal infos and notifications are decoded newest first, only until no older one can
    /// decide (``VersionReader``); `decodingEverything` decodes all of them and lets the rules pick
    /// among all: the reference the tests hold the newest-first reading to.
    static func derive(_ facts: FactSet, now: Int64?, decodingEverything: Bool) -> Derived {
        var reading = FactReading(facts, everything: decodingEverything)
        let orders = OrderRule.select(&reading)
        let contract = contract(orders: orders, reading: &reading, now: now)
        return Derived(
            contract: contract, orders: orders,
            unreadable: facts.unreadable + reading.renewals.unreadable + reading.notes.unreadable)
    }

    /// What every rule keeps of `facts` (whose derivation is `derived`): the snapshot's facts.
    static func kept(_ facts: FactSet, derived: Derived) -> KeptFacts {
        var reading = FactReading(facts)
        var kept = KeptFacts()
        for rule in rules { kept.formUnion(rule.kept(&reading, derived: derived)) }
        return kept
    }

    static func contract(orders: [DerivedOrder], reading: inout FactReading, now: Int64?) -> DerivedContract? {
        guard let selected = CurrentPeriodRule.select(orders) else { return nil }
        let (periods, current) = selected
        let tx = current.transaction
        var reasons = CurrentPeriodRule.reasons(current)
        let decision = StatusRule.select(periods: periods, current: current, reading: &reading, now: now)
        let autoRenew = AutoRenewRule.select(&reading)
        reasons.append(autoRenew.reason)
        var status = decision.status
        if status == .active, !autoRenew.on {
            status = .canceled
        }
        var statusReason =
            decision.reason ?? FieldReason(field: "status", value: "active", fact: "no statement yet", signedDate: nil, source: nil)
        statusReason.value = status.rawValue
        if status == .canceled { statusReason.fact += "; auto-renew off: canceled, entitled until expiry" }
        reasons.insert(statusReason, at: 0)
        let next = NextProductRule.select(&reading, current: tx)
        if let reason = next.reason { reasons.append(reason) }
        let grace = GracePeriodRule.select(&reading)
        return DerivedContract(
            productId: tx.productId, status: status, autoRenew: autoRenew.on, expiresDate: tx.expiresDate, nextProductId: next.next,
            environment: tx.environment, current: tx, gracePeriodExpiresDate: status == .gracePeriod ? grace : nil,
            newestSignedDate: reading.facts.newestSignedDate(
                excludingReceipts: true, renewals: &reading.renewals, notifications: &reading.notes),
            statusFromReceipts: decision.fromReceipts,
            reasons: reasons)
    }
}
