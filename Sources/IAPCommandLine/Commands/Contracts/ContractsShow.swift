import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl contracts show ID`: the contract, its orders, its event timeline and its audit trail, now
/// or as they were at `--as-of` (``EntitlementQuery``).
enum ContractsShow {
    static let command = CommandSpec(
        name: "show",
        abstract: "Show a contract, its orders and its event timeline with each event's verdict.",
        discussion: """
            Under the contract, its renewal risk in words, from the newest renewal info Apple signed: \
            why it ended (the customer cancelled, a billing error, a price increase not consented, \
            the product not for sale), or why it may not renew — a billing error with its grace \
            period and billing retry window (dates), a price increase not consented and when it \
            takes effect, auto-renew turned off — and what changes at the next renewal (another \
            product, an offer). A field Apple did not send is not guessed. JSON: renewal_risk \
            (kinds, ended, notes, and Apple's values they come from).
            """,
        examples: [
            CommandExample("iapctl contracts show 2000000100000001", "As sections of a table."),
            CommandExample("iapctl contracts show 2000000100000001 -o json", "As one JSON document."),
            CommandExample(
                "iapctl contracts show 2000000100000001 --as-of 2025-03-14T09:30:00Z",
                "The contract as it was then, and whether it entitled its user."),
        ],
        options: [CommandTree.asOfOption],
        arguments: [ContractOptions.id],
        handler: run)

    /// `contracts show ID`, or with `--as-of` the contract, its orders, events and changes as they were then.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let time = invocation[CommandTree.asOfOption]?.at(Timestamp.now()) else { return try showNow(invocation) }
        let id = invocation[ContractOptions.id]
        let asOf = try DbOpen.read(invocation) { session in try EntitlementQuery.contract(id, at: time, in: session) }
        guard let asOf else {
            throw CLIError(.notFound, "no contract with contract_id = \(id)", hint: "list them with: iapctl contracts list")
        }
        let answer = asOf.subject.answer
        var head = Record()
        head.append("as_of_date", time)
        // `--as-of` shows what the database knew then (facts and events signed by then).
        head.append("question", answer.question.rawValue)
        head.append("entitled", answer.entitled)
        head.append("status", answer.status)
        head.append("reason", answer.reason)
        if invocation.output != .table {
            head.append("lapsed", answer.lapse != nil)
            head.append("paid_until_date", answer.lapse?.paidUntil)
        }
        // Only values as of `time`: the last event date as it stood then; the recording times
        // (created_at, updated_at: when iapctl wrote the row, not when things happened) are left out.
        var contract = RowRendering.record(answer.contract)
        contract["status"] = .string(answer.status)
        contract["last_event_date"] = asOf.lastEventDate.map(JSONValue.int) ?? .null
        contract["created_at"] = nil
        contract["updated_at"] = nil
        let orders = answer.orders.map { order -> Record in
            var r = RowRendering.record(order)
            r["created_at"] = nil
            r["updated_at"] = nil
            return r
        }
        let events = asOf.events.map(RowRendering.record)
        let structured = invocation.output == .json || invocation.output == .ndjson
        let changes = asOf.changes.map { RowRendering.record($0, structured: structured) }
        invocation.emit(
            detail: DetailView(sections: [
                DetailView.Section(
                    key: "as_of", title: "As of \(Timestamp.iso8601(time)), \(answer.question.words)", content: .fields(head)),
                DetailView.Section(key: "contract", title: "Contract", content: .fields(contract)),
                DetailView.Section(
                    key: "orders", title: "Orders (\(orders.count))",
                    content: .table(orders, columns: RowRendering.orderColumns.filter { $0.key != "updated_at" })),
                DetailView.Section(
                    key: "events", title: "Events (\(events.count), ledger, signed by then)",
                    content: .table(events, columns: RowRendering.ledgerColumns)),
                DetailView.Section(
                    key: "changes", title: "Changes (\(changes.count), audit trail, by then)",
                    content: .table(changes, columns: RowRendering.auditColumns)),
            ]))
        return .success
    }

    /// A contract, its orders, its event timeline with verdicts, and its audit trail.
    static func showNow(_ invocation: Invocation) throws -> ExitCode {
        let id = invocation[ContractOptions.id]
        let now = Timestamp.now()
        let found = try DbOpen.read(invocation) {
            session -> (RecordHistory, [ShownOverride], [Grant], RenewalRisk?)? in
            guard let history = try RecordHistory.contract(id, in: session) else { return nil }
            let grants = try history.contract.map {
                try GrantService.inForce(user: $0.userId, product: $0.productId, at: now, in: session)
            }
            let risk = try history.contract.map {
                RenewalRisk.of($0, facts: try session.facts(originalTransactionId: $0.contractId), now: now)
            }
            return (history, try OverrideRendering.gather(history, now: now, in: session), grants ?? [], risk)
        }
        guard let (history, overrides, grants, risk) = found else {
            throw CLIError(
                .notFound, "no contract with contract_id = \(id)",
                hint:
                    "a contract's id is the subscription's originalTransactionId; list them with: iapctl contracts list"
            )
        }
        OrdersShow.emit(
            history, overrides: overrides, grants: grants, invocation: invocation, primary: .contract, risk: risk)
        return .success
    }
}
