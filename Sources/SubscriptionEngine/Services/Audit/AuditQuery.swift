import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `audit list`: audit rows newest first, by the store's filter (actor, time, ticket) and narrowed
/// to one user's rows, one order, one contract or one command.
public enum AuditQuery {
    /// What narrows the store's filter; nil means "any".
    public struct Narrowing: Sendable, Equatable {
        /// Rows of this user's orders and contracts, or whose row before or after names the user.
        public var user: String?
        /// Rows of this order (its `no` or `trade_no`).
        public var order: String?
        /// Rows of this contract.
        public var contract: String?
        /// Rows of this command, or of its sub-commands (`orders` takes `orders update`).
        public var command: String?

        public init(user: String? = nil, order: String? = nil, contract: String? = nil, command: String? = nil) {
            self.user = user
            self.order = order
            self.contract = contract
            self.command = command
        }

        public var isEmpty: Bool { user == nil && order == nil && contract == nil && command == nil }
    }

    /// The rows matching `filter` and `narrowing`, at most `limit`, inside the caller's read transaction.
    public static func entries(
        _ filter: AuditFilter, narrowing: Narrowing, limit: Int?, in session: any StoreSession
    ) throws -> [AuditEntry] {
        var filter = filter
        filter.limit = narrowing.isEmpty ? limit : nil
        var entries = try session.auditEntries(matching: filter)
        guard !narrowing.isEmpty else { return entries }
        var keys: Set<String>?
        if let user = narrowing.user {
            var owned = Set(try session.orders(matching: OrderFilter(userId: user)).map(\.no))
            owned.formUnion(try session.contracts(matching: ContractFilter(userId: user)).map(\.contractId))
            keys = owned
        }
        var orderNo: String?
        if let order = narrowing.order {
            orderNo = try (session.order(no: order) ?? session.order(tradeNo: order))?.no ?? order
        }
        entries = entries.filter { entry in
            if let orderNo, entry.entity != .order || entry.key != orderNo { return false }
            if let contract = narrowing.contract, entry.entity != .contract || entry.key != contract { return false }
            if let command = narrowing.command, !(entry.command == command || entry.command.hasPrefix(command + " ")) {
                return false
            }
            if let user = narrowing.user, let keys, !keys.contains(entry.key), !names(user, entry) { return false }
            return true
        }
        return limit.map { Array(entries.prefix($0)) } ?? entries
    }

    /// Whether an audit row's before or after state names `user` (a row moved to or from them).
    static func names(_ user: String, _ entry: AuditEntry) -> Bool {
        struct Owner: Decodable { var userId: String? }
        for json in [entry.before, entry.after] {
            guard let owner = EngineAuditJSON.decode(json, as: Owner.self) else { continue }
            if owner.userId == user { return true }
        }
        return false
    }
}
