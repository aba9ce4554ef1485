import SubscriptionModel

/// Moves a purchase (its contract and all its orders) from its owner to another user, with one
/// audit row per row moved. Runs in the caller's write transaction.
struct RestoreTransfer {
    let session: any StoreSession
    let now: Int64
    let context: EngineContext

    /// What a transfer did.
    struct Moved {
        var changes: [Change]
        var orderNos: [String]
        var detail: String
        var reminder: String
    }

    /// Moves `match`'s contract and every order of it (`origin_no` = contract id), plus the matched
    /// orders, to `user`. Audit rows carry "transfer from A to B: reason", the actor and the command.
    /// - Parameter appleToken: the restored transaction's appAccountToken, if it carries one.
    func move(_ match: RestoreMatch, to user: String, reason: String, appleToken: String?) throws -> Moved {
        let from = match.owner
        let why = "transfer from \(from) to \(user): \(reason)"
        var changes: [Change] = []

        if var contract = match.contract, contract.userId != user {
            let before = contract
            contract.userId = user
            contract.updatedAt = now
            try session.updateContract(contract)
            changes.append(
                try audited(
                    .contract, key: contract.contractId, before: before, after: contract,
                    columns: (before.columnValues, contract.columnValues), reason: why))
        }

        var orders = match.orders
        if let contract = match.contract {
            orders += try session.orders(originNo: contract.contractId)
        }
        var seen = Set<Int64>()
        var moved: [String] = []
        for order in orders where seen.insert(order.id).inserted && order.userId != user {
            var after = order
            after.userId = user
            after.updatedAt = now
            try session.updateOrder(after)
            changes.append(
                try audited(
                    .order, key: order.no, before: order, after: after,
                    columns: (order.columnValues, after.columnValues), reason: why))
            moved.append(order.no)
        }

        let what = match.contract.map { "contract \($0.contractId) and \(moved.count) order(s)" } ?? "\(moved.count) order(s)"
        let token = appleToken.flatMap { $0.isEmpty ? nil : $0 } ?? originalToken(match)
        let reminder =
            "Apple still ties this purchase to the original appAccountToken"
            + (token.map { " \($0)" } ?? "") + " (\(from)'s); the App Store does not know about the transfer"
        return Moved(changes: changes, orderNos: moved, detail: "\(why): moved \(what)", reminder: reminder)
    }

    /// The order number Apple echoes as appAccountToken: the subscription's first order.
    private func originalToken(_ match: RestoreMatch) -> String? {
        if let contract = match.contract,
            let first = match.orders.first(where: { $0.tradeNo == contract.contractId })
        {
            return first.no
        }
        return match.orders.first?.no
    }

    private func audited<T: Encodable>(
        _ entity: EntityKind, key: String, before: T, after: T,
        columns: ([(String, String?)], [(String, String?)]), reason: String
    ) throws -> Change {
        _ = try session.appendAudit(
            AuditEntry(
                at: now, actor: context.actor, command: context.command, reason: reason, ticket: context.ticket,
                entity: entity, key: key,
                before: EngineRun.json(before), after: EngineRun.json(after)))
        return Change(entity: entity, key: key, action: .update, fields: diff(columns.0, columns.1))
    }
}
