import IAPFoundation
import SubscriptionModel

/// Reading the audit trail's before/after JSON of orders and contracts (``EngineAuditJSON`` writes
/// it: the rows' property names as keys, sorted): the row's columns in schema order, the status, and
/// an audit row's field-level changes — so the commands show the trail without a reader of their own.
public enum AuditRows {
    /// A stored row as (column name, value) pairs in schema order (members of no known column last,
    /// in their order); none when there is no row or it is not a JSON object.
    public static func columns(_ json: String?) -> [(column: String, value: JSONValue)] {
        inSchemaOrder(members(json).map { ($0.key.snakeCased, $0.value) })
    }

    /// The row's `status`, when it has one.
    public static func status(_ json: String?) -> String? {
        members(json).first { $0.key == "status" }?.value.stringValue
    }

    /// Column names in schema order (orders, then the contract-only ones).
    public static let schemaOrder: [String] =
        Order(no: "", userId: "", productId: "").columnValues.map(\.0)
        + Contract(contractId: "", userId: "", productId: "").columnValues.map(\.0).filter {
            !["user_id", "product_id", "status", "expires_date", "environment"].contains($0)
        } + ["last_event_date"]

    static func members(_ json: String?) -> [(key: String, value: JSONValue)] {
        guard let json, let value = try? JSONText.parse(json) else { return [] }
        return value.objectMembers ?? []
    }

    /// `pairs` stably sorted into schema order, unknown columns last.
    static func inSchemaOrder<T>(_ pairs: [(column: String, value: T)]) -> [(column: String, value: T)] {
        let rank = { (column: String) in schemaOrder.firstIndex(of: column) ?? schemaOrder.count }
        return pairs.enumerated().sorted { (rank($0.element.column), $0.offset) < (rank($1.element.column), $1.offset) }
            .map(\.element)
    }
}

/// One column whose value an audited change replaced: before (none for an insert or a member the
/// row did not have) and after.
public struct AuditedField: Sendable, Equatable {
    public var column: String
    public var before: JSONValue?
    public var after: JSONValue?
}

extension AuditEntry {
    /// The columns this change set to another value, in schema order. `id`, `created_at` and
    /// `updated_at` are left out (the audit row's own time says when), and so is the row's own key
    /// for an insert (it is the audit row's key).
    public var changedFields: [AuditedField] {
        let before = AuditRows.members(self.before)
        let after = AuditRows.members(self.after)
        var keys: [String] = []
        for (key, _) in before + after where !keys.contains(key) { keys.append(key) }
        let ordered = AuditRows.inSchemaOrder(keys.map { (column: $0.snakeCased, value: $0) })
        let ownKey = entity == .order ? "no" : "contract_id"
        return ordered.compactMap { column, key in
            guard !["id", "updated_at", "created_at"].contains(column) else { return nil }
            if self.before == nil, column == ownKey { return nil }
            let old = before.first { $0.key == key }?.value
            let new = after.first { $0.key == key }?.value
            return old == new ? nil : AuditedField(column: column, before: old, after: new)
        }
    }
}
