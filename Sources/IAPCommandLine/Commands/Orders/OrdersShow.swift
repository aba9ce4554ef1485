import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl orders show KEY` and `iapctl contracts show ID`: rows, contract, event timeline, audit trail.
enum OrdersShow {
    /// `KEY`.
    static let key = Argument<String>(
        "key", help: "Order number, transactionId, originalTransactionId, or appTransactionId (every purchase carrying it).",
        completion: .lookup("orders"))

    static let command = CommandSpec(
        name: "show",
        abstract: "Show an order, its contract and its history.",
        discussion: "KEY may be the order number, the Apple transactionId or the originalTransactionId "
            + "(which shows every order of that subscription). The history lists the notifications "
            + "and manual corrections, with actor and reason.",
        examples: [
            CommandExample("iapctl orders show 6f1c2d9e-4b7a-4c1e-9a51-0b6f7d3e2a10", "By order number."),
            CommandExample("iapctl orders show 2000000123456789 -o json", "By transactionId, as JSON."),
        ],
        arguments: [key],
        handler: run)

    /// KEY = order no, trade_no, or origin_no (every order of that subscription).
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let key = invocation[key]
        let now = Timestamp.now()
        let (found, isUser) = try DbOpen.read(invocation) { session -> ((RecordHistory, [ShownOverride])?, Bool) in
            guard let history = try RecordHistory.order(key, in: session) else {
                // A user id given for an order: the hint lists that user's orders.
                return (nil, !(try session.orders(matching: OrderFilter(userId: key, limit: 1)).isEmpty))
            }
            return ((history, try OverrideRendering.gather(history, now: now, in: session)), false)
        }
        guard let (history, overrides) = found else {
            let message = "no order with no, trade_no or origin_no = \(key), nor a purchase with that appTransactionId"
            if isUser {
                throw CLIError(
                    .notFound, message + "; \(key) is a user",
                    hint: "see their orders with: iapctl orders list --user \(ShellWord.word(key))")
            }
            throw CLIError(.notFound, message, hint: notFoundHint(key))
        }
        emit(history, overrides: overrides, invocation: invocation, primary: .order)
        return .success
    }

    /// What to try for a key no order has, by its shape: Apple's order ID from a receipt e-mail
    /// (`MK5TTTVWJH`) goes to Look Up Order ID; a transaction id (digits) to its history; anything
    /// else to the user's orders.
    static func notFoundHint(_ key: String) -> String {
        let word = ShellWord.word(key)
        let isDigits = !key.isEmpty && key.allSatisfy { $0.isASCII && $0.isNumber }
        let isOrderId =
            (8...14).contains(key.count) && !isDigits
            && key.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
        if isOrderId {
            return "\(key) looks like the order ID of an App Store receipt e-mail; ask Apple for its purchases: "
                + "iapctl apple lookup \(word)"
        }
        if isDigits {
            return "ask Apple for that subscription's transactions: "
                + "iapctl apple transactions history \(word) | iapctl restore --user USER"
        }
        return "find it with: iapctl orders list --user USER (an order is found by its no, trade_no or origin_no)"
    }

    /// Table/CSV: titled sections (an Overrides section when a field is under a hand override);
    /// JSON: one document `{orders, contract, overrides, events, changes}`.
    /// `grants`: the grants in force of the contract's user for its product (`contracts show`; nil:
    /// the command does not show them); `risk`: the contract's renewal risk in words.
    static func emit(
        _ history: RecordHistory, overrides: [ShownOverride], grants: [Grant]? = nil, invocation: Invocation,
        primary: EntityKind, risk: RenewalRisk? = nil
    ) {
        for shown in overrides { _ = invocation.redactor?.alias(shown.override.actor, .actor) }
        let orders = history.orders.map(RowRendering.record)
        let now = Timestamp.now()
        let contract = history.contract.map { RowRendering.record($0, at: now, table: invocation.output == .table) }
        let events = history.events.map(RowRendering.record)
        switch invocation.output {
        case .json, .ndjson:
            let audit = history.audit.map { RowRendering.record($0, structured: true) }
            let contractValue = contract.map { $0.jsonObject() } ?? .null
            var members: [(key: String, value: JSONValue)] = []
            let ordersValue = JSONValue.array(orders.map { $0.jsonObject() })
            if primary == .order {
                members += [("orders", ordersValue), ("contract", contractValue)]
            } else {
                members += [("contract", contractValue)]
                if let risk { members.append(("renewal_risk", RenewalRiskRendering.record(risk, structured: true).jsonObject())) }
                members.append(("orders", ordersValue))
            }
            members += [("overrides", .array(overrides.map { OverrideRendering.record($0).jsonObject() }))]
            if let grants { members.append(("grants", .array(grants.map { GrantOptions.record($0, now: now).jsonObject() }))) }
            members += [
                ("events", .array(events.map { $0.jsonObject() })),
                ("changes", .array(audit.map { $0.jsonObject() })),
            ]
            let document = JSONValue.object(members)
            invocation.emit(json: document)
        case .table, .csv:
            let audit = history.audit.map { RowRendering.record($0, structured: false) }
            var orderSection: DetailView.Section
            let shownOrders = zip(history.orders, orders).map { order, record in
                OverrideRendering.marked(
                    record, entity: .order, key: order.no, overrides: overrides, cell: orders.count != 1)
            }
            if orders.count == 1 {
                orderSection = DetailView.Section(key: "order", title: "Order", content: .fields(shownOrders[0]))
            } else {
                orderSection = DetailView.Section(
                    key: "orders", title: "Orders (\(orders.count))",
                    content: .table(shownOrders, columns: RowRendering.orderColumns))
            }
            let shownContract = history.contract.map { row in
                OverrideRendering.marked(
                    contract ?? Record(), entity: .contract, key: row.contractId, overrides: overrides, cell: false)
            }
            let contractSection = DetailView.Section(
                key: "contract", title: "Contract", content: .fields(shownContract ?? Record()))
            let riskSections = risk.map { [RenewalRiskRendering.section($0, structured: false)] } ?? []
            var sections =
                primary == .order ? [orderSection, contractSection] : [contractSection] + riskSections + [orderSection]
            sections += OverrideRendering.sections(overrides)
            if let grants, !grants.isEmpty {
                // Access by hand beside Apple's word: the contract's own fields stay as Apple signed them.
                sections.append(
                    DetailView.Section(
                        key: "grants", title: "Grants by hand in force (\(grants.count), iap_grants)",
                        content: .table(grants.map { GrantOptions.record($0, now: now) }, columns: GrantOptions.columns)))
            }
            sections.append(
                DetailView.Section(
                    key: "events", title: "Events (\(events.count), ledger)",
                    content: .table(events, columns: RowRendering.ledgerColumns)))
            sections.append(
                DetailView.Section(
                    key: "changes", title: "Changes (\(audit.count), audit trail)",
                    content: .table(audit, columns: RowRendering.auditColumns)))
            invocation.emit(detail: DetailView(sections: sections))
        }
    }
}
