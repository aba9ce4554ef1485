import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The snapshot's path (issue 25): an event whose facts only add to a subscription's history is
/// decided from the facts its snapshot keeps (``SubscriptionSnapshot``) plus the event's, with the
/// same outcome, rows and audit as the full path, which derives from every fact.
extension EngineRun {
    /// The outcome, or nil when the snapshot's path does not apply: no snapshot of the current
    /// format, an override in force, a fact that is not a pure addition or is already stored, an
    /// order row the path cannot vouch for. Nothing is written before it knows it applies, except
    /// the event's facts kept before one turned out to be stored already (``preInserted``).
    mutating func decideFromSnapshot(_ originalId: String, facts: [Fact]) throws -> Outcome? {
        guard let text = try session.contractSnapshot(contractId: originalId), let snapshot = SubscriptionSnapshot(text: text),
            !facts.isEmpty, facts.allSatisfy({ Self.isPureAddition($0, of: originalId, to: snapshot) }),
            try session.overridesInForce(originalTransactionId: originalId).isEmpty
        else { return nil }
        let kept = try session.facts(originalTransactionId: originalId, signedSince: snapshot.readFloor).filter(snapshot.keeps)
        let before = FactSet(kept)
        // Every kept transaction still readable: else the full path.
        guard Set(before.transactions.keys) == snapshot.transactions else { return nil }
        // A transaction the subscription does not know is not an order yet; a new version of a
        // kept one leaves its period as it was (dates, token) and revokes nothing.
        var knownOrder: Order?
        var newTransactions: [String] = []
        for fact in facts where fact.kind == .transaction {
            if let versions = before.transactions[fact.key] {
                guard let tx = FactCoding.decode(TransactionFacts.self, fact.body),
                    versions.allSatisfy({ Self.isSamePeriod($0.value, tx) })
                else { return nil }
                knownOrder = try readOrder(tradeNo: fact.key)
            } else {
                guard try readOrder(tradeNo: fact.key) == nil else { return nil }
                newTransactions.append(fact.key)
            }
        }
        var all = before
        all.add(facts)
        guard facts.allSatisfy({ $0.kind != .transaction || all.transactions[$0.key] != nil }) else { return nil }
        var after = Derivation.derive(all, now: now)
        guard after.contract != nil else { return nil }
        let newestEvent = [after.contract?.newestSignedDate, snapshot.newestEventDate].compactMap { $0 }.max()
        after.contract?.newestSignedDate = newestEvent

        // The rows of the kept and new transactions, all of this subscription.
        let derivedIds = Set(after.orders.map(\.transaction.transactionId))
        var rows: [Order] = []
        for order in after.orders {
            guard let row = try readOrder(tradeNo: order.transaction.transactionId) else { continue }
            guard row.originNo == originalId else { return nil }
            rows.append(row)
        }
        // An order a token names is the subscription's and holds a transaction: held by a pruned
        // one, it stays claimed (the full path's earlier transaction claims it first).
        var claimedByPruned = Set<Int64>()
        let tokens = Set(after.orders.compactMap(\.transaction.appAccountToken)).union(snapshot.prunedTokens)
        for token in tokens.sorted() where !token.isEmpty {
            guard let named = try tokenOrder(token) else { continue }
            guard named.originNo == originalId, let held = named.tradeNo else { return nil }
            if !derivedIds.contains(held) { claimedByPruned.insert(named.id) }
        }

        var inserted: [Fact] = []
        for fact in facts {
            guard try session.insertFact(fact) else {
                preInserted = inserted
                return nil
            }
            inserted.append(fact)
        }
        overridesKnownNone = true
        let outcome = try decideOnKeptFacts(
            originalId, facts: facts, before: before, all: all, after: after, rows: rows, claimedByPruned: claimedByPruned,
            newestOther: snapshot.newestStoredDate, addsOrder: !newTransactions.isEmpty, knownOrder: knownOrder)
        let next = SubscriptionSnapshot.make(
            facts: all, derived: after, carried: snapshot,
            newestStoredDate: ([snapshot.newestStoredDate] + facts.map(\.signedDate)).compactMap { $0 }.max())
        try session.saveContractSnapshot(contractId: originalId, next?.text)
        return outcome
    }

    /// What the full path decides for new facts that are pure additions, on the kept facts.
    private mutating func decideOnKeptFacts(
        _ originalId: String, facts: [Fact], before: FactSet, all: FactSet, after: Derived, rows: [Order], claimedByPruned: Set<Int64>,
        newestOther: Int64?, addsOrder: Bool, knownOrder: Order?
    ) throws -> Outcome {
        let everyOrderStored = after.orders.allSatisfy { order in rows.contains { $0.tradeNo == order.transaction.transactionId } }
        if !addsOrder, everyOrderStored, after.rows == Derivation.derive(before, now: now).rows {
            return try rowsUnchanged(originalId, derived: after, facts: facts, newestOther: newestOther, knownOrder: knownOrder)
        }
        _ = try reconcile(originalId, facts: all, derived: after, orders: rows, claimed: claimedByPruned)
        // (Every fact of the event is new on this path.)
        return try reconciled(originalId, facts: facts, added: facts.count, newestOther: { newestOther }, knownOrder: knownOrder)
    }

    /// A fact whose only effect is to add a candidate to the derivation's rules: a version of a
    /// transaction (not revoked, not upgraded, not a receipt entry, auto-renewable; a kept one, or
    /// one sorting after every pruned period), a renewal info, or a notification whose meaning does
    /// not depend on the current period.
    /// Whether a new version of a kept transaction leaves a stored version's period as it was: the
    /// same dates and token, neither revoked nor upgraded nor a receipt entry.
    static func isSamePeriod(_ stored: TransactionFacts, _ new: TransactionFacts) -> Bool {
        stored.revocationDate == nil && stored.isUpgraded != true && !stored.isFromReceipt
            && stored.purchaseDate == new.purchaseDate && stored.expiresDate == new.expiresDate
            && stored.appAccountToken == new.appAccountToken && stored.productId == new.productId
    }

    static func isPureAddition(_ fact: Fact, of originalId: String, to snapshot: SubscriptionSnapshot) -> Bool {
        guard fact.originalTransactionId == originalId else { return false }
        switch fact.kind {
        case .transaction:
            guard let tx = FactCoding.decode(TransactionFacts.self, fact.body) else { return false }
            return tx.revocationDate == nil && tx.isUpgraded != true && !tx.isFromReceipt && tx.isAutoRenewable
                && (snapshot.transactions.contains(fact.key)
                    || snapshot.prunedLast.map { $0 < SubscriptionSnapshot.SortKey(tx) } ?? true)
        case .renewal:
            return true
        case .notification:
            guard let note = FactCoding.decode(NotificationFact.self, fact.body) else { return false }
            switch note.notificationType {
            case .known(.refund)?, .known(.revoke)?, .known(.refundReversed)?: return false
            default: return true
            }
        }
    }
}
