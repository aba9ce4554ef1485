import SubscriptionDerivation
import SubscriptionModel

/// Hand overrides kept, removed and shown (``Override``): the corrections and `audit undo` record and
/// remove them in the caller's write transaction; the engine applies those in force
/// (``EngineRun``); `show` and `explain` say what Apple's facts say beside them.
public enum OverrideService {
    /// Keeps one override per changed derived field of a correction (audit row `auditId`).
    static func record(
        _ changes: [FieldChange], entity: EntityKind, key: String, scope: OverrideScope, auditId: Int64, reason: String?,
        ticket: String?, context: CorrectionContext, in session: any StoreSession
    ) throws {
        let derived = changes.filter { OverrideRule.derivedFields(entity).contains($0.column) }
        guard !derived.isEmpty else { return }
        let origin = scope.originalTransactionId ?? ""
        let facts = origin.isEmpty ? [] : try session.facts(originalTransactionId: origin)
        let set = FactSet(facts)
        let seen = OverrideRule.seen(entity, tradeNo: scope.tradeNo, facts: set)
        for change in derived {
            _ = try session.insertOverride(
                Override(
                    entity: entity, key: key, originalTransactionId: origin, field: change.column, value: change.after,
                    auditId: auditId, actor: context.actor, reason: reason, ticket: ticket, at: context.now, seenPeriod: seen,
                    seenFacts: Int64(facts.count)))
        }
    }

    /// Lifts the overrides in force of `entity` `key` that `matching` selects, saying `why`; then
    /// re-derives the subscription from its facts (audited with the same command and `ticket`), so the
    /// row shows what Apple's facts say again. Returns the lifted overrides, the rows the re-derivation
    /// changed and the ids of their audit rows (one per change, in order).
    static func remove(
        entity: EntityKind, key: String, why: String, ticket: String? = nil, context: CorrectionContext,
        in session: any StoreSession, matching: (Override) -> Bool
    ) throws -> (lifted: [Override], rederived: [Change], auditIds: [Int64]) {
        var lifted: [Override] = []
        for var override in try session.overrides(entity: entity, key: key) where override.inForce && matching(override) {
            override.liftedAt = context.now
            override.liftedBy = why
            try session.updateOverride(override)
            lifted.append(override)
        }
        guard let origin = lifted.first?.originalTransactionId, !origin.isEmpty else { return (lifted, [], []) }
        let now = context.now
        let engine = SubscriptionEventEngine(now: { now })
        let done = try engine.rederiveAudited(
            originalTransactionId: origin, in: session,
            context: EngineContext(actor: context.actor, command: context.command, ticket: ticket),
            reason: "override \(lifted.map { "#\($0.auditId)" }.joined(separator: ", ")) \(why): re-derived from the facts")
        return (lifted, done.changes, done.auditIds)
    }

    /// `orders|contracts update KEY --clear-override FIELD…`: lifts the overrides in force of these
    /// fields and re-derives the row from the facts; the audit rows of the re-derivation carry `ticket`.
    ///
    /// - Throws: ``CorrectionError/notFound(line:entity:fields:key:)`` when the row does not exist,
    ///   ``OverrideError/noOverride(entity:key:field:)`` when a field has no override in force.
    public static func clear<Row: CorrectableRow>(
        _: Row.Type, key: String, fields: [String], reason: String, ticket: String? = nil, context: CorrectionContext,
        in session: any StoreSession
    ) throws -> (lifted: [Override], rederived: [Change], auditIds: [Int64]) {
        guard let row = try Row.find(key, field: "", in: session) else {
            throw CorrectionError.notFound(
                line: nil, entity: Row.entity, fields: Row.keyFields.joined(separator: " or "), key: key)
        }
        let held = try session.overrides(entity: Row.entity, key: row.auditKey).filter(\.inForce)
        for field in fields where !held.contains(where: { $0.field == field }) {
            throw OverrideError.noOverride(entity: Row.entity, key: row.auditKey, field: field)
        }
        return try remove(
            entity: Row.entity, key: row.auditKey, why: "cleared by \(context.actor): \(reason)", ticket: ticket,
            context: context, in: session, matching: { fields.contains($0.field) })
    }

    /// The overrides in force of `entity` `key`, newest per field, each with the value Apple's facts
    /// give that field now.
    public static func shown(
        entity: EntityKind, key: String, tradeNo: String?, originalTransactionId: String?, now: Int64,
        in session: any StoreSession
    ) throws -> [ShownOverride] {
        let held = OverrideRule.newestInForce(try session.overrides(entity: entity, key: key))
        guard !held.isEmpty else { return [] }
        let facts = try originalTransactionId.map { try session.facts(originalTransactionId: $0) } ?? []
        let derived = Derivation.derive(FactSet(facts), now: now)
        let fields = OverrideRule.derivedFields(entity).filter { held[$0] != nil }
        return fields.compactMap { field in
            guard let override = held[field] else { return nil }
            let value: String??
            switch entity {
            case .contract: value = derived.contract.map { DerivedValues.contract($0, field) }
            case .order:
                value = derived.orders.first { $0.transaction.transactionId == tradeNo }.map { DerivedValues.order($0, field) }
            case .grant, .user: value = nil
            case .note: value = nil
            }
            return ShownOverride(override: override, derivedValue: value ?? nil, derivedKnown: value != nil)
        }
    }
}

/// The subscription and transaction a corrected row belongs to (what its overrides are checked against).
public struct OverrideScope: Sendable, Equatable {
    public var originalTransactionId: String?
    public var tradeNo: String?

    public init(originalTransactionId: String?, tradeNo: String?) {
        self.originalTransactionId = originalTransactionId
        self.tradeNo = tradeNo
    }
}

/// An override in force and what Apple's facts say of its field now.
public struct ShownOverride: Sendable, Equatable {
    public var override: Override
    /// The field's value by the facts alone (column text; nil for NULL or when unknown).
    public var derivedValue: String?
    /// Whether the facts give the row at all (false: no fact is kept for it).
    public var derivedKnown: Bool
}

/// Why an override cannot be cleared.
public enum OverrideError: Error, Equatable, Sendable {
    /// The field has no override in force on that row.
    case noOverride(entity: EntityKind, key: String, field: String)
}

/// The derived value of a field, as the column's text.
enum DerivedValues {
    static func contract(_ c: DerivedContract, _ field: String) -> String? {
        switch field {
        case "status": return c.status.rawValue
        case "auto_renew": return c.autoRenew ? "1" : "0"
        case "expires_date": return c.expiresDate.map(String.init)
        case "product_id": return c.productId
        default: return nil
        }
    }

    static func order(_ o: DerivedOrder, _ field: String) -> String? {
        switch field {
        case "status": return o.status.rawValue
        case "expires_date": return o.transaction.expiresDate.map(String.init)
        case "product_id": return o.transaction.productId
        default: return nil
        }
    }
}
