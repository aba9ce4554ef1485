import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `iapctl contracts explain ID`: why a contract is in its state — every ledger event in
/// signedDate order with the rule that fired, the state before and after, and why an event
/// changed nothing; manual changes in between; ending in the current state.
enum ContractsExplain {
    static let command = CommandSpec(
        name: "explain",
        abstract: "Explain why a contract is in its state: the derivation, event by event.",
        discussion: """
            First, which signed fact (signed when, and from which source) decides each field: \
            the engine's own derivation of the kept facts. FROM names the source and so its \
            authority: Apple pushed (a notification), Apple pulled (an App Store Server API \
            answer iapctl fetched, e.g. by 'apple reconcile'), the app (verify --apply), a \
            restore, or by hand (an override; docs/engine.md, 'Sources of truth'). Then lists every \
            ledger event of the contract in signedDate order with the rule that \
            fired (type/subtype → transition), the state before and after, and why an event \
            changed nothing (duplicate, stale against which newer event, ignored type), with \
            the manual changes in between, ending in the current state. WHY says the rule and \
            names the audit rows with the changes (iapctl audit show ID, or iapctl audit list \
            --contract ID). Each row of the field table is one event: SIGNED, FROM, STEP and \
            FACT all of the fact that decides the field. Readable in a ticket; -o json for \
            scripts (fact_step: that event's step; step: the step that last wrote the value).
            """,
        examples: [
            CommandExample("iapctl contracts explain 2000000100000001", "The derivation as a table."),
            CommandExample("iapctl contracts explain 2000000100000001 -o json", "As one JSON document."),
        ],
        arguments: [ContractOptions.id],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let id = invocation[ContractOptions.id]
        let time = Timestamp.now()
        let found = try DbOpen.read(invocation) { session in try Explanation.explain(id, now: time, in: session) }
        guard let explanation = found else {
            throw CLIError(
                .notFound, "no contract with contract_id = \(id)",
                hint: "a contract's id is the subscription's originalTransactionId; list them with: iapctl contracts list")
        }
        let contract = explanation.contract
        // The actors of manual steps appear only inside the rule text: --redact must know them.
        for audit in explanation.history.audit { _ = invocation.redactor?.alias(audit.actor, .actor) }
        for shown in explanation.overrides { _ = invocation.redactor?.alias(shown.override.actor, .actor) }
        let steps = trace(explanation)
        var now = Record()
        now.append("contract_id", contract.contractId)
        now.append("user_id", contract.userId)
        now.append("product_id", contract.productId)
        now.append("status", contract.status.rawValue)
        now.append("auto_renew", contract.autoRenew)
        now.append("expires_date", contract.expiresDate)
        now.append("last_event_date", contract.lastEventDate)
        now.append("summary", summary(contract, steps: steps, credits: explanation.credits))
        let fields = decided(explanation)
        invocation.emit(
            detail: DetailView(sections: [
                DetailView.Section(
                    key: "fields",
                    title: "Which signed fact decides each field (\(explanation.factCount) facts kept; the newest signed version wins)",
                    content: .table(
                        fields,
                        columns: [
                            Column("field", title: "FIELD"), Column("value", title: "VALUE"),
                            Column("signed_date", title: "SIGNED"), Column("authority", title: "FROM"),
                            Column("fact_step", title: "STEP"),
                            Column("fact", title: "FACT", maxWidth: 110, important: true, wraps: true),
                        ])),
                DetailView.Section(
                    key: "trace", title: "Derivation of contract \(contract.contractId) (\(steps.count) steps, signedDate order)",
                    content: .table(
                        steps,
                        columns: [
                            Column("step", title: "#"), Column("signed_date", title: "SIGNED", important: true),
                            Column("event", title: "EVENT", important: true, folds: true), Column("rule", title: "RULE"),
                            Column("verdict", title: "VERDICT", important: true),
                            Column("state", title: "STATE", important: true),
                            Column("why", title: "WHY", maxWidth: 110, important: true, wraps: true),
                        ])),
                DetailView.Section(key: "current", title: "Current state", content: .fields(now)),
            ]).appending(OverrideRendering.sections(explanation.overrides)))
        return .success
    }

    /// One record per contract field, with the fact (and when it was signed) that decided it, or
    /// the hand override that holds over it; and the trace step that set the value the row holds.
    static func decided(_ explanation: Explanation) -> [Record] {
        explanation.fields.map { reason in
            var r = Record()
            r.append("field", reason.field)
            if let shown = explanation.overrides.first(where: { $0.override.field == reason.field }) {
                let o = shown.override
                r.append("value", OverrideRendering.values(shown).value)
                r.append("signed_date", o.at)
                r.append("source", "hand")
                r.append("authority", EventSource.handAuthorityName)
                r.append("step", explanation.credits[reason.field].map { $0 + 1 })
                // The override's own step: SIGNED, FROM, STEP and FACT of one row tell one change.
                r.append("fact_step", explanation.credits[reason.field].map { $0 + 1 })
                r.append(
                    "fact",
                    OverrideRendering.sentence(shown) + " (override by \(o.actor)" + (o.reason.map { ": \($0)" } ?? "")
                        + "; holds until `audit undo \(o.auditId)`, --clear-override \(o.field) or a newer period)")
                r.append("derived_value", OverrideRendering.values(shown).derived)
                r.append("derived_fact", reason.fact)
                r.append("override_audit_id", o.auditId)
                return r
            }
            r.append("value", reason.value)
            r.append("signed_date", reason.signedDate)
            r.append("source", reason.source?.rawValue)
            r.append("authority", reason.source?.authorityName)
            r.append("step", explanation.credits[reason.field].map { $0 + 1 })
            r.append("fact_step", factStep(reason, in: explanation.steps).map { $0 + 1 })
            r.append("fact", reason.fact)
            return r
        }
    }

    /// The trace step of the event that carried `reason`'s fact: the event of its source signed at
    /// its signedDate (the applied delivery before a stale or duplicate one), nil when the ledger
    /// shows none. (`step` is another question: which step last wrote the value the row holds.)
    static func factStep(_ reason: FieldReason, in steps: [Explanation.Step]) -> Int? {
        guard let signed = reason.signedDate, let source = reason.source else { return nil }
        var candidates: [(index: Int, rank: Int)] = []
        for (index, step) in steps.enumerated() {
            guard case .event(let event, _, _, _) = step, event.signedDate == signed, event.source == source else { continue }
            let rank: Int
            switch event.verdict {
            case .applied: rank = 0
            case .stale, .ignored: rank = 1
            case .duplicate, .unmatched, .conflict: rank = 2
            case .rejected: continue
            }
            candidates.append((index, rank))
        }
        return candidates.min { ($0.rank, $0.index) < ($1.rank, $1.index) }?.index
    }

    /// One record per step, numbered.
    static func trace(_ explanation: Explanation) -> [Record] {
        explanation.steps.enumerated().map { index, step in
            var r = Record()
            r.append("step", index + 1)
            r.fields += record(step).fields
            return r
        }
    }

    /// A ledger event or manual change as a trace row.
    static func record(_ step: Explanation.Step) -> Record {
        var r = Record()
        switch step {
        case .event(let event, let rule, let audits, let decidedBy):
            let contractAudit = audits.first { $0.entity == .contract }
            r.append("signed_date", event.signedDate)
            r.append("event", RowRendering.eventName(event))
            r.append("rule", rule.name)
            r.append("verdict", event.verdict.rawValue)
            r.append("status_before", AuditRows.status(contractAudit?.before))
            r.append("status_after", AuditRows.status(contractAudit?.after))
            r.append("state", stateText(contractAudit, current: nil))
            let auditIds = audits.map(\.id).sorted()
            // WHY is the rule; what each row's fields became is in the audit rows it names.
            r.append(
                "why",
                why(event, rule: rule, audits: audits, decidedBy: decidedBy)
                    + (auditIds.isEmpty
                        ? "" : " (changes: audit " + auditIds.map { "#\($0)" }.joined(separator: ", ") + ")"))
            r.append("audit_ids", .array(auditIds.map { JSONValue.int($0) }))
            r.append("transaction_id", event.transactionId)
            r.append("ledger_id", event.id)
            r.append("received_at", event.receivedAt)
            r.append("detail", event.detail.map(RowRendering.storedDetail))
        case .manual(let audit):
            r.append("signed_date", audit.at)
            r.append("event", audit.command)
            r.append("rule", "manual change by \(audit.actor)")
            r.append("verdict", "audited")
            r.append("status_before", audit.entity == .contract ? AuditRows.status(audit.before) : nil)
            r.append("status_after", audit.entity == .contract ? AuditRows.status(audit.after) : nil)
            r.append("state", audit.entity == .contract ? stateText(audit, current: nil) : "order \(audit.key)")
            let changes = RowRendering.changeText(RowRendering.auditChanges(audit), separator: ", ")
            r.append(
                "why",
                "audit #\(audit.id): \(changes)" + (audit.reason.map { " — \($0)" } ?? "")
                    + (audit.ticket.map { " [\($0)]" } ?? ""))
            r.append("audit_id", audit.id)
            r.append("audit_ids", .array([.int(audit.id)]))
        }
        return r
    }

    /// Why an event did what it did, in words.
    static func why(_ event: LedgerEntry, rule: EventRule, audits: [AuditEntry], decidedBy newer: LedgerEntry?) -> String {
        switch event.verdict {
        case .applied:
            // Which rows it touched, not each field (those are in `iapctl audit show ID`).
            let touched = audits.map { "\($0.entity.rawValue) \($0.before == nil ? "created" : "updated")" }
            return rule.transition + (touched.isEmpty ? "" : " — " + touched.joined(separator: ", "))
        case .stale:
            let against =
                newer.map {
                    " than \(RowRendering.eventName($0)) signed \(Timestamp.iso8601($0.signedDate ?? 0)) (ledger #\($0.id))"
                } ?? " than the contract's last state change"
            return "stale: signed earlier\(against), which already decided the state; state kept"
                + (audits.isEmpty ? "" : " (money facts recorded)")
        case .duplicate:
            return "duplicate: " + (event.detail ?? "already processed")
        case .ignored:
            return rule.name == "informational"
                ? "ignored: \(RowRendering.eventName(event)) needs no change" : "ignored: " + (event.detail ?? "")
        case .unmatched:
            return "unmatched: " + (event.detail ?? "no order or contract to attach it to")
        case .rejected:
            return "rejected: " + (event.detail ?? "failed verification")
        case .conflict:
            return event.detail ?? "conflict: owned by another user; nothing changed"
        }
    }

    /// `active → canceled`, `= active` (unchanged), or `-`.
    static func stateText(_ audit: AuditEntry?, current: String?) -> String {
        guard let audit else { return "(no change)" }
        let before = AuditRows.status(audit.before)
        let after = AuditRows.status(audit.after)
        switch (before, after) {
        case (nil, let after?): return "created \(after)"
        case (let before?, let after?) where before != after: return "\(before) → \(after)"
        case (_, let after?): return "\(after) (status kept)"
        default: return "-"
        }
    }

    /// One sentence ending the trace: the state, and which step set each field (fields set by the
    /// same step together, in the order of the contract's columns).
    static func summary(_ contract: Contract, steps: [Record], credits: [String: Int]) -> String {
        var groups: [(step: Int, fields: [String])] = []
        for field in ["status", "product_id", "expires_date", "auto_renew"] {
            guard let step = credits[field] else { continue }
            if let i = groups.firstIndex(where: { $0.step == step }) {
                groups[i].fields.append(field)
            } else {
                groups.append((step, [field]))
            }
        }
        let cause =
            groups.isEmpty
            ? "no applied event"
            : groups.map { group in
                let event = steps.indices.contains(group.step) ? steps[group.step]["event"]?.stringValue ?? "?" : "?"
                return "\(group.fields.joined(separator: ", ")) from step \(group.step + 1) (\(event))"
            }.joined(separator: "; ")
        return "\(contract.status.rawValue)"
            + (contract.expiresDate.map { ", paid until \(Timestamp.iso8601($0))" } ?? "")
            + ", auto-renew \(contract.autoRenew ? "on" : "off"); \(cause)"
    }
}
