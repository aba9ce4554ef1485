import SubscriptionModel

/// Orders, their contract, the ledger events that mention them and their audit trail: what
/// `orders show`, `contracts show`, `contracts explain` and the as-of queries look at.
public struct RecordHistory: Sendable, Equatable {
    public var orders: [Order]
    public var contract: Contract?
    /// Ledger rows mentioning the orders' transaction ids, their numbers or the subscription, in signedDate order.
    public var events: [LedgerEntry]
    /// Audit rows of the orders and the contract, oldest first.
    public var audit: [AuditEntry]

    public init(orders: [Order], contract: Contract?, events: [LedgerEntry], audit: [AuditEntry]) {
        self.orders = orders
        self.contract = contract
        self.events = events
        self.audit = audit
    }

    /// The ledger events and audit rows of these orders and contract (inside the caller's transaction).
    public static func gather(_ session: any StoreSession, orders: [Order], contract: Contract?) throws -> RecordHistory {
        var originNos = unique(orders.compactMap(\.originNo))
        if let contract, !originNos.contains(contract.contractId) { originNos.append(contract.contractId) }
        let events = try session.ledger(
            transactionIds: unique(orders.compactMap(\.tradeNo)), originalTransactionIds: originNos,
            appAccountTokens: unique(orders.map(\.no)))
        var audit: [AuditEntry] = []
        for order in orders { audit += try session.audit(entity: .order, key: order.no) }
        if let contract { audit += try session.audit(entity: .contract, key: contract.contractId) }
        audit.sort { ($0.at, $0.id) < ($1.at, $1.id) }
        return RecordHistory(orders: orders, contract: contract, events: events, audit: audit)
    }

    /// The history of order `key` (its `no` or `trade_no`), or of every order of subscription `key`
    /// (`origin_no`), or of every order of the purchases whose facts carry appTransactionId `key`; nil
    /// when no order has that key.
    ///
    /// The first purchase's transactionId is also the subscription's originalTransactionId: that
    /// key gives the whole subscription; any other transactionId gives its one order.
    public static func order(_ key: String, in session: any StoreSession) throws -> RecordHistory? {
        var orders: [Order] = []
        if let order = try session.order(no: key) {
            orders = [order]
        } else if let order = try session.order(tradeNo: key), order.originNo != key {
            orders = [order]
        } else {
            orders = try session.orders(originNo: key)
            if orders.isEmpty, let order = try session.order(tradeNo: key) { orders = [order] }
            if orders.isEmpty {
                // An appTransactionId (one per customer and app): the orders of every purchase whose facts carry it.
                for original in try session.originalTransactionIds(appTransactionId: key) {
                    orders += try session.orders(originNo: original)
                }
            }
        }
        guard !orders.isEmpty else { return nil }
        let contract = try unique(orders.compactMap(\.originNo)).first.flatMap { try session.contract(contractId: $0) }
        return try gather(session, orders: orders, contract: contract)
    }

    /// The history of contract `contractId` and its orders; nil when there is no such contract.
    public static func contract(_ contractId: String, in session: any StoreSession) throws -> RecordHistory? {
        guard let contract = try session.contract(contractId: contractId) else { return nil }
        return try gather(session, orders: try session.orders(originNo: contractId), contract: contract)
    }

    static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
