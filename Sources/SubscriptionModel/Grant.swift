/// Access given by hand (`iapctl grants add`): a user may use a product until a moment, without a
/// payment. Kept in its own table (`iap_grants`), never in `orders` or `member_contracts`: Apple's
/// data stays as Apple signed it, and a grant is never mistaken for a purchase.
///
/// A grant ends by itself: it is in force at `t` when `startsAt <= t < until` and it was not
/// revoked by `t` (``inForce(at:)``); no job has to end it.
public struct Grant: Sendable, Equatable, Codable {
    public var id: Int64
    public var userId: String
    public var productId: String
    /// When it was given (ms since the epoch): it covers from then.
    public var startsAt: Int64
    /// When it ends (ms since the epoch, exclusive).
    public var untilDate: Int64
    public var actor: String
    public var reason: String
    public var ticket: String?
    /// The audit row of the `grants add` that made it (nil until that row is written).
    public var auditId: Int64?
    /// When it was revoked (`grants revoke`, `audit undo` of its `grants add`); nil while not.
    public var revokedAt: Int64?
    /// Who revoked it and why.
    public var revokedBy: String?

    public init(
        id: Int64 = 0, userId: String, productId: String, startsAt: Int64, untilDate: Int64, actor: String, reason: String,
        ticket: String?, auditId: Int64? = nil, revokedAt: Int64? = nil, revokedBy: String? = nil
    ) {
        self.id = id
        self.userId = userId
        self.productId = productId
        self.startsAt = startsAt
        self.untilDate = untilDate
        self.actor = actor
        self.reason = reason
        self.ticket = ticket
        self.auditId = auditId
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
    }

    /// Whether the grant gives access at `time`: given by then, not yet ended, not revoked by then.
    public func inForce(at time: Int64) -> Bool {
        startsAt <= time && time < untilDate && (revokedAt.map { time < $0 } ?? true)
    }

    /// The grant's key in the audit trail (`entity` `grant`).
    public var auditKey: String { String(id) }

    /// `audit #17, ticket T-1` (the audit row of its creation, then the ticket if any).
    public var label: String { "audit #\(auditId ?? 0)" + (ticket.map { ", ticket \($0)" } ?? "") }
}

extension Grant: ColumnTable {
    public static let columns: [ModelColumn<Grant>] = [
        ModelColumn("id", \.id, audited: false),
        ModelColumn("user_id", \.userId), ModelColumn("product_id", \.productId), ModelColumn("starts_at", \.startsAt),
        ModelColumn("until_date", \.untilDate), ModelColumn("actor", \.actor), ModelColumn("reason", \.reason),
        ModelColumn("ticket", \.ticket), ModelColumn("audit_id", \.auditId, audited: false),
        ModelColumn("revoked_at", \.revokedAt), ModelColumn("revoked_by", \.revokedBy),
    ]
}

/// Which grants to list. `nil` means "any".
public struct GrantFilter: Sendable, Equatable {
    public var userId: String?
    public var productId: String?

    public init(userId: String? = nil, productId: String? = nil) {
        self.userId = userId
        self.productId = productId
    }
}

/// What `users forget` changed: rows per `table.column` whose user id became the alias, texts
/// per `table.column` in which a mention was rewritten, and how many audit and ledger rows got a
/// new row digest for it.
public struct ForgottenRows: Sendable, Equatable {
    public var ids: [(column: String, rows: Int)] = []
    public var texts: [(column: String, rows: Int)] = []
    public var redigestedAudit = 0
    public var redigestedLedger = 0

    public init() {}

    public static func == (a: ForgottenRows, b: ForgottenRows) -> Bool {
        a.ids.elementsEqual(b.ids, by: ==) && a.texts.elementsEqual(b.texts, by: ==)
            && a.redigestedAudit == b.redigestedAudit && a.redigestedLedger == b.redigestedLedger
    }

    /// Rows changed in all.
    public var total: Int { ids.reduce(0) { $0 + $1.rows } + texts.reduce(0) { $0 + $1.rows } }
}
