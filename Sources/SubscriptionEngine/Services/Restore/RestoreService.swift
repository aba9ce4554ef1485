import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

/// `iapctl restore`: which order/contract a restored transaction is, whether it belongs to the
/// restoring user, and (with `--apply`) making the database reflect it through the one engine.
///
/// Look-up rules, first hit wins: 1. `transactionId` → order `trade_no`; 2. `originalTransactionId`
/// → contract and its orders; 3. `appAccountToken` → order `no`; 4. the seed's fallback: the user's
/// pending order for the same product that was never linked to a transaction. A purchase of another
/// user is never credited silently (seed 000); only an explicit, audited transfer moves it.
///
/// Both methods work inside the caller's transaction: a read transaction for look-ups, one write
/// transaction per item for `apply`.
public final class RestoreService: Sendable {
    /// The engine restored transactions go through (and `restore` reconciles a lapsed contract with).
    public let engine: SubscriptionEventEngine

    /// The engine's clock: the time a lapse or an entitlement is judged at.
    public func now() -> Int64 { engine.now() }

    /// A service that applies restored transactions through `engine`.
    public init(engine: SubscriptionEventEngine) {
        self.engine = engine
    }

    /// Looks the verified transaction `tx` up for `user`; writes nothing.
    ///
    /// - Parameter explicitOrder: `--order NO`: picks one of several product-fallback candidates.
    public func lookup(
        _ tx: TransactionFacts, user: String, explicitOrder: String?, in session: any StoreSession
    ) throws -> RestoreResult {
        switch try RestoreMatcher(session: session).find(tx, user: user, explicitOrder: explicitOrder) {
        case .none(let reason, let candidates, let detail):
            return RestoreResult(verdict: .unknown, detail: detail, reason: reason, candidates: candidates)
        case .matched(let match):
            return result(for: match, tx: tx, user: user)
        }
    }

    /// The order in which one input item's restored transactions (a StoreKit 1 receipt's entries,
    /// oldest purchase first) are applied: as given, except that per subscription
    /// (`originalTransactionId`) the first entry that matches an order or contract goes before the
    /// subscription's other entries. Once it is applied the others match its contract by
    /// `originalTransactionId`, so one run links every entry of a subscription even when only a
    /// later one (another product of the group, say) matches a pending order. Reads only.
    ///
    /// - Returns: indices into `restored`, each once.
    public func applicationOrder(
        _ restored: [TransactionFacts], user: String, explicitOrder: String?, in session: any StoreSession
    ) throws -> [Int] {
        guard restored.count > 1 else { return Array(restored.indices) }
        var anchors: [String: Int?] = [:]
        var order: [Int] = []
        var placed = Set<Int>()
        for (index, tx) in restored.enumerated() where !placed.contains(index) {
            let subscription = tx.originalTransactionId
            if anchors[subscription] == nil {
                anchors[subscription] = try restored.indices.first { other in
                    guard restored[other].originalTransactionId == subscription else { return false }
                    let found = try lookup(restored[other], user: user, explicitOrder: explicitOrder, in: session)
                    return found.verdict != .unknown
                }
            }
            if let anchor = anchors[subscription] ?? nil, placed.insert(anchor).inserted { order.append(anchor) }
            if placed.insert(index).inserted { order.append(index) }
        }
        return order
    }

    /// Looks `tx` up for `user` and, where allowed, makes the database reflect it (source `restore`).
    ///
    /// - `restorable`: the transaction goes through the engine exactly as a purchase would (a pending
    ///   order is linked and its contract created or updated; an unseen renewal is recorded). For the
    ///   product fallback (or an explicit order) the event carries the chosen order's `no` as its
    ///   `appAccountToken`, so the engine links that order: this is the seed's product fallback, and the
    ///   ledger row shows the order number in place of Apple's token.
    /// - `owned-by-other`: `keep` writes nothing; `transfer` (and `transfer-if-inactive` when the
    ///   owner is not entitled now: not inside a paid period of an active or canceled contract, nor
    ///   in the billing grace period) moves the contract and
    ///   all its orders to `user` with audit rows, then applies the transaction through the engine;
    ///   the verdict becomes `transferred`. A refusal is reported as `owned-by-other`
    ///   (reason ``RestoreReason/refusedByPolicy``), not thrown.
    /// - `unknown`: writes nothing.
    ///
    /// - Throws: ``RestoreError/missingReason(_:)`` when a transfer policy comes without a reason
    ///   (checked before anything is read or written); store errors.
    public func apply(
        _ tx: TransactionFacts, raw: String, user: String, policy: RestorePolicy, reason: String?,
        explicitOrder: String?, context: EngineContext, in session: any StoreSession
    ) throws -> RestoreResult {
        let why = reason?.trimmingSpaces ?? ""
        if policy != .keep, why.isEmpty { throw RestoreError.missingReason(policy) }

        let match: RestoreMatch
        switch try RestoreMatcher(session: session).find(tx, user: user, explicitOrder: explicitOrder) {
        case .none(let reason, let candidates, let detail):
            var out = RestoreResult(
                verdict: .unknown, detail: detail + "; no row changed", reason: reason, candidates: candidates)
            try keep(tx, raw: raw, verdict: .unmatched, result: &out, context: context, session: session)
            return out
        case .matched(let found):
            match = found
        }

        if match.owner == user {
            return try applyThroughEngine(
                tx, raw: raw, match: match, user: user, context: context, session: session,
                base: result(for: match, tx: tx, user: user))
        }

        var refused = result(for: match, tx: tx, user: user)
        switch policy {
        case .keep:
            refused.reason = .keptByPolicy
            refused.detail += "; kept with \(match.owner) (--policy keep): no row changed"
            try keep(tx, raw: raw, verdict: .conflict, result: &refused, context: context, session: session)
            return refused
        case .transferIfInactive:
            if let contract = match.contract, contract.entitles(at: engine.now()) {
                refused.reason = .refusedByPolicy
                let state = contract.status == .active ? "" : " (\(contract.status.rawValue))"
                let until = contract.expiresDate.map { ", paid until \(Timestamp.iso8601($0))" } ?? ""
                refused.detail += "; refused by policy: contract is active\(state)\(until); no row changed"
                try keep(tx, raw: raw, verdict: .conflict, result: &refused, context: context, session: session)
                return refused
            }
            if let contract = match.contract, let lapse = Lapse.of(contract, at: engine.now()) {
                // Lapsed is the database not knowing, not the owner being inactive: Apple decides.
                refused.reason = .refusedByPolicy
                refused.detail +=
                    "; refused by policy: contract \(contract.contractId) \(lapse.text), so whether it is inactive is "
                    + "Apple's word, not ours: run `iapctl apple reconcile --contract \(ShellWord.word(contract.contractId))` "
                    + "(or give restore the Apple API settings: --key-file, --key-id, --issuer-id), then restore again; no row changed"
                try keep(tx, raw: raw, verdict: .conflict, result: &refused, context: context, session: session)
                return refused
            }
            if match.contract == nil {
                refused.reason = .refusedByPolicy
                refused.detail += "; refused by policy: no contract whose inactivity would allow a transfer; no row changed"
                try keep(tx, raw: raw, verdict: .conflict, result: &refused, context: context, session: session)
                return refused
            }
        case .transfer:
            break
        }

        let transfer = RestoreTransfer(session: session, now: engine.now(), context: context)
        let moved = try transfer.move(match, to: user, reason: why, appleToken: tx.appAccountToken)
        var moving = match
        moving.owner = user
        var out = try applyThroughEngine(
            tx, raw: raw, match: moving, user: user, context: context, session: session,
            base: RestoreResult(verdict: .transferred, basis: match.basis, detail: moved.detail))
        out.verdict = .transferred
        out.previousOwner = match.owner
        out.changes = moved.changes + out.changes
        out.orderNos = unique(moved.orderNos + out.orderNos)
        out.reminder = moved.reminder
        out.detail = ([moved.detail] + match.notes + [out.engineOutcome.map(engineSummary) ?? "", moved.reminder])
            .filter { !$0.isEmpty }.joined(separator: "; ")
        return out
    }

    // MARK: helpers

    /// Keeps a restored item that changed no row in the ledger (every JWS received is kept):
    /// `unknown` as `unmatched` (replayable once its order exists), `owned-by-other` as `conflict`.
    private func keep(
        _ tx: TransactionFacts, raw: String, verdict: Verdict, result: inout RestoreResult, context: EngineContext,
        session: any StoreSession
    ) throws {
        let id = try session.appendLedger(
            LedgerEntry(
                receivedAt: engine.now(), source: .restore, transactionId: tx.transactionId,
                originalTransactionId: tx.originalTransactionId,
                appAccountToken: tx.appAccountToken.flatMap { $0.isEmpty ? nil : $0 }, signedDate: tx.signedDate,
                verdict: verdict, detail: "restore --apply (\(context.actor)): " + result.detail, raw: raw))
        result.detail += "; kept in the ledger (#\(id))"
    }

    /// Runs `tx` through the engine with source `restore` and reports the state afterwards.
    private func applyThroughEngine(
        _ tx: TransactionFacts, raw: String, match: RestoreMatch, user: String, context: EngineContext,
        session: any StoreSession, base: RestoreResult
    ) throws -> RestoreResult {
        var facts = tx
        if match.basis == .product, let chosen = match.orders.first {
            // The seed's product fallback: make the chosen pending order the one the engine links.
            facts.appAccountToken = chosen.no
        }
        let event = SubscriptionEvent(
            source: .restore, signedDate: tx.signedDate, environment: tx.environment, transaction: facts, raw: raw)
        let outcome = try engine.apply(event, in: session, context: context)

        var out = base
        out.engineOutcome = outcome
        out.changes = outcome.changes
        out.orderNos = unique(match.orderNos + outcome.orderNos)
        let contract = try session.contract(contractId: match.contract?.contractId ?? tx.originalTransactionId)
        out.contractId = contract?.contractId
        out.owner = contract?.userId ?? user
        out.contractStatus = contract?.status
        out.contractExpires = contract?.expiresDate
        let holder = try session.order(tradeNo: tx.transactionId)
        // Linked: the engine took the transaction and an order of the user holds it.
        let refused: Set<Verdict> = [.unmatched, .conflict, .rejected]
        out.linked = holder?.userId == user && !refused.contains(outcome.verdict)
        if base.verdict == .restorable {
            out.detail += "; " + engineSummary(outcome)
            if !out.linked {
                // Said as it is: the engine's verdict, not `restored`, when no order of the user holds it.
                out.verdict = RestoreVerdict(engine: outcome.verdict)
                let held = holder.map { "transaction \(tx.transactionId) is order \($0.no) of \($0.userId)" }
                out.detail +=
                    "; not restored: " + (refused.contains(outcome.verdict) ? "the engine did not take it" : held ?? "no order holds it")
            }
        }
        return out
    }

    /// The engine's verdict in a few words; its row changes are in ``RestoreResult/changes``.
    private func engineSummary(_ outcome: Outcome) -> String {
        switch outcome.verdict {
        case .applied:
            return "engine: applied (\(outcome.changes.count) row change(s))"
        default:
            return "engine: \(outcome.verdict.rawValue): \(outcome.detail)"
        }
    }

    /// The look-up result of a match, before any write.
    private func result(for match: RestoreMatch, tx: TransactionFacts, user: String) -> RestoreResult {
        let what =
            match.contract.map { "contract \($0.contractId)" }
            ?? "order(s) \(match.orderNos.joined(separator: ", "))"
        var detail = "transaction \(tx.transactionId) matched \(what) by \(match.basis.rawValue)"
        if match.basis == .product {
            detail += " (the seed's fallback: \(user)'s pending \(tx.productId) order never linked to a transaction)"
        }
        let mine = match.owner == user
        detail += mine ? "; it belongs to \(user)" : "; it belongs to \(match.owner), not \(user): never moved silently"
        detail = ([detail] + match.notes).joined(separator: "; ")
        return RestoreResult(
            verdict: mine ? .restorable : .ownedByOther, basis: match.basis, orderNos: match.orderNos,
            contractId: match.contract?.contractId, owner: match.owner, contractStatus: match.contract?.status,
            contractExpires: match.contract?.expiresDate, detail: detail)
    }

    private func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}

extension Contract {
    /// Whether the row entitles its user at `time`: inside the paid period of an active or canceled
    /// (auto-renew off) contract, or in the billing grace period. Billing retry, expired and revoked
    /// do not.
    public func entitles(at time: Int64) -> Bool {
        guard status.givesAccess else { return false }
        return status == .gracePeriod || (expiresDate.map { time < $0 } ?? true)
    }
}

fileprivate extension String {
    /// The string without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
