import IAPFoundation

/// A hand change of a derived field: what support decided, kept beside the facts so the
/// engine's next derivation does not silently undo it.
///
/// The rule: an override holds until it is removed (`audit undo` of the correction that made it, or
/// `orders|contracts update … --clear-override FIELD`) or until Apple signs a fact about a newer
/// period than the override saw (``OverrideRule/lifter(_:tradeNo:facts:)``). A fact about an older
/// period never lifts it.
///
/// Stored in `iap_overrides` (schema version 6), not derived from the audit trail: the audit trail
/// does not say which facts a correction saw (facts carry no arrival time), and whether a later
/// `audit undo` or a newer period lifted an override would have to be re-decided from every row
/// every time the engine runs.
public struct Override: Sendable, Equatable {
    public var id: Int64
    public var entity: EntityKind
    /// Order `no` or contract `contract_id`.
    public var key: String
    /// The subscription (or one-time purchase) the row belongs to ("" when the order has none yet).
    public var originalTransactionId: String
    /// The column set by hand (``OverrideRule/derivedFields(_:)``).
    public var field: String
    /// The value set, as the column's text (dates in ms, flags 1/0; nil for NULL).
    public var value: String?
    /// The audit row of the correction that made it.
    public var auditId: Int64
    public var actor: String
    public var reason: String?
    public var ticket: String?
    /// When it was made (ms since the epoch).
    public var at: Int64
    /// What it saw of the periods: for a contract, the newest period's purchaseDate; for an order,
    /// the newest signedDate of its transaction's versions (nil when none was known).
    public var seenPeriod: Int64?
    /// How many facts of the subscription were kept when it was made.
    public var seenFacts: Int64
    /// When it stopped holding (nil while in force), and why.
    public var liftedAt: Int64?
    public var liftedBy: String?

    public init(
        id: Int64 = 0, entity: EntityKind, key: String, originalTransactionId: String, field: String, value: String?,
        auditId: Int64, actor: String, reason: String?, ticket: String?, at: Int64, seenPeriod: Int64?,
        seenFacts: Int64, liftedAt: Int64? = nil, liftedBy: String? = nil
    ) {
        self.id = id
        self.entity = entity
        self.key = key
        self.originalTransactionId = originalTransactionId
        self.field = field
        self.value = value
        self.auditId = auditId
        self.actor = actor
        self.reason = reason
        self.ticket = ticket
        self.at = at
        self.seenPeriod = seenPeriod
        self.seenFacts = seenFacts
        self.liftedAt = liftedAt
        self.liftedBy = liftedBy
    }

    public var inForce: Bool { liftedAt == nil }

    /// `#17, T-2001` (the audit row id, then the ticket if any).
    public var label: String { "#\(auditId)" + (ticket.map { ", \($0)" } ?? "") }
}
