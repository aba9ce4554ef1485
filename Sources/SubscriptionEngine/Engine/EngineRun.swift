import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The work of applying one event: decides, writes the rows, collects changes and audit rows.
struct EngineRun {
    let event: SubscriptionEvent
    let session: any StoreSession
    let context: EngineContext
    let now: Int64
    let newOrderNo: @Sendable () -> String
    let effect: Effect

    private(set) var changes: [Change] = []
    private var audits: [AuditEntry] = []
    /// Column values of each changed row before this event (nil for inserts), parallel to `changes`.
    private var firstColumns: [[(String, String?)]?] = []
    private var notes: [String] = []
    /// `override #17 … lifted: …` lines: said even when the lift changed no row.
    private var lifts: [String] = []
    private var touchedOrders: [String] = []
    private var contractId: String?
    /// The subscription's contract row as this run read or wrote it (read once: on MySQL the first
    /// read takes the row lock, and nothing else writes it during the run).
    private var contractRow: (id: String, row: Contract?)?
    /// Order rows this run looked up by `no` or `trade_no`, kept until it writes an order row.
    private var ordersByNo: [String: Order?] = [:]
    private var ordersByTradeNo: [String: Order?] = [:]

    init(
        event: SubscriptionEvent, session: any StoreSession, context: EngineContext, now: Int64,
        newOrderNo: @escaping @Sendable () -> String
    ) {
        self.event = event
        self.session = session
        self.context = context
        self.now = now
        self.newOrderNo = newOrderNo
        self.effect = Effect(type: event.notificationType, subtype: event.subtype)
    }

    /// A ledger row of the same bytes that is still unmatched: the item is not stored twice.
    private var twin: LedgerEntry?
    /// The ledger row being replayed, if any.
    var replayingId: Int64?
    /// The audit rows' reason when no event caused the change (re-derivation).
    var auditReason: String?
    /// Whether this run has seen that the subscription has no override in force (choosing the
    /// snapshot's state asks first; nothing in the run adds one): not asked again.
    var overridesKnownNone = false
    /// The derivation `reconcile` wrote.
    private var lastDerived: Derived?

    /// Writes the audit rows of a run that had no ledger row (re-derivation).
    /// Writes the audit rows; their ids, in order (one per change).
    @discardableResult
    func writeAudits() throws -> [Int64] {
        try audits.map { try session.appendAudit($0) }
    }

    // MARK: deciding

    mutating func decide() throws -> Outcome {
        // The claim is a unique key taken before any work, in this transaction: a concurrent
        // delivery of the same notification waits here and then sees it processed.
        if let uuid = event.notificationUUID, try !session.claimNotification(uuid) {
            let prior = try session.processedLedgerEntry(notificationUUID: uuid)
            return Outcome(
                verdict: .duplicate,
                detail: "notification \(uuid) was already processed"
                    + (prior.map { " (ledger #\($0.id): \($0.verdict.rawValue))" } ?? ""))
        }
        let facts = event.facts
        guard let originalId = facts.first?.originalTransactionId else {
            return Outcome(verdict: .ignored, detail: EventRule.withoutTransaction(event.notificationType))
        }
        contractId = originalId
        if let why = try ownershipConflict(originalId) {
            return Outcome(verdict: .conflict, detail: why)
        }
        let knownOrder = try event.transaction.flatMap { try readOrder(tradeNo: $0.transactionId) }
        // What the facts gave before this event, for a subscription that has rows.
        // (The contract is read first: on MySQL FOR UPDATE, so a concurrent writer of the same
        // subscription waits here and then sees every fact committed before it.)
        let hasContract = try readContract(originalId) != nil
        let state = try decisionState(originalId, facts: facts, hasContract: hasContract)
        var inserted: [Fact] = []
        for fact in facts where try session.insertFact(fact) { inserted.append(fact) }
        var all = state.before
        let outcome = try decide(
            originalId, facts: facts, inserted: inserted, state: state, all: &all, hasContract: hasContract, knownOrder: knownOrder)
        try saveSnapshot(originalId, facts: facts, all: all, state: state)
        return outcome
    }

    /// Decides the event from `state` plus the facts it added (`inserted`, those of `facts` not
    /// stored before); `all` (the state's facts) gets the added ones.
    private mutating func decide(
        _ originalId: String, facts: [Fact], inserted: [Fact], state: EngineState, all: inout FactSet, hasContract: Bool,
        knownOrder: Order?
    ) throws -> Outcome {
        var derivedAfter: Derived?
        let added = inserted.count
        let compares = hasContract && added > 0
        // A transaction the facts did not know before is one order more: the rows change whatever
        // else the facts say, so the rows before need not be derived (a renewal's usual case).
        let unknown = Set(inserted.lazy.filter { $0.kind == .transaction && state.before.transactions[$0.key] == nil }.map(\.key))
        // (Derived only when there is something new to compare it with: `all` is still the facts before.)
        let before = compares && unknown.isEmpty ? state.derive(all, now: now).rows : nil as RowValues?
        all.add(inserted)
        let addsOrder = unknown.contains { all.transactions[$0] != nil }
        // The subscription's order rows, handed to `reconcile` (nothing writes them in between).
        var storedOrders = state.rows
        // New facts that derive the same rows as before change nothing (the stored rows are the
        // derivation with the hand overrides in force applied, and those stay in force)…
        if compares {
            let after = (added == facts.count ? state.derivedWithEvent : nil) ?? state.derive(all, now: now)
            derivedAfter = after
            lastDerived = after
            if storedOrders == nil { storedOrders = try session.orders(originNo: originalId) }
            let stored = Set(storedOrders?.compactMap(\.tradeNo) ?? [])
            let everyOrderStored = after.orders.allSatisfy { stored.contains($0.transaction.transactionId) }
            // … unless they lift a hand override (a newer period): then the rows are written again.
            // (An unreadable new transaction adds no order: then the rows before are derived here.)
            if !addsOrder, after.rows == before ?? state.derive(state.before, now: now).rows, everyOrderStored,
                try heldOverrides(originalId, facts: all, orders: []).lifted.isEmpty
            {
                return try rowsUnchanged(
                    originalId, derived: after, facts: facts, newestOther: state.newestOther(facts), knownOrder: knownOrder)
            }
        }
        // Nothing new to derive from, and rows to show for it: nothing changes (no override can
        // be lifted without a new fact).
        if added == 0, knownOrder != nil || hasContract {
            if let order = knownOrder { touchedOrders.append(order.no) }
            return Outcome(
                verdict: .duplicate,
                detail: knownOrder.map {
                    "transaction \($0.tradeNo ?? "") is already order \($0.no); every fact it carries was already recorded"
                }
                    ?? "every fact it carries was already recorded: nothing to change")
        }

        guard
            try reconcile(
                originalId, facts: all, derived: derivedAfter ?? state.snapshot.map { _ in state.derive(all, now: now) },
                orders: storedOrders, claimed: state.claimed) != nil
        else {
            let tx = event.transaction
            let token = tx?.appAccountToken.flatMap { $0.isEmpty ? nil : $0 }
            let why =
                tx == nil
                ? "no contract \(originalId)"
                : token.map { "no order with no = \($0) and no contract \(originalId)" }
                    ?? "no appAccountToken and no contract \(originalId)"
            if replayingId == nil {
                twin = try session.ledger(
                    transactionIds: tx.map { [$0.transactionId] } ?? [], originalTransactionIds: [originalId], appAccountTokens: []
                ).last {
                    $0.verdict == .unmatched && $0.raw == event.raw && $0.transactionId == tx?.transactionId
                        && $0.notificationUUID == event.notificationUUID
                }
            }
            let kept = twin.map { "; already recorded as ledger #\($0.id), not stored twice" } ?? ""
            return Outcome(
                verdict: .unmatched,
                detail: why + "; its facts are kept and recorded for replay (fix the cause, then run `iapctl notify --replay-unmatched`)"
                    + kept)
        }
        return try reconciled(
            originalId, facts: facts, added: added, newestOther: { state.newestOther(facts) }, knownOrder: knownOrder)
    }

    /// Stores the subscription's snapshot of its facts now (`all`: the state's plus the event's),
    /// when it has a contract: the next event that only adds facts is decided from it.
    private mutating func saveSnapshot(_ originalId: String, facts: [Fact], all: FactSet, state: EngineState) throws {
        guard contractRow?.row != nil else { return }
        let derived = lastDerived ?? state.derive(all, now: now)
        let snapshot = SubscriptionSnapshot.make(
            facts: all, derived: derived, carried: state.snapshot, newestStoredDate: state.newestStored(with: facts))
        try session.saveContractSnapshot(contractId: originalId, snapshot?.text)
    }

    /// New facts that derive the rows already stored: only the newest fact's date moves (kept, but
    /// not a change people see); the verdict is ``unchanged(_:facts:newestOther:knownOrder:)``'s.
    mutating func rowsUnchanged(_ originalId: String, derived after: Derived, facts: [Fact], newestOther: Int64?, knownOrder: Order?)
        throws -> Outcome
    {
        if var contract = try readContract(originalId), let dc = after.contract, contract.lastEventDate != dc.newestSignedDate {
            contract.lastEventDate = dc.newestSignedDate
            try updateContract(contract)
        }
        return try unchanged(originalId, facts: facts, newestOther: newestOther, knownOrder: knownOrder)
    }

    /// The outcome after `reconcile` found an owner: the changes it wrote; else a duplicate when none
    /// of the event's facts was new (`added` 0), else ``unchanged(_:facts:newestOther:knownOrder:)``'s
    /// verdict with the overrides lifted. `newestOther` is asked only for that verdict.
    mutating func reconciled(
        _ originalId: String, facts: [Fact], added: Int, newestOther: () -> Int64?, knownOrder: Order?
    ) throws -> Outcome {
        if !changes.isEmpty {
            let detail = (changes.map(\.summary) + notes + lifts).joined(separator: "; ")
            return Outcome(verdict: .applied, changes: changes, detail: detail)
        }
        if added == 0 {
            return Outcome(verdict: .duplicate, detail: "every fact it carries was already recorded: nothing to change")
        }
        var outcome = try unchanged(originalId, facts: facts, newestOther: newestOther(), knownOrder: knownOrder)
        if !lifts.isEmpty { outcome.detail = ([outcome.detail] + lifts).joined(separator: "; ") }
        return outcome
    }

    /// The verdict of new facts that changed no row: a payment already recorded is a duplicate;
    /// an informational type is ignored; facts older than what already decides the rows are stale.
    /// `newestOther`: the newest signed date of the subscription's other kept facts.
    mutating func unchanged(_ originalId: String, facts: [Fact], newestOther: Int64?, knownOrder: Order?) throws -> Outcome {
        if let order = knownOrder, effect.isPayment {
            return Outcome(verdict: .duplicate, detail: "transaction \(order.tradeNo ?? "") is already order \(order.no)")
        }
        if effect == .informational {
            return Outcome(verdict: .ignored, detail: EventRule.informational(event))
        }
        let signed = facts.map(\.signedDate).max() ?? 0
        if let newest = newestOther, newest > signed {
            return Outcome(
                verdict: .stale,
                detail: "signed \(Timestamp.iso8601(signed)), before facts signed \(Timestamp.iso8601(newest)) that already decide "
                    + "the rows: facts recorded, rows unchanged")
        }
        let state =
            try readContract(originalId).map { "contract \(originalId) is already \($0.status.rawValue)" }
            ?? "nothing to change"
        return Outcome(verdict: .ignored, detail: "no change: " + state)
    }

    /// A transaction whose appAccountToken names another user's order while the subscription
    /// belongs to someone else: one owner per contract, so nothing may change.
    private mutating func ownershipConflict(_ originalId: String) throws -> String? {
        guard let tx = event.transaction, let token = tx.appAccountToken, !token.isEmpty,
            let named = try tokenOrder(token), named.originNo != originalId
        else { return nil }
        let owner: String?
        if let contract = try readContract(originalId) {
            owner = contract.userId
        } else {
            owner = try session.orders(originNo: originalId).first?.userId
        }
        guard let owner, owner != named.userId else { return nil }
        return "conflict: transaction \(tx.transactionId) names order \(named.no) of user \(named.userId), but subscription "
            + "\(originalId) belongs to \(owner); nothing changed (one owner per contract). Decide with "
            + "`iapctl restore --user \(ShellWord.word(named.userId)) --policy transfer` or correct the order"
    }

    /// The order an appAccountToken names (order numbers are lowercase; Apple may echo either case).
    mutating func tokenOrder(_ token: String) throws -> Order? {
        if let order = try readOrder(no: token) { return order }
        // Most tokens are already lowercase ASCII (a UUID as StoreKit echoes it): no second look-up.
        if token.utf8.allSatisfy({ $0 < 0x80 && !(0x41...0x5A).contains($0) }) { return nil }
        return token.lowercased() != token ? try readOrder(no: token.lowercased()) : nil
    }

    // MARK: rows read once per run

    mutating func readContract(_ id: String) throws -> Contract? {
        if let known = contractRow, known.id == id { return known.row }
        let row = try session.contract(contractId: id)
        contractRow = (id, row)
        return row
    }

    mutating func updateContract(_ contract: Contract) throws {
        try session.updateContract(contract)
        contractRow = (contract.contractId, contract)
    }

    /// A row found is kept (on MySQL it is now locked, so it stays as read); a row not found is
    /// looked up again (an order the app creates meanwhile is seen, as before).
    private mutating func readOrder(no: String) throws -> Order? {
        if let known = ordersByNo[no] { return known }
        let row = try session.order(no: no)
        if row != nil { ordersByNo[no] = .some(row) }
        return row
    }

    /// Kept found or not: `reconcile` asks only for a transaction none of the subscription's rows
    /// holds (those are read after the contract's lock), and the engine writes `trade_no` only on
    /// the rows of the transaction's own subscription.
    mutating func readOrder(tradeNo: String) throws -> Order? {
        if let known = ordersByTradeNo[tradeNo] { return known }
        let row = try session.order(tradeNo: tradeNo)
        ordersByTradeNo[tradeNo] = .some(row)
        return row
    }

    /// An order row is written: the look-ups kept so far may no longer be what the store holds.
    private mutating func ordersWritten() {
        ordersByNo = [:]
        ordersByTradeNo = [:]
    }

    // MARK: deriving the rows

    /// Derives the orders and contract of `originalId` from all its facts and writes what differs.
    /// Returns nil when there is no owner to attach them to (unmatched). `derived`: the derivation
    /// of `known`, when the caller already made it; `orders`: the subscription's order rows, when the
    /// caller read them in this transaction and nothing wrote them since.
    /// `claimed`: rows that transactions left out of `known` hold (the snapshot's pruned periods).
    mutating func reconcile(
        _ originalId: String, facts known: FactSet? = nil, derived made: Derived? = nil, orders read: [Order]? = nil,
        claimed claimedBefore: Set<Int64> = []
    ) throws -> Derived? {
        // The contract first: on MySQL it is read FOR UPDATE, so a concurrent writer of the same
        // subscription waits here and then sees every fact committed before it.
        let contract = try readContract(originalId)
        let facts = try known ?? FactSet(session.facts(originalTransactionId: originalId))
        let derived = made.flatMap { known == nil ? nil : $0 } ?? Derivation.derive(facts, now: now)
        for unreadable in derived.unreadable { notes.append("\(unreadable); it was not used") }
        if event.transaction?.isFromReceipt == true, let dc = derived.contract, !dc.statusFromReceipts {
            notes.append("from an app receipt: contract state left to Apple's notifications")
        }
        let existing = try read ?? session.orders(originNo: originalId)

        var tokenOrders: [String: Order] = [:]
        for d in derived.orders {
            guard let token = d.transaction.appAccountToken, !token.isEmpty, tokenOrders[token] == nil else { continue }
            if let order = try tokenOrder(token) { tokenOrders[token] = order }
        }
        let owner =
            contract?.userId
            ?? derived.orders.lazy.compactMap { d in d.transaction.appAccountToken.flatMap { tokenOrders[$0]?.userId } }.first
            ?? existing.first?.userId
        guard let owner else { return nil }

        // Which order row each transaction is: the row already holding it (a payment recorded stays
        // on its row), else the order its token names (the earliest transaction carrying the token
        // claims it), else a new order. An order the token names that is created after the
        // transaction got a row of its own stays the app's: claimed, so no later transaction takes
        // it, and left as it is (moving the payment would leave its first row paid without one).
        var claimed = claimedBefore
        var rows: [(DerivedOrder, Order?)] = []
        let existingByTradeNo = Dictionary(
            existing.compactMap { order in order.tradeNo.map { ($0, order) } }, uniquingKeysWith: { first, _ in first })
        for d in derived.orders {
            let tx = d.transaction
            var row: Order?
            let named = tx.appAccountToken.flatMap { tokenOrders[$0] }.flatMap { claimed.contains($0.id) ? nil : $0 }
            let namedFits =
                named.map { named in
                    named.originNo == originalId
                        || (named.userId == owner && (named.tradeNo == nil || named.tradeNo == tx.transactionId))
                } ?? false
            // (The subscription's rows first; another row is looked up only when no named order fits, as before.)
            let holder = try existingByTradeNo[tx.transactionId] ?? (namedFits ? nil : readOrder(tradeNo: tx.transactionId))
            if let holder, !claimed.contains(holder.id) {
                row = holder
                if let named, named.id != holder.id { claimed.insert(named.id) }
            } else if namedFits {
                row = named
            }
            if let row { claimed.insert(row.id) }
            rows.append((d, row))
        }
        // A row moving to another transaction lets go of its old one first, so trade_no stays
        // unique at every step.
        for (d, row) in rows {
            guard let row, let held = row.tradeNo, held != d.transaction.transactionId else { continue }
            var freed = row
            freed.tradeNo = nil
            try session.updateOrder(freed)
            ordersWritten()
        }
        // Hand overrides in force are applied over the derivation; those the facts now lift are recorded as lifted.
        let held = try heldOverrides(
            originalId, facts: facts,
            orders: rows.compactMap { d, row in row.map { ($0, d.transaction.transactionId) } })
        for (override, why) in held.lifted {
            var lifted = override
            lifted.liftedAt = now
            lifted.liftedBy = why
            try session.updateOverride(lifted)
            lifts.append(
                "override #\(override.auditId) (\(override.entity.rawValue) \(override.key) \(override.field) set by hand) lifted: \(why)")
        }
        for (d, row) in rows {
            try writeOrder(d, onto: row, owner: owner, overrides: held.inForce.filter { $0.entity == .order && $0.key == row?.no })
        }

        if let dc = derived.contract {
            if let contract {
                var after = contract
                apply(dc, to: &after)
                after.applyOverrides(held.inForce.filter { $0.entity == .contract && $0.key == originalId })
                try saveContract(contract, after)
            } else {
                var created = Contract(
                    contractId: originalId, userId: owner, productId: dc.productId, createdAt: now, updatedAt: now)
                apply(dc, to: &created)
                created = try session.insertContract(created)
                contractRow = (created.contractId, created)
                record(
                    .contract, key: created.contractId, before: nil as Contract?, after: created, columns: created.columnValues,
                    oldColumns: nil)
            }
        }
        lastDerived = derived
        return derived
    }

    /// The hand overrides of subscription `originalId`'s rows that are in force, split into those
    /// `facts` leave in force and those they lift (with why). `orders` are the order rows being
    /// written, each with the transaction it holds now: a row not yet of the subscription (the order
    /// its first purchase names) brings its overrides, which then belong to the subscription.
    private mutating func heldOverrides(_ originalId: String, facts: FactSet, orders: [(row: Order, transactionId: String)]) throws
        -> (inForce: [Override], lifted: [(Override, String)])
    {
        var held = overridesKnownNone ? [] : try session.overridesInForce(originalTransactionId: originalId)
        for (order, _) in orders where order.originNo != originalId {
            for var override in try session.overrides(entity: .order, key: order.no) where override.inForce {
                override.originalTransactionId = originalId
                try session.updateOverride(override)
                held.append(override)
            }
        }
        var inForce: [Override] = []
        var lifted: [(Override, String)] = []
        for override in held {
            var tradeNo: String?
            if override.entity == .order {
                tradeNo =
                    try orders.first { $0.row.no == override.key }?.transactionId ?? readOrder(no: override.key)?.tradeNo
            }
            if let why = OverrideRule.lifter(override, tradeNo: tradeNo, facts: facts) {
                lifted.append((override, why))
            } else {
                inForce.append(override)
            }
        }
        return (inForce, lifted)
    }

    private func apply(_ d: DerivedContract, to contract: inout Contract) {
        contract.productId = d.productId
        contract.status = d.status
        contract.autoRenew = d.autoRenew
        contract.expiresDate = d.expiresDate
        contract.nextProductId = d.nextProductId
        contract.environment = d.environment ?? contract.environment ?? event.environment
        contract.lastEventDate = d.newestSignedDate
    }

    private mutating func writeOrder(_ d: DerivedOrder, onto row: Order?, owner: String, overrides: [Override]) throws {
        let tx = d.transaction
        let before = row
        var order =
            before
            ?? Order(
                no: newOrderNo(), userId: owner, productId: tx.productId, createdAt: now, updatedAt: now)
        if let before, before.tradeNo == nil, before.productId != tx.productId {
            notes.append("order \(before.no) was created for \(before.productId); Apple charged for \(tx.productId)")
        }
        order.productId = tx.productId
        order.status = d.status
        order.tradeNo = tx.transactionId
        order.originNo = tx.originalTransactionId
        order.purchaseDate = tx.purchaseDate
        order.expiresDate = tx.expiresDate
        order.environment = tx.environment ?? order.environment ?? event.environment
        order.price = tx.price ?? order.price
        order.currency = tx.currency ?? order.currency
        order.applyOverrides(overrides)
        if let before {
            try saveOrder(before, order)
        } else {
            order = try session.insertOrder(order)
            ordersWritten()
            record(.order, key: order.no, before: nil as Order?, after: order, columns: order.columnValues, oldColumns: nil)
            touchedOrders.append(order.no)
        }
    }

    private mutating func saveOrder(_ before: Order, _ after: Order) throws {
        // Equal rows have equal columns: most rows of a subscription's history are unchanged.
        guard before != after, before.columnValues.map(\.1) != after.columnValues.map(\.1) else { return }
        var after = after
        after.updatedAt = now
        try session.updateOrder(after)
        ordersWritten()
        record(.order, key: after.no, before: before, after: after, columns: after.columnValues, oldColumns: before.columnValues)
        touchedOrders.append(after.no)
    }

    private mutating func saveContract(_ before: Contract, _ after: Contract) throws {
        var after = after
        if before.columnValues.map(\.1) != after.columnValues.map(\.1) {
            after.updatedAt = now
            try updateContract(after)
            record(
                .contract, key: after.contractId, before: before, after: after, columns: after.columnValues,
                oldColumns: before.columnValues)
        } else if before.lastEventDate != after.lastEventDate {
            // Only the newest fact's date moved: kept, but not a change people see.
            try updateContract(after)
        }
    }

    // MARK: recording

    private mutating func record<T: Encodable>(
        _ entity: EntityKind, key: String, before: T?, after: T, columns: [(String, String?)],
        oldColumns: [(String, String?)]?
    ) {
        // One row changed twice by one event (created, then updated) is one change and one audit row.
        if let i = changes.firstIndex(where: { $0.entity == entity && $0.key == key }) {
            let first = firstColumns[i]
            changes[i].fields = diff(first, columns)
            audits[i].after = Self.json(after)
            return
        }
        firstColumns.append(oldColumns)
        changes.append(
            Change(entity: entity, key: key, action: before == nil ? .insert : .update, fields: diff(oldColumns, columns)))
        audits.append(
            AuditEntry(
                at: now, actor: context.actor, command: context.command,
                reason: auditReason ?? context.reason
                    ?? event.notificationType.map { "\($0)\(event.subtype.map { "/" + $0.rawValue } ?? "")" }
                    ?? "\(event.source.rawValue) submission", ticket: context.ticket,
                entity: entity, key: key, before: before.flatMap { Self.json($0) }, after: Self.json(after)))
    }

    static func json<T: Encodable>(_ value: T) -> String? { EngineAuditJSON.encode(value) }

    /// Writes the ledger row (or rewrites the replayed one) and the audit rows.
    mutating func record(_ outcome: Outcome, replaying: Int64?) throws -> Outcome {
        var outcome = outcome
        let tx = event.transaction
        if let uuid = event.notificationUUID, outcome.verdict == .unmatched || outcome.verdict == .rejected {
            try session.releaseNotificationClaim(uuid)
        }
        let ledgerId: Int64
        var auditsWritten = false
        if let twin, replaying == nil {
            ledgerId = twin.id
        } else if let replaying {
            try session.updateLedger(id: replaying, verdict: outcome.verdict, detail: "replayed: " + outcome.detail)
            ledgerId = replaying
        } else {
            ledgerId = try session.appendLedger(
                LedgerEntry(
                    receivedAt: now, source: event.source, notificationUUID: event.notificationUUID,
                    notificationType: event.notificationType?.rawValue, subtype: event.subtype?.rawValue,
                    transactionId: tx?.transactionId,
                    originalTransactionId: tx?.originalTransactionId ?? event.renewal?.originalTransactionId,
                    appAccountToken: tx?.appAccountToken.flatMap { $0.isEmpty ? nil : $0 },
                    signedDate: event.signedDate ?? tx?.signedDate, verdict: outcome.verdict,
                    detail: outcome.detail, raw: event.raw),
                audits: audits)
            auditsWritten = true
        }
        for var audit in audits where !auditsWritten {
            audit.ledgerId = ledgerId
            _ = try session.appendAudit(audit)
        }
        outcome.ledgerId = ledgerId
        outcome.orderNos = uniqued(touchedOrders)
        outcome.contractId = contractId
        return outcome
    }

    private func uniqued(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
