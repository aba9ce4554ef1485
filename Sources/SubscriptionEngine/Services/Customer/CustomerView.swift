import SubscriptionModel

/// Everything support needs about one user in one read (`iapctl customer KEY`): entitlement now
/// and why, contracts with their state and renewal risk, recent orders, open refund requests with
/// their deadlines, hand overrides and grants in force, unmatched items carrying any of the user's ids, the
/// last audit rows and the notes. Read in the caller's read transaction.
public struct CustomerView: Sendable {
    public var userId: String
    /// Whether the user is entitled now, the deciding contract and why (``EntitlementQuery``).
    public var entitlement: EntitlementQuery.Verdict
    /// The user's contracts, newest first, each with its renewal risk.
    public var contracts: [(contract: Contract, risk: RenewalRisk)]
    /// The newest orders (at most ``recentOrders``), and how many the user has in all.
    public var orders: [Order]
    public var orderCount: Int
    /// Refund requests of the user's purchases still to answer (open, due soon, claimed, refused).
    public var refunds: [RefundRequest]
    /// Hand overrides in force over the user's contracts and orders, each with what the facts say.
    public var overrides: [ShownOverride]
    /// Grants of access by hand in force for the user (``GrantService/inForce(user:product:at:in:)``).
    public var grants: [Grant]
    /// Unmatched ledger items that carry one of the user's transaction ids, originalTransactionIds
    /// or order numbers (appAccountTokens).
    public var unmatched: [LedgerEntry]
    /// The newest audit rows about the user's orders, contracts and notes (at most ``recentAudit``).
    public var audit: [AuditEntry]
    /// The notes about the user, newest first.
    public var notes: [CustomerNote]

    /// How many orders and audit rows the view shows.
    public static let recentOrders = 5
    public static let recentAudit = 3

    /// The view of `user` at `now`.
    public static func of(_ user: String, now: Int64, in session: any StoreSession) throws -> CustomerView {
        let entitlement = try EntitlementQuery.entitled(user: user, product: nil, at: now, question: .asKnownNow, in: session)
        let contracts = try session.contracts(matching: ContractFilter(userId: user))
        let orders = try session.orders(matching: OrderFilter(userId: user))
        var originals: [String] = contracts.map(\.contractId)
        for order in orders { if let origin = order.originNo, !originals.contains(origin) { originals.append(origin) } }
        let tradeNos = Set(orders.compactMap(\.tradeNo))
        let numbers = Set(orders.map(\.no))

        let risks = try contracts.map { contract in
            (contract, RenewalRisk.of(contract, facts: try session.facts(originalTransactionId: contract.contractId), now: now))
        }
        let refunds = try RefundRequests.list(session).filter { request in
            guard request.userId == user else { return false }
            return [.open, .dueSoon, .claimed, .refused].contains(request.status(now: now))
        }
        var overrides: [ShownOverride] = []
        for contract in contracts {
            overrides += try OverrideService.shown(
                entity: .contract, key: contract.contractId, tradeNo: nil, originalTransactionId: contract.contractId,
                now: now, in: session)
        }
        for order in orders {
            overrides += try OverrideService.shown(
                entity: .order, key: order.no, tradeNo: order.tradeNo, originalTransactionId: order.originNo, now: now,
                in: session)
        }
        let grants = try GrantService.inForce(user: user, at: now, in: session)
        let originalSet = Set(originals)
        let unmatched = try session.unmatchedLedger(limit: nil).filter { entry in
            entry.transactionId.map { tradeNos.contains($0) || originalSet.contains($0) } == true
                || entry.originalTransactionId.map { originalSet.contains($0) } == true
                || entry.appAccountToken.map { numbers.contains($0) } == true
        }
        var audit: [AuditEntry] = try session.audit(entity: .note, key: user)
        for contract in contracts { audit += try session.audit(entity: .contract, key: contract.contractId) }
        for order in orders { audit += try session.audit(entity: .order, key: order.no) }
        for grant in grants { audit += try session.audit(entity: .grant, key: String(grant.id)) }
        audit.sort { $0.id > $1.id }
        return CustomerView(
            userId: user, entitlement: entitlement, contracts: risks, orders: Array(orders.prefix(recentOrders)),
            orderCount: orders.count, refunds: refunds, overrides: overrides, grants: grants,
            unmatched: unmatched, audit: Array(audit.prefix(recentAudit)), notes: try CustomerNotes.list(user: user, in: session))
    }
}
