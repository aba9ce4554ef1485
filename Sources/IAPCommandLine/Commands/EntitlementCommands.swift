import AppStoreJWS
import SubscriptionEngine

/// `iapctl entitled`, `contracts show --as-of`, `orders list --as-of`: state at a past moment,
/// reconstructed from the audit trail dated by the ledger (see `EntitlementAsOf`).
enum EntitlementCommands {
    /// One contract with everything needed to reconstruct it.
    struct Subject {
        var history: OrdersShow.History
        var answer: EntitlementAsOf.Answer
        var signedDates: [Int64: Int64]
    }

    /// Gathers a contract's orders, ledger events and audit rows, and evaluates it at `time`.
    static func subject(_ contract: Contract, at time: Int64, in session: any StoreSession) throws -> Subject {
        let orders = try session.orders(originNo: contract.contractId)
        let history = try OrdersShow.gather(session, orders: orders, contract: contract)
        let signedDates = try self.signedDates(history.audit, known: history.events, in: session)
        var events = history.events
        // Ledger rows that caused changes but mention other ids (rare) still date their changes.
        for (id, _) in signedDates where !events.contains(where: { $0.id == id }) {
            if let entry = try session.ledgerEntry(id: id) { events.append(entry) }
        }
        let answer = EntitlementAsOf.evaluate(
            contract: contract, orders: orders, events: events, audit: history.audit,
            facts: try session.facts(originalTransactionId: contract.contractId), at: time)
        return Subject(history: history, answer: answer, signedDates: signedDates)
    }

    /// signedDate of every ledger row the audit rows point at.
    static func signedDates(_ audit: [AuditEntry], known: [LedgerEntry], in session: any StoreSession) throws
        -> [Int64: Int64]
    {
        var dates: [Int64: Int64] = [:]
        for entry in known { if let signed = entry.signedDate { dates[entry.id] = signed } }
        for row in audit {
            guard let id = row.ledgerId, dates[id] == nil else { continue }
            if let signed = try session.ledgerEntry(id: id)?.signedDate { dates[id] = signed }
        }
        return dates
    }

    /// Keys of rows of `entity` whose manual changes after `time` may have moved them between users.
    static func changedSince(_ time: Int64, entity: EntityKind, in session: any StoreSession) throws -> [String] {
        OrdersShow.unique(
            try session.auditEntries(matching: AuditFilter(since: time + 1)).filter { $0.entity == entity }.map(\.key))
    }

    // MARK: entitled

    /// `iapctl entitled --user U [--product P] [--at T]`: yes (exit 0) or no (exit 1), with why.
    static func entitled(_ invocation: Invocation) throws -> ExitCode {
        guard let user = invocation.parsed.value("user") else { throw CLIError.usage("missing --user") }
        let product = invocation.parsed.value("product")
        let now = Timestamp.now()
        let time = try AuditTime.option(invocation, "at", now: now) ?? now
        let subjects: [Subject] = try DbOpen.read(invocation) { session in
            var contracts = try session.contracts(matching: ContractFilter(userId: user))
            for key in try changedSince(time, entity: .contract, in: session)
            where !contracts.contains(where: { $0.contractId == key }) {
                if let contract = try session.contract(contractId: key) { contracts.append(contract) }
            }
            return try contracts.map { try subject($0, at: time, in: session) }
                .filter { $0.answer.contract.userId == user }
                .filter { product == nil || $0.answer.contract.productId == product }
        }
        let best = subjects.first { $0.answer.entitled } ?? subjects.first { $0.answer.status != "not-yet" } ?? subjects.first
        var r = Record()
        r.append("entitled", best?.answer.entitled ?? false)
        r.append("user_id", user)
        r.append("product_id", best?.answer.contract.productId ?? product)
        r.append("as_of_date", time)
        r.append("contract_id", best?.answer.contract.contractId)
        r.append("status", best?.answer.status)
        r.append(
            "reason",
            best?.answer.reason ?? "no contract of \(user)\(product.map { " for \($0)" } ?? "") at \(Timestamp.iso8601(time))")
        r.append("transaction_id", best?.answer.covering?.tradeNo)
        switch invocation.output {
        case .table:
            let yes = best?.answer.entitled ?? false
            invocation.print((yes ? "yes: " : "no: ") + (r["reason"]?.stringValue ?? ""))
            invocation.emit(document: r)
        case .json:
            r.append(
                "contracts",
                .array(
                    subjects.map { s in
                        var c = Record()
                        c.append("contract_id", s.answer.contract.contractId)
                        c.append("product_id", s.answer.contract.productId)
                        c.append("entitled", s.answer.entitled)
                        c.append("status", s.answer.status)
                        c.append("reason", s.answer.reason)
                        return c.jsonObject()
                    }))
            invocation.emit(document: r)
        case .ndjson, .csv:
            invocation.emit(document: r)
        }
        return best?.answer.entitled == true ? .success : .failure
    }

    // MARK: contracts show --as-of

    /// `contracts show ID`, or with `--as-of` the contract, its orders, events and changes as they were then.
    static func contractsShow(_ invocation: Invocation) throws -> ExitCode {
        guard let raw = invocation.parsed.value("as-of") else { return try ContractsCommands.show(invocation) }
        guard let id = invocation.parsed.argument("id") else { throw CLIError.usage("missing argument <id>") }
        let time = try AuditTime.parse(raw, option: "as-of", now: Timestamp.now())
        let found: Subject? = try DbOpen.read(invocation) { session in
            guard let contract = try session.contract(contractId: id) else { return nil }
            return try subject(contract, at: time, in: session)
        }
        guard let found else {
            throw CLIError(.notFound, "no contract with contract_id = \(id)", hint: "list them with: iapctl contracts list")
        }
        let answer = found.answer
        var head = Record()
        head.append("as_of_date", time)
        head.append("entitled", answer.entitled)
        head.append("status", answer.status)
        head.append("reason", answer.reason)
        // Only values as of `time`: the last event date as it stood then; the recording times
        // (created_at, updated_at: when iapctl wrote the row, not when things happened) are left out.
        var contract = RowRendering.record(answer.contract)
        contract["status"] = .string(answer.status)
        let eventsThen = found.history.events.filter { ($0.signedDate ?? .max) <= time }
        let lastEvent = eventsThen.filter { $0.verdict == .applied }.compactMap(\.signedDate).max()
        contract["last_event_date"] = lastEvent.map(JSONValue.int) ?? .null
        contract["created_at"] = nil
        contract["updated_at"] = nil
        let orders = answer.orders.map { order -> Record in
            var r = RowRendering.record(order)
            r["created_at"] = nil
            r["updated_at"] = nil
            return r
        }
        let events = eventsThen.map(RowRendering.record)
        let structured = invocation.output == .json || invocation.output == .ndjson
        let changes = found.history.audit.filter {
            EntitlementAsOf.effectiveTime($0, signedDates: found.signedDates) <= time
        }.map { RowRendering.record($0, structured: structured) }
        invocation.emit(
            detail: DetailView(sections: [
                DetailView.Section(key: "as_of", title: "As of \(Timestamp.iso8601(time))", content: .fields(head)),
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

    // MARK: orders list --as-of

    /// `orders list`, or with `--as-of` the orders (of `--user`) as they were then.
    static func ordersList(_ invocation: Invocation) throws -> ExitCode {
        guard let raw = invocation.parsed.value("as-of") else { return try OrdersCommands.list(invocation) }
        let time = try AuditTime.parse(raw, option: "as-of", now: Timestamp.now())
        let user = invocation.parsed.value("user")
        let status = invocation.parsed.value("status")
        let product = invocation.parsed.value("product")
        let limit = invocation.parsed.value("limit").flatMap { Int($0) }
        let orders: [Order] = try DbOpen.read(invocation) { session in
            var candidates = try session.orders(matching: OrderFilter(userId: user))
            for key in try changedSince(time, entity: .order, in: session)
            where !candidates.contains(where: { $0.no == key }) {
                if let order = try session.order(no: key) { candidates.append(order) }
            }
            var out: [Order] = []
            for order in candidates {
                let audit = try session.audit(entity: .order, key: order.no)
                let dates = try signedDates(audit, known: [], in: session)
                let then = EntitlementAsOf.order(order, audit: audit, signedDates: dates, at: time)
                let existed = then.purchaseDate.map { $0 <= time } ?? (then.createdAt <= time)
                guard existed, user == nil || then.userId == user else { continue }
                guard status == nil || then.status.rawValue == status, product == nil || then.productId == product else {
                    continue
                }
                out.append(then)
            }
            return out
        }
        let shown = limit.map { Array(orders.prefix($0)) } ?? orders
        invocation.emit(
            shown.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.orderColumns : RowRendering.allOrderColumns)
        invocation.note("as of \(Timestamp.iso8601(time)): \(shown.count) order\(shown.count == 1 ? "" : "s")")
        return .success
    }
}
