import AppStoreJWS
import SubscriptionEngine

/// `iapctl orders show KEY` and `iapctl contracts show ID`: rows, contract, event timeline, audit trail.
enum OrdersShow {
    /// What a `show` gathers in one read transaction.
    struct History {
        var orders: [Order]
        var contract: Contract?
        var events: [LedgerEntry]
        var audit: [AuditEntry]
    }

    /// KEY = order no, trade_no, or origin_no (every order of that subscription).
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let key = invocation.parsed.argument("key") else { throw CLIError.usage("missing argument <key>") }
        let history: History? = try DbOpen.read(invocation) { session in
            // The first purchase's transactionId is also the subscription's originalTransactionId:
            // that key shows the whole subscription; any other transactionId shows its one order.
            var orders: [Order] = []
            if let order = try session.order(no: key) {
                orders = [order]
            } else if let order = try session.order(tradeNo: key), order.originNo != key {
                orders = [order]
            } else {
                orders = try session.orders(originNo: key)
                if orders.isEmpty, let order = try session.order(tradeNo: key) { orders = [order] }
            }
            guard !orders.isEmpty else { return nil }
            let originNos = unique(orders.compactMap(\.originNo))
            let contract = try originNos.first.flatMap { try session.contract(contractId: $0) }
            return try gather(session, orders: orders, contract: contract)
        }
        guard let history else {
            throw CLIError(
                .notFound, "no order with no, trade_no or origin_no = \(key)",
                hint: "find it with: iapctl orders list --user USER")
        }
        emit(history, invocation: invocation, primary: .order)
        return .success
    }

    /// The ledger events and audit rows of these orders and contract.
    static func gather(_ session: any StoreSession, orders: [Order], contract: Contract?) throws -> History {
        var originNos = unique(orders.compactMap(\.originNo))
        if let contract, !originNos.contains(contract.contractId) { originNos.append(contract.contractId) }
        let events = try session.ledger(
            transactionIds: unique(orders.compactMap(\.tradeNo)), originalTransactionIds: originNos,
            appAccountTokens: unique(orders.map(\.no)))
        var audit: [AuditEntry] = []
        for order in orders { audit += try session.audit(entity: .order, key: order.no) }
        if let contract { audit += try session.audit(entity: .contract, key: contract.contractId) }
        audit.sort { ($0.at, $0.id) < ($1.at, $1.id) }
        return History(orders: orders, contract: contract, events: events, audit: audit)
    }

    /// Table/CSV: titled sections; JSON: one document `{orders, contract, events, changes}`.
    static func emit(_ history: History, invocation: Invocation, primary: EntityKind) {
        let orders = history.orders.map(RowRendering.record)
        let contract = history.contract.map(RowRendering.record)
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
                members += [("contract", contractValue), ("orders", ordersValue)]
            }
            members += [
                ("events", .array(events.map { $0.jsonObject() })),
                ("changes", .array(audit.map { $0.jsonObject() })),
            ]
            let document = JSONValue.object(members)
            invocation.emit(json: document)
        case .table, .csv:
            let audit = history.audit.map { RowRendering.record($0, structured: false) }
            var orderSection: DetailView.Section
            if orders.count == 1 {
                orderSection = DetailView.Section(key: "order", title: "Order", content: .fields(orders[0]))
            } else {
                orderSection = DetailView.Section(
                    key: "orders", title: "Orders (\(orders.count))",
                    content: .table(orders, columns: RowRendering.orderColumns))
            }
            let contractSection = DetailView.Section(
                key: "contract", title: "Contract", content: .fields(contract ?? Record()))
            var sections = primary == .order ? [orderSection, contractSection] : [contractSection, orderSection]
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

    static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
