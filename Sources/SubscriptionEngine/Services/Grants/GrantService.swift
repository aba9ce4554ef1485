import IAPFoundation
import SubscriptionModel

/// One grant asked for (`grants add`, a row of `grants add --from`).
public struct GrantRequest: Sendable, Equatable {
    /// The input line of a batch row (nil on the command line).
    public var line: Int?
    public var userId: String
    public var productId: String
    /// When the grant ends (ms since the epoch, exclusive).
    public var untilDate: Int64
    public var reason: String
    public var ticket: String?

    public init(line: Int?, userId: String, productId: String, untilDate: Int64, reason: String, ticket: String?) {
        self.line = line
        self.userId = userId
        self.productId = productId
        self.untilDate = untilDate
        self.reason = reason
        self.ticket = ticket
    }
}

/// Why a grant cannot be given, revoked or undone. Nothing is written when one is thrown.
public enum GrantError: Error, Equatable, Sendable {
    /// No grant with this id.
    case notFound(Int64)
    /// The grant was revoked already (when, and by whom and why).
    case alreadyRevoked(Int64, at: Int64, by: String?)
    /// The grant ended by itself already (at `until`).
    case ended(Int64, until: Int64)
    /// The end asked for is not after now.
    case endNotInFuture(line: Int?, until: Int64, now: Int64)
    /// The grant changed since the audited change an undo was asked for.
    case changedSince(auditId: Int64, grantId: Int64)
}

/// Grants of access by hand (``Grant``): given, revoked and undone in the caller's write transaction,
/// each change audited (entity `grant`, key the grant's id, the row before and after as JSON); and
/// the one query of grants in force that `entitled`, `contracts show`, `doctor` and the customer view use.
public enum GrantService {
    /// Gives each grant of `requests` (in order): its row, then its audit row (the grant as JSON
    /// after, nothing before), whose id the grant keeps. All or nothing with the caller's transaction.
    public static func add(
        _ requests: [GrantRequest], context: CorrectionContext, in session: any StoreSession
    ) throws -> [CorrectionResult] {
        var results: [CorrectionResult] = []
        for request in requests {
            guard request.untilDate > context.now else {
                throw GrantError.endNotInFuture(line: request.line, until: request.untilDate, now: context.now)
            }
            var grant = Grant(
                userId: request.userId, productId: request.productId, startsAt: context.now, untilDate: request.untilDate,
                actor: context.actor, reason: request.reason, ticket: request.ticket)
            grant.id = try session.insertGrant(grant)
            let auditId = try session.appendAudit(
                AuditEntry(
                    at: context.now, actor: context.actor, command: context.command, reason: request.reason,
                    ticket: request.ticket, entity: .grant, key: grant.auditKey, before: nil, after: json(grant)))
            grant.auditId = auditId
            try session.updateGrant(grant)
            results.append(
                CorrectionResult(
                    line: request.line, entity: .grant, key: grant.auditKey, changes: diff(nil, grant.columnValues),
                    auditId: auditId))
        }
        return results
    }

    /// Ends grant `id` now: audited with the grant before and after.
    ///
    /// - Throws: ``GrantError/notFound(_:)``, ``GrantError/alreadyRevoked(_:at:by:)``,
    ///   ``GrantError/ended(_:until:)``; store errors.
    public static func revoke(
        _ id: Int64, reason: String, ticket: String?, context: CorrectionContext, in session: any StoreSession
    ) throws -> CorrectionResult {
        guard let grant = try session.grant(id: id) else { throw GrantError.notFound(id) }
        if let at = grant.revokedAt { throw GrantError.alreadyRevoked(id, at: at, by: grant.revokedBy) }
        guard grant.untilDate > context.now else { throw GrantError.ended(id, until: grant.untilDate) }
        var revoked = grant
        revoked.revokedAt = context.now
        revoked.revokedBy = "\(context.actor): \(reason)"
        return try save(revoked, replacing: grant, reason: reason, ticket: ticket, context: context, in: session)
    }

    /// `audit undo` of an audit row about a grant: a `grants add` is undone by revoking the grant
    /// (its row stays, so the trail still shows what was given), a revocation by putting the grant
    /// back in force. The grant must be exactly as that change left it.
    static func undo(
        _ entry: AuditEntry, reason: String, ticket: String?, context: CorrectionContext, in session: any StoreSession
    ) throws -> CorrectionResult {
        guard let id = Int64(entry.key), let current = try session.grant(id: id) else {
            throw AuditUndoError.rowGone(entry.id, .grant, key: entry.key)
        }
        guard let after: Grant = EngineAuditJSON.decode(entry.after) else { throw AuditUndoError.unreadable(entry.id) }
        guard sameGrant(current, after) else {
            throw GrantError.changedSince(auditId: entry.id, grantId: id)
        }
        var row = current
        if let before: Grant = EngineAuditJSON.decode(entry.before) {
            row.revokedAt = before.revokedAt
            row.revokedBy = before.revokedBy
        } else {
            if current.revokedAt != nil { throw GrantError.changedSince(auditId: entry.id, grantId: id) }
            row.revokedAt = context.now
            row.revokedBy = "\(context.actor): audit undo of #\(entry.id): \(reason)"
        }
        return try save(row, replacing: current, reason: reason, ticket: ticket, context: context, in: session)
    }

    /// Whether `a` and `b` are the same grant in the same state, whatever audit row each names.
    private static func sameGrant(_ a: Grant, _ b: Grant) -> Bool {
        var (a, b) = (a, b)
        a.auditId = nil
        b.auditId = nil
        return a == b
    }

    /// Writes `row` over `current` and audits the change (the rows as JSON, their audit ids left out).
    private static func save(
        _ row: Grant, replacing current: Grant, reason: String, ticket: String?, context: CorrectionContext,
        in session: any StoreSession
    ) throws -> CorrectionResult {
        try session.updateGrant(row)
        let auditId = try session.appendAudit(
            AuditEntry(
                at: context.now, actor: context.actor, command: context.command, reason: reason, ticket: ticket,
                entity: .grant, key: row.auditKey, before: json(current), after: json(row)))
        return CorrectionResult(
            line: nil, entity: .grant, key: row.auditKey, changes: diff(current.columnValues, row.columnValues),
            auditId: auditId)
    }

    /// The grant as the audit trail keeps it: sorted keys, without its audit row's id (which names
    /// the row that holds this JSON, or the creation's; it never changes with the grant's state).
    static func json(_ grant: Grant) -> String? {
        var plain = grant
        plain.auditId = nil
        return EngineAuditJSON.encode(plain)
    }

    /// The grants of `user` in force at `time` (of `product` when given), the one ending last first.
    /// What `entitled`, `contracts show`, `doctor` and the customer view ask.
    public static func inForce(
        user: String, product: String? = nil, at time: Int64, in session: any StoreSession
    ) throws -> [Grant] {
        try session.grants(matching: GrantFilter(userId: user, productId: product))
            .filter { $0.inForce(at: time) }
            .sorted { ($0.untilDate, $0.id) > ($1.untilDate, $1.id) }
    }
}
