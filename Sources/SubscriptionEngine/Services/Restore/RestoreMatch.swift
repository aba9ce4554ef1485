import IAPFoundation
import SubscriptionModel

/// What the restore look-up found for one transaction: reads only.
struct RestoreMatch {
    var basis: RestoreBasis
    /// Orders matched, oldest purchase first where the store orders them.
    var orders: [Order]
    var contract: Contract?
    /// The contract's user for subscriptions (it wins over disagreeing orders), else the first order's user.
    var owner: String
    /// Remarks for people (owner disagreement, ignored `--order`, …).
    var notes: [String] = []

    var orderNos: [String] { orders.map(\.no) }
}

/// The outcome of the look-up rules.
enum RestoreFinding {
    case matched(RestoreMatch)
    case none(reason: RestoreReason, candidates: [String], detail: String)
}

/// The look-up rules of `restore`, in order; the first hit wins.
struct RestoreMatcher {
    let session: any StoreSession

    func find(_ tx: TransactionFacts, user: String, explicitOrder: String?) throws -> RestoreFinding {
        var found = try byTransactionId(tx)
        if found == nil { found = try byOriginalTransactionId(tx) }
        if found == nil { found = try byAppAccountToken(tx) }
        if var match = found {
            if let explicitOrder, !match.orderNos.contains(explicitOrder) {
                match.notes.append("--order \(explicitOrder) ignored: the transaction matched by \(match.basis.rawValue)")
            }
            return .matched(match)
        }
        return try byProduct(tx, user: user, explicitOrder: explicitOrder)
    }

    // MARK: rules

    /// 1. transactionId → order (`trade_no`), with its contract.
    private func byTransactionId(_ tx: TransactionFacts) throws -> RestoreMatch? {
        guard let order = try session.order(tradeNo: tx.transactionId) else { return nil }
        let contract = try session.contract(contractId: order.originNo ?? tx.originalTransactionId)
        return owned(basis: .transactionId, orders: [order], contract: contract)
    }

    /// 2. originalTransactionId → contract and its orders (or orders of that subscription without a contract).
    private func byOriginalTransactionId(_ tx: TransactionFacts) throws -> RestoreMatch? {
        let contract = try session.contract(contractId: tx.originalTransactionId)
        let orders = try session.orders(originNo: tx.originalTransactionId)
        guard contract != nil || !orders.isEmpty else { return nil }
        return owned(basis: .originalTransactionId, orders: orders, contract: contract)
    }

    /// 3. appAccountToken → order `no`, with the contract it is linked to.
    private func byAppAccountToken(_ tx: TransactionFacts) throws -> RestoreMatch? {
        guard let token = tx.appAccountToken, !token.isEmpty, let order = try session.order(no: token) else {
            return nil
        }
        let contract = try order.originNo.flatMap { try session.contract(contractId: $0) }
        return owned(basis: .appAccountToken, orders: [order], contract: contract)
    }

    /// 4. The seed's fallback: the user's pending order for the same product that was never linked
    /// to a transaction. Several → ambiguous unless `explicitOrder` names one of them.
    private func byProduct(_ tx: TransactionFacts, user: String, explicitOrder: String?) throws -> RestoreFinding {
        let candidates = try session.orders(matching: OrderFilter(userId: user, status: .pending, productId: tx.productId))
            .filter { $0.tradeNo == nil && $0.originNo == nil }
        if let explicitOrder {
            if let chosen = candidates.first(where: { $0.no == explicitOrder }) {
                var match = RestoreMatch(basis: .product, orders: [chosen], contract: nil, owner: chosen.userId)
                if candidates.count > 1 {
                    match.notes.append("order \(chosen.no) chosen by --order among \(candidates.count) candidates")
                }
                return .matched(match)
            }
            return .none(
                reason: .orderNotEligible, candidates: candidates.map(\.no),
                detail: try whyNotEligible(explicitOrder, tx: tx, user: user))
        }
        switch candidates.count {
        case 0:
            return .none(reason: .noMatch, candidates: [], detail: noMatchDetail(tx, user: user))
        case 1:
            return .matched(RestoreMatch(basis: .product, orders: candidates, contract: nil, owner: candidates[0].userId))
        default:
            let nos = candidates.map(\.no)
            return .none(
                reason: .ambiguous, candidates: nos,
                detail: "ambiguous: \(nos.count) pending \(tx.productId) orders of \(user) were never linked to a transaction "
                    + "(\(nos.joined(separator: ", "))); none picked, choose one with --order \(ShellWord.word(nos[0])) (or another of them)"
            )
        }
    }

    // MARK: helpers

    /// The match with its owner: the contract's user wins over disagreeing orders.
    private func owned(basis: RestoreBasis, orders: [Order], contract: Contract?) -> RestoreMatch {
        var notes: [String] = []
        let owner: String
        if let contract {
            owner = contract.userId
            let others = orders.filter { $0.userId != contract.userId }
            if !others.isEmpty {
                let list = others.map { "\($0.no) (\($0.userId))" }.joined(separator: ", ")
                notes.append(
                    "order(s) \(list) disagree with contract \(contract.contractId) (\(contract.userId)): the contract's owner counts")
            }
        } else {
            owner = orders[0].userId
            let users = Set(orders.map(\.userId))
            if users.count > 1 {
                notes.append(
                    "orders of this purchase belong to several users (\(users.sorted().joined(separator: ", "))); the first order's owner counts"
                )
            }
        }
        return RestoreMatch(basis: basis, orders: orders, contract: contract, owner: owner, notes: notes)
    }

    private func whyNotEligible(_ no: String, tx: TransactionFacts, user: String) throws -> String {
        let prefix = "--order \(no) is not a pending, unlinked \(tx.productId) order of \(user)"
        guard let order = try session.order(no: no) else { return prefix + ": no such order" }
        var why: [String] = []
        if order.userId != user { why.append("it belongs to \(order.userId)") }
        if order.productId != tx.productId { why.append("it is for \(order.productId)") }
        if order.status != .pending { why.append("it is \(order.status.rawValue)") }
        if let trade = order.tradeNo { why.append("it is linked to transaction \(trade)") }
        return prefix + ": " + (why.isEmpty ? "not eligible" : why.joined(separator: ", "))
    }

    private func noMatchDetail(_ tx: TransactionFacts, user: String) -> String {
        let token = tx.appAccountToken.flatMap { $0.isEmpty ? nil : $0 }
        return "no order or contract matches transaction \(tx.transactionId) (transactionId, originalTransactionId "
            + "\(tx.originalTransactionId)\(token.map { ", appAccountToken \($0)" } ?? ""), "
            + "or a pending \(tx.productId) order of \(user))"
    }
}
