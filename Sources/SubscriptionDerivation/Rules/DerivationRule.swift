import SubscriptionModel

/// One rule of ``Derivation``: it selects one value of the rows (an order's version, the current
/// period, the status, auto-renew, the next product, the grace period's end) as the maximum over
/// candidates drawn from a subscription's facts, and it says which facts it keeps.
///
/// The contract every rule keeps (the rules' README says it at length):
/// - **Select**: the rule's value is a maximum over candidates; a candidate signed earlier than
///   the rule's bound cannot be the maximum, now or once more facts are added (adding facts only
///   raises the bound).
/// - **Keep**: ``kept(_:derived:)`` names every fact the rule could still select when facts are only
///   added the way ``SubscriptionSnapshot/admits(_:of:)`` lets them be (pure additions): the facts
///   signed at or after its bound, and the facts whose meaning depends on something an addition
///   can change. A fact it leaves out is beaten, under this rule, by a fact it keeps.
/// - **Together**: the snapshot is the union of every rule's kept facts, so deciding an event from
///   the snapshot's facts plus the event's gives what the full derivation over every fact gives.
///
/// Each rule has a property test (`RuleKeepsTests`): over random histories, its selection from
/// its kept facts (with those of the rules it ``reads``) plus added facts equals its selection
/// from every fact plus the same added facts.
protocol DerivationRule {
    /// What the rule selects, as compared by its property test.
    associatedtype Selection: Equatable
    /// The rules whose selections this rule reads (their kept facts come with its own in its test).
    static var reads: [any DerivationRule.Type] { get }
    /// The facts it keeps of a history whose full derivation is `derived`.
    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts
    /// Its selection in a derivation.
    static func selection(_ derived: Derived) -> Selection
    /// Whether a derivation from kept facts (`partial`) selects what the full one does.
    static func agrees(_ partial: Derived, _ full: Derived) -> Bool
}

extension DerivationRule {
    static func agrees(_ partial: Derived, _ full: Derived) -> Bool { selection(partial) == selection(full) }
}

/// One derivation's reading of a subscription's facts, shared by its rules: each stored renewal
/// info and notification is decoded at most once, newest first (``VersionReader``).
struct FactReading {
    let facts: FactSet
    var renewals: VersionReader<RenewalFacts>
    var notes: VersionReader<NotificationFact>

    /// - Parameter everything: decode every version and let the rules pick among all (the tests'
    ///   reference for the newest-first reading).
    init(_ facts: FactSet, everything: Bool = false) {
        self.facts = facts
        renewals = VersionReader(facts.storedRenewals, everything: everything)
        notes = VersionReader(facts.storedNotifications, everything: everything)
    }
}

/// Which facts of a subscription a rule (or the snapshot, the union of all rules) keeps.
struct KeptFacts: Equatable {
    /// Transactions kept with every version.
    var transactions: Set<String> = []
    /// Notifications signed at or after it are kept (nil: none by date).
    var notificationsSince: Int64?
    /// Notifications signed at exactly these moments are kept too (those below `notificationsSince`
    /// matter; ``SubscriptionSnapshot`` stores only those).
    var notificationsAt: Set<Int64> = []
    /// Renewal infos signed at or after it are kept (nil: none).
    var renewalsSince: Int64?

    /// What either keeps.
    mutating func formUnion(_ other: KeptFacts) {
        transactions.formUnion(other.transactions)
        notificationsSince = Self.lower(notificationsSince, other.notificationsSince)
        notificationsAt.formUnion(other.notificationsAt)
        renewalsSince = Self.lower(renewalsSince, other.renewalsSince)
    }

    /// Whether a stored fact is kept. A transaction is all its versions or none.
    func keeps(_ fact: Fact) -> Bool {
        switch fact.kind {
        case .transaction: return transactions.contains(fact.key)
        case .renewal: return renewalsSince.map { fact.signedDate >= $0 } ?? false
        case .notification:
            return notificationsSince.map { fact.signedDate >= $0 } == true || notificationsAt.contains(fact.signedDate)
        }
    }

    private static func lower(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return Swift.min(a, b)
    }
}
