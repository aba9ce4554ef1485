import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// How `customer` shows a ``CustomerView``: titled sections that fit one screen at 80 columns (ids
/// never cut; long texts wrap), the same sections as members of one JSON document.
enum CustomerRendering {
    /// The view's sections, in reading order.
    static func view(_ view: CustomerView, match: CustomerLookup.Match, now: Int64, structured: Bool) -> DetailView {
        var sections = [head(view, match: match, structured: structured)]
        sections.append(
            DetailView.Section(
                key: "contracts", title: "Contracts (\(view.contracts.count)): state and renewal risk",
                content: .table(
                    view.contracts.map { contract(record: $0.contract, risk: $0.risk, now: now, structured: structured) },
                    columns: contractColumns)))
        sections.append(
            DetailView.Section(
                key: "orders",
                title: "Orders (\(view.orders.count < view.orderCount ? "newest \(view.orders.count) of " : "")\(view.orderCount))",
                content: .table(view.orders.map(RowRendering.record), columns: orderColumns)))
        sections.append(
            DetailView.Section(
                key: "refund_requests", title: "Refund requests to answer (\(view.refunds.count))",
                content: .table(view.refunds.map { refund($0, now: now) }, columns: refundColumns)))
        sections.append(
            DetailView.Section(
                key: "overrides", title: "Overrides in force (\(view.overrides.count))",
                content: .table(view.overrides.map(OverrideRendering.record), columns: overrideColumns)))
        sections.append(
            DetailView.Section(
                key: "grants", title: "Grants in force (\(view.grants.count))",
                content: .table(view.grants.map { GrantOptions.record($0, now: now) }, columns: GrantOptions.columns)))
        sections.append(
            DetailView.Section(
                key: "unmatched", title: "Unmatched items with the customer's ids (\(view.unmatched.count))",
                content: .table(view.unmatched.map(RowRendering.record), columns: unmatchedColumns)))
        sections.append(
            DetailView.Section(
                key: "audit", title: "Last changes (\(view.audit.count))",
                content: .table(view.audit.map { RowRendering.record($0, structured: structured) }, columns: auditColumns)))
        sections.append(
            DetailView.Section(
                key: "notes", title: "Notes (\(view.notes.count))", content: .table(view.notes.map(note), columns: noteColumns)))
        return DetailView(sections: sections)
    }

    /// Who, whether entitled now and why, and how the KEY led here.
    static func head(_ view: CustomerView, match: CustomerLookup.Match, structured: Bool) -> DetailView.Section {
        let best = view.entitlement.best?.answer
        var r = Record()
        r.append("user_id", view.userId)
        // As `entitled` answers: a purchase first; a grant in force when no purchase entitles.
        let grant = best?.entitled == true ? nil : view.grants.first
        r.append("entitled", best?.entitled ?? false || grant != nil)
        r.append("why", grant.map(GrantOptions.sentence) ?? best?.reason ?? "no contract of \(view.userId)")
        r.append("contract_id", best?.contract.contractId)
        if structured {
            r.append("status", best?.status)
            r.append("matched_as", .array(match.kinds.map { JSONValue.string($0.rawValue) }))
            r.append("matched_via", .array(match.via.map(JSONValue.string)))
        } else {
            r.append("found_by", match.via.joined(separator: "; "))
        }
        return DetailView.Section(key: "customer", title: "Customer", content: .fields(r))
    }

    /// A contract with its risk: the risk's kinds and sentences (JSON: `renewal_risk`, an object).
    static func contract(record contract: Contract, risk: RenewalRisk, now: Int64, structured: Bool) -> Record {
        var r = RowRendering.record(contract, at: now, table: !structured)
        if structured {
            r.append("renewal_risk", RenewalRiskRendering.record(risk, structured: true).jsonObject())
        } else {
            r.append("risk", risk.summary)
        }
        return r
    }

    static func refund(_ request: RefundRequest, now: Int64) -> Record {
        var r = Record()
        r.append("deadline_at", request.deadline)
        r.append("status", request.status(now: now).rawValue)
        r.append("transaction_id", request.transactionId)
        r.append("original_transaction_id", request.originalTransactionId)
        r.append("product_id", request.productId)
        r.append("requested_at", request.request.signedDate)
        r.append("ledger_id", request.request.id)
        return r
    }

    static func note(_ note: CustomerNote) -> Record {
        var r = Record()
        r.append("id", note.id)
        r.append("written_at", note.at)
        r.append("actor", note.actor)
        r.append("ticket", note.ticket)
        r.append("text", note.text)
        r.append("audit_id", note.auditId)
        return r
    }

    static let contractColumns: [Column] = [
        Column("contract_id", title: "CONTRACT", important: true), Column("product_id", title: "PRODUCT", maxWidth: 24),
        Column("status", title: "STATUS", important: true), Column("expires_date", title: "EXPIRES", important: true),
        Column("risk", title: "RISK", maxWidth: 80, important: true, wraps: true),
    ]

    static let orderColumns: [Column] = [
        Column("no", title: "NO", important: true), Column("product_id", title: "PRODUCT", maxWidth: 24),
        Column("status", title: "STATUS", important: true), Column("trade_no", title: "TRADE_NO"),
        Column("expires_date", title: "EXPIRES"),
    ]

    static let refundColumns: [Column] = [
        Column("deadline_at", title: "DEADLINE", important: true), Column("status", title: "STATUS", important: true),
        Column("transaction_id", title: "TRANSACTION", important: true), Column("product_id", title: "PRODUCT", maxWidth: 24),
    ]

    static let overrideColumns: [Column] = [
        Column("key", title: "ROW", important: true), Column("audit_id", title: "AUDIT"),
        Column("note", title: "OVERRIDE", maxWidth: 100, important: true, wraps: true),
    ]

    static let unmatchedColumns: [Column] = [
        Column("signed_date", title: "SIGNED"), Column("event", title: "EVENT", important: true, folds: true),
        Column("transaction_id", title: "TRANSACTION", important: true),
        Column("detail", title: "DETAIL", maxWidth: 80, wraps: true),
    ]

    static let auditColumns: [Column] = [
        Column("id", title: "AUDIT"), Column("changed_at", title: "WHEN"), Column("actor", title: "ACTOR"),
        Column("command", title: "COMMAND"), Column("changes", title: "CHANGES", important: true, wraps: true),
    ]

    static let noteColumns: [Column] = [
        Column("written_at", title: "WHEN"), Column("actor", title: "ACTOR"), Column("ticket", title: "TICKET"),
        Column("text", title: "NOTE", maxWidth: 100, important: true, wraps: true),
    ]
}
