import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

/// Which fields are derived, what an override saw, and when facts lift it.
public enum OverrideRule {
    /// The fields derived from facts; a hand change of one is an override. Ownership fields
    /// (`user_id`, `trade_no`, `origin_no`) are not derived: changing them stays a plain correction.
    public static func derivedFields(_ entity: EntityKind) -> [String] {
        switch entity {
        case .order: return ["status", "product_id", "expires_date"]
        case .contract: return ["status", "auto_renew", "expires_date", "product_id"]
        case .grant, .user: return []
        case .note: return []
        }
    }

    /// What an override of a row made now sees of the facts (``Override/seenPeriod``).
    static func seen(_ entity: EntityKind, tradeNo: String?, facts: FactSet) -> Int64? {
        switch entity {
        case .contract: return newestPeriod(facts)?.purchaseDate
        case .order: return tradeNo.flatMap { facts.transactions[$0]?.map(\.signedDate).max() }
        case .grant, .user: return nil
        case .note: return nil
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
        case .grant, .user: return nil
        case .note:
            return nil
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
