import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an event is decided from: the subscription's state before it. That is every fact of the
/// subscription (the full derivation's input), or — when the subscription's snapshot admits every
/// fact of the event — the facts the rules keep (``SubscriptionSnapshot``), with what the facts
/// left out still hold. Either way the event is decided by the same steps on state + its facts.
struct EngineState {
    /// The facts read, before this event's.
    var read: [Fact]
    /// `read` as a fact set.
    var before: FactSet
    /// The snapshot the facts were read by; nil when every fact was read.
    var snapshot: SubscriptionSnapshot?
    /// The order rows of the orders derived from `before` and the event's facts, when the state is
    /// a snapshot's (nil: every order row of the subscription is read when needed).
    var rows: [Order]?
    /// Order rows that transactions left out of the state hold (the snapshot's pruned periods).
    var claimed: Set<Int64> = []
    /// The derivation of `before` plus every fact of the event, when already made.
    var derivedWithEvent: Derived?

    /// The newest signed date of the stored facts other than this event's (the `stale` verdict's detail).
    func newestOther(_ facts: [Fact]) -> Int64? {
        if let snapshot { return snapshot.newestStoredDate }
        return read.filter { fact in !facts.contains { $0.isSameFact(as: fact) } }.map(\.signedDate).max()
    }

    /// The newest signed date of every stored fact once the event's are stored.
    func newestStored(with facts: [Fact]) -> Int64? {
        let stored = snapshot.map { [$0.newestStoredDate] } ?? read.map(\.signedDate)
        return (stored + facts.map(\.signedDate)).compactMap { $0 }.max()
    }

    /// A derivation of facts read by this state: the newest signed date is the whole history's.
    func derive(_ facts: FactSet, now: Int64) -> Derived {
        var derived = Derivation.derive(facts, now: now)
        if let snapshot {
            let newest = [derived.contract?.newestSignedDate, snapshot.newestEventDate].compactMap { $0 }.max()
            derived.contract?.newestSignedDate = newest
        }
        return derived
    }
}

extension EngineRun {
    /// The state subscription `originalId` is decided from for an event carrying `facts`. Only
    /// reads: nothing is written before the state is chosen.
    mutating func decisionState(_ originalId: String, facts: [Fact], hasContract: Bool) throws -> EngineState {
        if hasContract, let kept = try keptState(originalId, facts: facts) { return kept }
        let read = try session.facts(originalTransactionId: originalId)
        return EngineState(read: read, before: FactSet(read))
    }

    /// The snapshot's state, or nil when it cannot decide the event: no snapshot of the current
    /// format, an override in force, a fact it does not admit, a kept transaction no longer
    /// readable, an order row that is not the subscription's.
    private mutating func keptState(_ originalId: String, facts: [Fact]) throws -> EngineState? {
        guard let text = try session.contractSnapshot(contractId: originalId), let snapshot = SubscriptionSnapshot(text: text),
            !facts.isEmpty, facts.allSatisfy({ snapshot.admits($0, of: originalId) }),
            try session.overridesInForce(originalTransactionId: originalId).isEmpty
        else { return nil }
        let read = try session.facts(originalTransactionId: originalId, signedSince: snapshot.readFloor).filter(snapshot.keeps)
        let before = FactSet(read)
        // Every kept transaction still readable.
        guard Set(before.transactions.keys) == snapshot.transactions else { return nil }
        // A transaction the subscription does not know is not an order yet; a new version of a
        // kept one leaves its period as it was (dates, token) and revokes nothing.
        for fact in facts where fact.kind == .transaction {
            if let versions = before.transactions[fact.key] {
                guard let tx = try? FactBody.transaction(fact.body, key: fact.key),
                    versions.allSatisfy({ SubscriptionSnapshot.isSamePeriod($0.value, tx) })
                else { return nil }
            } else {
                guard try readOrder(tradeNo: fact.key) == nil else { return nil }
            }
        }
        var all = before
        all.add(facts)
        guard facts.allSatisfy({ $0.kind != .transaction || all.transactions[$0.key] != nil }) else { return nil }
        var state = EngineState(read: read, before: before, snapshot: snapshot)
        let after = state.derive(all, now: now)
        guard after.contract != nil else { return nil }
        // The rows of the kept and new transactions, all of this subscription.
        let derivedIds = Set(after.orders.map(\.transaction.transactionId))
        var rows: [Order] = []
        for order in after.orders {
            guard let row = try readOrder(tradeNo: order.transaction.transactionId) else { continue }
            guard row.originNo == originalId else { return nil }
            rows.append(row)
        }
        // An order a token names is the subscription's and holds a transaction: held by a pruned
        // one, it stays claimed (the full derivation's earlier transaction claims it first).
        let tokens = Set(after.orders.compactMap(\.transaction.appAccountToken)).union(snapshot.prunedTokens)
        for token in tokens.sorted() where !token.isEmpty {
            guard let named = try tokenOrder(token) else { continue }
            guard named.originNo == originalId, let held = named.tradeNo else { return nil }
            if !derivedIds.contains(held) { state.claimed.insert(named.id) }
        }
        state.rows = rows
        state.derivedWithEvent = after
        overridesKnownNone = true
        return state
    }
}
