import IAPFoundation

/// A hand change of a derived field (issue 23): what support decided, kept beside the facts so the
/// engine's next derivation does not silently undo it.
///
/// The rule: an override holds until it is removed (`audit undo` of the correction that made it, or
/// `orders|contracts update … --clear-override FIELD`) or until Apple signs a fact about a newer
/// period than the override saw (``OverrideRule/lifter(_:tradeNo:facts:)``). A fact about an older
/// period never lifts it.
///
/// Stored in `iap_overrides` (schema version 6), not derived from the audit trail: the audit trail
/// does not say which facts a correction saw (facts carry no arrival time), and whether a later
/// `audit undo` or a newer period lifted an override would have to be re-decided from every row
/// every time the engine runs.
public struct Override: Sendable, Equatable {
    public var id: Int64
    public var entity: EntityKind
    /// Order `no` or contract `contract_id`.
    public var key: String
    /// The subscription (or one-time purchase) the row belongs to ("" when the order has none yet).
    public var originalTransactionId: String
    /// The column set by hand (``OverrideRule/derivedFields(_:)``).
    public var field: String
    /// The value set, as the column's text (dates in ms, flags 1/0; nil for NULL).
    public var value: String?
    /// The audit row of the correction that made it.
    public var auditId: Int64
    public var actor: String
    public var reason: String?
    public var ticket: String?
    /// When it was made (ms since the epoch).
    public var at: Int64
    /// What it saw of the periods: for a contract, the newest period's purchaseDate; for an order,
    /// the newest signedDate of its transaction's versions (nil when none was known).
    public var seenPeriod: Int64?
    /// How many facts of the subscription were kept when it was made.
    public var seenFacts: Int64
    /// When it stopped holding (nil while in force), and why.
    public var liftedAt: Int64?
    public var liftedBy: String?

    public init(
        id: Int64 = 0, entity: EntityKind, key: String, originalTransactionId: String, field: String, value: String?,
        auditId: Int64, actor: String, reason: String?, ticket: String?, at: Int64, seenPeriod: Int64?,
        seenFacts: Int64, liftedAt: Int64? = nil, liftedBy: String? = nil
    ) {
        self.id = id
        self.entity = entity
        self.key = key
        self.originalTransactionId = originalTransactionId
        self.field = field
        self.value = value
        self.auditId = auditId
        self.actor = actor
        self.reason = reason
        self.ticket = ticket
        self.at = at
        self.seenPeriod = seenPeriod
        self.seenFacts = seenFacts
        self.liftedAt = liftedAt
        self.liftedBy = liftedBy
    }

    public var inForce: Bool { liftedAt == nil }

    /// `#17, T-2001` (the audit row id, then the ticket if any).
    public var label: String { "#\(auditId)" + (ticket.map { ", \($0)" } ?? "") }
}

/// Which fields are derived, what an override saw, and when facts lift it.
public enum OverrideRule {
    /// The fields derived from facts; a hand change of one is an override. Ownership fields
    /// (`user_id`, `trade_no`, `origin_no`) are not derived: changing them stays a plain correction.
    public static func derivedFields(_ entity: EntityKind) -> [String] {
        switch entity {
        case .order: return ["status", "product_id", "expires_date"]
        case .contract: return ["status", "auto_renew", "expires_date", "product_id"]
        }
    }

    /// What an override of a row made now sees of the facts (``Override/seenPeriod``).
    static func seen(_ entity: EntityKind, tradeNo: String?, facts: FactSet) -> Int64? {
        switch entity {
        case .contract: return newestPeriod(facts)?.purchaseDate
        case .order: return tradeNo.flatMap { facts.transactions[$0]?.map(\.signedDate).max() }
        }
    }

    /// Why `facts` lift `override` (nil while it holds): for a contract, a transaction of the
    /// subscription purchased after the newest period it saw; for an order, a version of its
    /// transaction signed after both the newest version it saw and the moment it was made.
    static func lifter(_ override: Override, tradeNo: String?, facts: FactSet) -> String? {
        switch override.entity {
        case .contract:
            guard let newest = newestPeriod(facts), let purchased = newest.purchaseDate,
                override.seenPeriod.map({ purchased > $0 }) ?? true
            else { return nil }
            return "Apple signed a newer period (transaction \(newest.transactionId) purchased \(Timestamp.iso8601(purchased)))"
        case .order:
            guard let tradeNo, let versions = facts.transactions[tradeNo] else { return nil }
            let after = max(override.seenPeriod ?? Int64.min, override.at)
            guard let newer = versions.map(\.signedDate).filter({ $0 > after }).max() else { return nil }
            return "Apple signed a newer version of transaction \(tradeNo) (signed \(Timestamp.iso8601(newer)))"
        }
    }

    /// The transaction with the latest purchase (any version, any source).
    static func newestPeriod(_ facts: FactSet) -> TransactionFacts? {
        facts.transactions.values.flatMap { versions in versions.map(\.value) }
            .filter { $0.purchaseDate != nil }
            .max { ($0.purchaseDate ?? 0, $0.transactionId) < ($1.purchaseDate ?? 0, $1.transactionId) }
    }

    /// The newest override of each field among `overrides` (in force ones only), by field.
    public static func newestInForce(_ overrides: [Override]) -> [String: Override] {
        var byField: [String: Override] = [:]
        for override in overrides where override.inForce {
            if let held = byField[override.field], held.id > override.id { continue }
            byField[override.field] = override
        }
        return byField
    }
}

extension CorrectableRow {
    /// Sets the overridden fields of this row to the values support set (newest override per field).
    mutating func applyOverrides(_ overrides: [Override]) {
        for override in OverrideRule.newestInForce(overrides).values.sorted(by: { $0.id < $1.id }) {
            let value: JSONValue = override.value.map { text in Int64(text).map(JSONValue.int) ?? .string(text) } ?? .null
            guard let edit = try? Self.edit(override.field, value) else { continue }
            apply(edit)
        }
    }
}

/// `entitled` and `contracts show --as-of` with the contract's hand overrides: an override made by
/// T and not yet lifted then decides over the facts (a hand revoke cuts access, a hand extension
/// of `expires_date` grants it until then), and the reason says so.
enum HandEntitlement {
    static func apply(_ overrides: [Override], to answer: EntitlementAsOf.Answer, at time: Int64) -> EntitlementAsOf.Answer {
        let then = overrides.filter { $0.at <= time && ($0.liftedAt.map { $0 > time } ?? true) }.map { o -> Override in
            var held = o
            held.liftedAt = nil
            return held
        }
        let held = OverrideRule.newestInForce(then)
        guard !held.isEmpty else { return answer }
        var result = answer
        result.contract.applyOverrides(Array(held.values))
        let status = held["status"].flatMap { ContractStatus(rawValue: $0.value ?? "") }
        let expires = held["expires_date"]
        guard status != nil || expires != nil else { return result }
        let facts = "Apple's facts say \(answer.status)"
        let decided = [held["status"], expires].compactMap { $0 }
        let by = decided.map { o in
            let value = o.value.flatMap(Int64.init).map(Timestamp.iso8601) ?? o.value ?? "∅"
            return "\(o.field) \(value) by hand (\(o.label))"
        }.joined(separator: ", ")
        // A hand `expires_date` decides the period whatever the facts' own period says of it
        // (paid through, ended, lapsed); the status (the facts', or a hand one) still decides
        // access. Before any payment there is no period to extend.
        let effective = status ?? (answer.status == "not-yet" ? nil : result.contract.status)
        guard let effective else { return result }
        if !effective.givesAccess {
            result.entitled = false
            result.status = effective.rawValue
            result.covering = nil
            result.reason = "\(by); \(facts)"
            return result
        }
        let until = result.contract.expiresDate
        result.entitled = until.map { time < $0 } ?? true
        result.status = result.entitled ? effective.rawValue : "expired"
        if result.entitled {
            result.lapse = nil
        } else if let lapse = Lapse.of(status: effective, expiresDate: until, at: time) {
            // Ended by hand with nothing from Apple since: still lapsed, as the row says.
            result.status = "lapsed"
            result.lapse = lapse
        }
        result.reason =
            "\(by); " + (until.map { result.entitled ? "entitled until \(Timestamp.iso8601($0))" : "ended \(Timestamp.iso8601($0))" } ?? "")
            + "; \(facts)"
        return result
    }
}
