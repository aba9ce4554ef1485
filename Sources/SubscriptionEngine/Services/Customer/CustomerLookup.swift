import SubscriptionModel

/// Which user an id a ticket carries belongs to (`iapctl customer KEY`): a user id, an order number
/// (`no`, the appAccountToken), a transactionId, an originalTransactionId or an appTransactionId.
/// The order ID of a receipt e-mail is not in the database: the command asks Apple's Look Up Order ID
/// and resolves the transactions Apple returns here. Works in the caller's read transaction.
public enum CustomerLookup {
    /// The kinds of id a KEY may be.
    public enum IdKind: String, Sendable, CaseIterable {
        case user
        /// An order number (`orders.no`, the appAccountToken).
        case order
        /// Apple's transactionId (`orders.trade_no`, or a kept event's).
        case transaction
        /// Apple's originalTransactionId (`member_contracts.contract_id`, `orders.origin_no`).
        case original
        /// Apple's appTransactionId (one per Apple account and app), from the signed transactions kept.
        case appTransaction = "app-transaction"
        /// The order ID of a receipt e-mail (Apple's Look Up Order ID).
        case receiptOrder = "receipt-order"

        /// How a match of this kind is said: `order number`, `transactionId`.
        public var words: String {
            switch self {
            case .user: "user id"
            case .order: "order number"
            case .transaction: "transactionId"
            case .original: "originalTransactionId"
            case .appTransaction: "appTransactionId"
            case .receiptOrder: "receipt order ID"
            }
        }
    }

    /// One user an id led to, and how.
    public struct Match: Sendable, Equatable {
        public var userId: String
        /// The kinds of id that matched (in ``IdKind``'s order).
        public var kinds: [IdKind]
        /// How, one phrase each: `order number 7b1f… (order of u42)`.
        public var via: [String]
    }

    /// The kinds `resolve` tries, in order (the receipt order ID is the command's, through Apple).
    public static let localKinds: [IdKind] = [.user, .order, .transaction, .original, .appTransaction]

    /// Every user `key` leads to, as any of `kinds`, in the order first found.
    public static func resolve(_ key: String, as kinds: [IdKind] = localKinds, in session: any StoreSession) throws
        -> [Match]
    {
        var matches: [Match] = []
        func add(_ user: String, _ kind: IdKind, _ via: String) {
            if let index = matches.firstIndex(where: { $0.userId == user }) {
                if !matches[index].kinds.contains(kind) { matches[index].kinds.append(kind) }
                if !matches[index].via.contains(via) { matches[index].via.append(via) }
            } else {
                matches.append(Match(userId: user, kinds: [kind], via: [via]))
            }
        }
        guard !key.isEmpty else { return [] }
        for kind in kinds {
            switch kind {
            case .user:
                if try isKnownUser(key, in: session) { add(key, .user, "user id \(key)") }
            case .order:
                if let order = try session.order(no: key) { add(order.userId, .order, "order number \(key)") }
            case .transaction:
                if let order = try session.order(tradeNo: key) {
                    add(order.userId, .transaction, "transactionId \(key) (order \(order.no))")
                } else {
                    for entry in try session.ledger(transactionIds: [key], originalTransactionIds: [], appAccountTokens: [])
                    where entry.transactionId == key {
                        guard let original = entry.originalTransactionId else { continue }
                        for user in try owners(of: original, in: session) {
                            add(user, .transaction, "transactionId \(key) (a kept event of subscription \(original))")
                        }
                    }
                }
            case .original:
                for user in try owners(of: key, in: session) { add(user, .original, "originalTransactionId \(key)") }
            case .appTransaction:
                for original in try session.originalTransactionIds(appTransactionId: key) {
                    for user in try owners(of: original, in: session) {
                        add(user, .appTransaction, "appTransactionId \(key) (subscription or purchase \(original))")
                    }
                }
            case .receiptOrder:
                continue
            }
        }
        return matches
    }

    /// The users of the transactions Apple's Look Up Order ID returned for receipt order ID `orderId`
    /// (each transaction's id and originalTransactionId, as signed).
    public static func resolve(
        receiptOrder orderId: String, transactions: [(transactionId: String, originalTransactionId: String?)],
        in session: any StoreSession
    ) throws -> [Match] {
        var matches: [Match] = []
        for tx in transactions {
            var found = try resolve(tx.transactionId, as: [.transaction], in: session)
            if found.isEmpty, let original = tx.originalTransactionId {
                found = try resolve(original, as: [.original], in: session)
            }
            for match in found {
                let via = "receipt order ID \(orderId) (Apple: transaction \(tx.transactionId))"
                if let index = matches.firstIndex(where: { $0.userId == match.userId }) {
                    if !matches[index].via.contains(via) { matches[index].via.append(via) }
                } else {
                    matches.append(Match(userId: match.userId, kinds: [.receiptOrder], via: [via]))
                }
            }
        }
        return matches
    }

    /// The users who hold subscription (or one-time purchase) `original`: its contract's user, and
    /// its orders' users.
    static func owners(of original: String, in session: any StoreSession) throws -> [String] {
        var users: [String] = []
        if let contract = try session.contract(contractId: original) { users.append(contract.userId) }
        for order in try session.orders(originNo: original) where !users.contains(order.userId) {
            users.append(order.userId)
        }
        return users
    }

    /// Whether `user` has an order, a contract, a grant or a note.
    public static func isKnownUser(_ user: String, in session: any StoreSession) throws -> Bool {
        if try !session.orders(matching: OrderFilter(userId: user, limit: 1)).isEmpty { return true }
        if try !session.contracts(matching: ContractFilter(userId: user, limit: 1)).isEmpty { return true }
        if try !session.grants(matching: GrantFilter(userId: user)).isEmpty { return true }
        return try !session.customerNotes(userId: user).isEmpty
    }
}
