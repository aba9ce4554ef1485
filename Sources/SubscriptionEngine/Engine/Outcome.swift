import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the engine did with one event.
public struct Outcome: Sendable, Equatable {
    public var verdict: Verdict
    /// Row-level changes (empty unless `applied`, or `stale` with money facts recorded).
    public var changes: [Change]
    /// One sentence for people: what happened, or why nothing did.
    public var detail: String
    /// The ledger row written for this event (nil in dry runs that were rolled back).
    public var ledgerId: Int64?
    /// Orders this event touched or matched.
    public var orderNos: [String]
    /// The contract this event touched or matched.
    public var contractId: String?

    public init(
        verdict: Verdict, changes: [Change] = [], detail: String, ledgerId: Int64? = nil,
        orderNos: [String] = [], contractId: String? = nil
    ) {
        self.verdict = verdict
        self.changes = changes
        self.detail = detail
        self.ledgerId = ledgerId
        self.orderNos = orderNos
        self.contractId = contractId
    }
}

/// One row inserted or updated.
public struct Change: Sendable, Equatable {
    public enum Action: String, Sendable {
        case insert, update
    }

    public var entity: EntityKind
    /// Order `no` or contract `contract_id`.
    public var key: String
    public var action: Action
    /// Column-level differences, in column order.
    public var fields: [FieldChange]

    public init(entity: EntityKind, key: String, action: Action, fields: [FieldChange]) {
        self.entity = entity
        self.key = key
        self.action = action
        self.fields = fields
    }

    /// `order 3f2…: status pending → paid, trade_no ∅ → 2000…` (dates as ISO-8601 UTC, `auto_renew`
    /// as true/false, as every output shows it).
    public var summary: String {
        let parts = fields.map { "\($0.column) \(Self.readable($0.column, $0.before)) → \(Self.readable($0.column, $0.after))" }
        return "\(entity.rawValue) \(key) \(action == .insert ? "created" : "updated"): " + parts.joined(separator: ", ")
    }

    static func readable(_ column: String, _ value: String?) -> String {
        guard let value else { return "∅" }
        if column == "auto_renew" { return value == "1" ? "true" : value == "0" ? "false" : value }
        guard column.hasSuffix("_date"), let ms = Int64(value) else { return value }
        return Timestamp.iso8601(ms)
    }
}

/// One column's value before and after, as text (dates as ms).
public struct FieldChange: Sendable, Equatable {
    public var column: String
    public var before: String?
    public var after: String?

    public init(column: String, before: String?, after: String?) {
        self.column = column
        self.before = before
        self.after = after
    }
}

/// Column-level difference of two rows given as `columnValues`.
func diff(_ before: [(String, String?)]?, _ after: [(String, String?)]) -> [FieldChange] {
    guard let before else {
        return after.filter { $0.1 != nil }.map { FieldChange(column: $0.0, before: nil, after: $0.1) }
    }
    var out: [FieldChange] = []
    for (b, a) in zip(before, after) where b.1 != a.1 {
        out.append(FieldChange(column: a.0, before: b.1, after: a.1))
    }
    return out
}
