import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// Hand overrides as `orders show`, `contracts show` and `contracts explain` print them: one record
/// per field under override, with the value Apple's facts give it and a sentence saying both.
enum OverrideRendering {
    /// The overrides in force of `history`'s contract and orders (inside the caller's transaction).
    static func gather(_ history: RecordHistory, now: Int64, in session: any StoreSession) throws -> [ShownOverride] {
        var shown: [ShownOverride] = []
        if let contract = history.contract {
            shown += try OverrideService.shown(
                entity: .contract, key: contract.contractId, tradeNo: nil, originalTransactionId: contract.contractId, now: now,
                in: session)
        }
        for order in history.orders {
            shown += try OverrideService.shown(
                entity: .order, key: order.no, tradeNo: order.tradeNo, originalTransactionId: order.originNo, now: now,
                in: session)
        }
        return shown
    }

    /// `status revoked by hand (#17, T-2001); Apple's newest facts say active`.
    static func sentence(_ shown: ShownOverride) -> String {
        let (value, derived) = values(shown)
        let facts =
            shown.derivedKnown
            ? "Apple's newest facts say \(derived ?? "∅")" : "no fact of Apple's gives this \(shown.override.entity.rawValue)"
        return "\(shown.override.field) \(value ?? "∅") by hand (\(shown.override.label)); \(facts)"
    }

    /// The override's value and the facts' value, as people read them (dates ISO-8601, flags true/false).
    static func values(_ shown: ShownOverride) -> (value: String?, derived: String?) {
        let change = RowRendering.displayed([
            FieldChange(column: shown.override.field, before: shown.derivedValue, after: shown.override.value)
        ])[0]
        return (change.after, change.before)
    }

    static func record(_ shown: ShownOverride) -> Record {
        let (value, derived) = values(shown)
        let o = shown.override
        var r = Record()
        r.append("entity", o.entity.rawValue)
        r.append("key", o.key)
        r.append("field", o.field)
        r.append("value", value)
        r.append("derived_value", derived)
        r.append("audit_id", o.auditId)
        r.append("actor", o.actor)
        r.append("reason", o.reason)
        r.append("ticket", o.ticket)
        r.append("set_at", o.at)
        r.append("note", sentence(shown))
        return r
    }

    static let columns: [Column] = [
        Column("key", title: "ROW"), Column("field", title: "FIELD"), Column("audit_id", title: "AUDIT"),
        Column("actor", title: "ACTOR"), Column("set_at", title: "WHEN"), Column("reason", title: "REASON", maxWidth: 40),
        Column("note", title: "OVERRIDE", maxWidth: 100, important: true, wraps: true),
    ]

    /// `record` (a row of `entity` `key`, as a table shows it) with each field under override
    /// saying so where people read it: `revoked (by hand, audit #17; Apple's facts say expired)`
    /// in a row's fields, `refunded by hand` in a table cell.
    static func marked(
        _ record: Record, entity: EntityKind, key: String, overrides: [ShownOverride], cell: Bool
    ) -> Record {
        var r = record
        for shown in overrides where shown.override.entity == entity && shown.override.key == key {
            guard let current = r[shown.override.field] else { continue }
            let text = OutputRenderer.tableText(current, key: shown.override.field)
            if cell {
                r[shown.override.field] = .string("\(text) by hand")
            } else {
                let facts =
                    shown.derivedKnown
                    ? "Apple's facts say \(values(shown).derived ?? "∅")" : "no fact of Apple's gives it"
                r[shown.override.field] = .string("\(text) (by hand, audit #\(shown.override.auditId); \(facts))")
            }
        }
        return r
    }

    /// The section of `show` and `explain`: none when nothing is under override, so the common case
    /// prints as before.
    static func sections(_ shown: [ShownOverride]) -> [DetailView.Section] {
        guard !shown.isEmpty else { return [] }
        return [
            DetailView.Section(
                key: "overrides",
                title: "Overrides (\(shown.count): set by hand; they hold until `audit undo`, --clear-override or a newer period)",
                content: .table(shown.map(record), columns: columns))
        ]
    }
}

extension DetailView {
    /// This view with `more` sections after its own.
    func appending(_ more: [Section]) -> DetailView { DetailView(sections: sections + more) }
}
