import SubscriptionDerivation
import SubscriptionModel

/// `contracts explain ID`: why a contract is in its state — which signed fact decides each field
/// (the engine's derivation), and every ledger event in signedDate order with the rule that fired
/// and why it changed what it changed (or nothing), manual changes in between.
public struct Explanation: Sendable, Equatable {
    /// One step of the trace.
    public enum Step: Sendable, Equatable {
        /// A ledger event, the engine rule for it and the audit rows it caused; for a `stale`
        /// event, the applied state change that had already decided the state (when the ledger shows it).
        case event(LedgerEntry, rule: EventRule, audits: [AuditEntry], decidedBy: LedgerEntry?)
        /// A manual change (a correction, a transfer, an undo) not caused by a ledger event.
        case manual(AuditEntry)

        /// When the step happened: the event's signedDate (else when it was received), the change's time.
        public var time: Int64 {
            switch self {
            case .event(let event, _, _, _): return event.signedDate ?? event.receivedAt
            case .manual(let audit): return audit.at
            }
        }

        /// Whether the step could decide the state: an applied event or a manual change.
        public var decides: Bool {
            switch self {
            case .event(let event, _, _, _): return event.verdict == .applied
            case .manual: return true
            }
        }
    }

    public var contract: Contract
    /// The contract's orders, events and audit rows.
    public var history: RecordHistory
    /// How many signed facts are kept for it.
    public var factCount: Int
    /// The fact that decides each field, by the engine's derivation of the kept facts (empty when none are kept).
    public var fields: [FieldReason]
    /// Events and manual changes in time order (ties: events by ledger id, then manual changes).
    public var steps: [Step]
    /// The contract's hand overrides in force, newest per field, with what the facts say.
    public var overrides: [ShownOverride] = []
    /// Which step set each field's current value (an index into ``steps``), by field: the step of
    /// the override in force, else of the newest audit row (by id, i.e. in the order the changes
    /// were written) that changed the field.
    public var credits: [String: Int] = [:]

    /// The explanation of contract `contractId` (nil when there is none), inside the caller's read transaction.
    public static func explain(_ contractId: String, now: Int64, in session: any StoreSession) throws -> Explanation? {
        guard let history = try RecordHistory.contract(contractId, in: session), let contract = history.contract else {
            return nil
        }
        let facts = try session.facts(originalTransactionId: contractId)
        let derived = Derivation.derive(FactSet(facts), now: now).contract
        let steps = trace(history)
        let overrides = try OverrideService.shown(
            entity: .contract, key: contractId, tradeNo: nil, originalTransactionId: contractId, now: now, in: session)
        return Explanation(
            contract: contract, history: history, factCount: facts.count, fields: derived?.reasons ?? [], steps: steps,
            overrides: overrides, credits: credits(steps, overrides: overrides))
    }

    /// Which step set each contract field (see ``credits``).
    static func credits(_ steps: [Step], overrides: [ShownOverride]) -> [String: Int] {
        var newest: [String: (audit: Int64, step: Int)] = [:]
        for (index, step) in steps.enumerated() {
            let audits: [AuditEntry]
            switch step {
            case .event(_, _, let rows, _): audits = rows
            case .manual(let row): audits = [row]
            }
            for audit in audits where audit.entity == .contract {
                for field in audit.changedFields where (newest[field.column]?.audit ?? Int64.min) < audit.id {
                    newest[field.column] = (audit.id, index)
                }
            }
        }
        var credits = newest.mapValues(\.step)
        for shown in overrides {
            let index = steps.firstIndex {
                if case .manual(let audit) = $0 { return audit.id == shown.override.auditId }
                return false
            }
            if let index { credits[shown.override.field] = index }
        }
        return credits
    }

    static func trace(_ history: RecordHistory) -> [Step] {
        var items: [(step: Step, order: Int64)] = []
        for event in history.events {
            let decidedBy = event.verdict == .stale ? EventRule.newerStateChange(than: event, in: history.events) : nil
            let audits = history.audit.filter { $0.ledgerId == event.id }
            items.append((.event(event, rule: EventRule(for: event), audits: audits, decidedBy: decidedBy), event.id))
        }
        for audit in history.audit where audit.ledgerId == nil && audit.before != nil {
            items.append((.manual(audit), Int64.max / 2 + audit.id))
        }
        return items.sorted { ($0.step.time, $0.order) < ($1.step.time, $1.order) }.map(\.step)
    }
}
