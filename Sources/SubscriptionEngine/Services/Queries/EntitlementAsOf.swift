import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Rows as they were at a past moment, and whether a subscription entitled its user then.
///
/// Approach: every change to a row is in the audit trail with the row before and after. A change
/// the engine made is dated by Apple's `signedDate` of the ledger event that caused it (the audit
/// row's `ledgerId`); a manual change (correction, transfer, undo) by the time it was made. A
/// field's value at T is its value after the latest change dated at or before T (or, if every
/// change is later, its value before the first one). So a refund Apple signed after T leaves
/// the order paid at T, and a correction made after T is not seen at T.
///
/// Entitled at T: the contract's user at T holds it; it is active, canceled or in the grace
/// period at T; and a paid order (not refunded at T) covers T — or it is in the billing grace period.
///
/// With the engine's facts, the state at T is the derivation (``Derivation``) of the facts signed
/// by T: the same function that gives the stored rows. The audit trail then only tells who held
/// the contract at T (transfers and corrections). Databases without facts use the audit alone.
public enum EntitlementAsOf {
    /// Which question an answer at a past moment T answers.
    public enum Question: String, Sendable, Equatable, CaseIterable {
        /// What was true at T, with everything known now: a refund signed later revokes from its
        /// revocationDate, a renewal signed late (or a period Apple's history revealed later)
        /// covers its period (``datedByWhatTheySay(_:)``).
        case asKnownNow = "as-known-now"
        /// What the database knew at T: only the facts signed by then.
        case asKnownThen = "as-known-then"

        /// `as known now` / `as the database knew it then`, for sentences.
        public var words: String {
            switch self {
            case .asKnownNow: return "as known now"
            case .asKnownThen: return "as the database knew it then"
            }
        }
    }

    /// The verdict for one contract at one time.
    public struct Answer: Sendable, Equatable {
        public var entitled: Bool
        /// The contract as it was at T.
        public var contract: Contract
        /// Its orders as they were at T (those purchased by T).
        public var orders: [Order]
        /// `active`, `canceled`, `grace_period`, `billing_retry`, `expired`, `revoked`, `lapsed`
        /// (paid until before T, nothing from Apple since: ``lapse``), or `not-yet` (no payment by then).
        public var status: String
        /// One sentence: why.
        public var reason: String
        /// The order whose paid period covers T.
        public var covering: Order?
        /// Set when the contract had lapsed at T (``Lapse``): status `lapsed`, not entitled.
        public var lapse: Lapse? = nil
        /// Which question it answers.
        public var question: Question = .asKnownThen
    }

    /// The time an audit row's change counts from: the ledger event's signedDate, else when it was made.
    public static func effectiveTime(_ entry: AuditEntry, signedDates: [Int64: Int64]) -> Int64 {
        entry.ledgerId.flatMap { signedDates[$0] } ?? entry.at
    }

    /// `current` with every audited field change dated after `time` rolled back.
    public static func order(_ current: Order, audit: [AuditEntry], signedDates: [Int64: Int64], at time: Int64) -> Order {
        var row = current
        let values = valuesAt(time, current: current.columnValues, audit: audit, as: Order.self, signedDates: signedDates)
        for (column, value) in values {
            switch column {
            case "user_id": if let value { row.userId = value }
            case "product_id": if let value { row.productId = value }
            case "status": if let value, let status = OrderStatus(rawValue: value) { row.status = status }
            case "trade_no": row.tradeNo = value
            case "origin_no": row.originNo = value
            case "purchase_date": row.purchaseDate = value.flatMap { Int64($0) }
            case "expires_date": row.expiresDate = value.flatMap { Int64($0) }
            default: break
            }
        }
        return row
    }

    /// `current` with every audited field change dated after `time` rolled back.
    public static func contract(
        _ current: Contract, audit: [AuditEntry], signedDates: [Int64: Int64], at time: Int64
    ) -> Contract {
        var row = current
        let values = valuesAt(time, current: current.columnValues, audit: audit, as: Contract.self, signedDates: signedDates)
        for (column, value) in values {
            switch column {
            case "user_id": if let value { row.userId = value }
            case "product_id": if let value { row.productId = value }
            case "status": if let value, let status = ContractStatus(rawValue: value) { row.status = status }
            case "auto_renew": row.autoRenew = value == "1"
            case "expires_date": row.expiresDate = value.flatMap { Int64($0) }
            case "next_product_id": row.nextProductId = value
            default: break
            }
        }
        return row
    }

    /// Whether `contract` entitled its user at `time`, from the facts signed by then.
    ///
    /// Every reason names the fact's own date (the period's end, the refund's date, the
    /// notification's signedDate), never the query time.
    public static func evaluate(
        contract current: Contract, orders currentOrders: [Order], events: [LedgerEntry], audit: [AuditEntry],
        facts: [Fact], at time: Int64, question: Question = .asKnownThen
    ) -> Answer {
        guard !facts.isEmpty else {
            var answer = evaluate(contract: current, orders: currentOrders, events: events, audit: audit, at: time)
            answer.question = question
            return answer
        }
        var answer = evaluateFacts(
            contract: current, orders: currentOrders, events: events, audit: audit, facts: facts, at: time, question: question)
        answer.question = question
        return answer
    }

    /// Each fact dated by the moment it is about rather than when it was signed, so that the
    /// facts "signed by T" are everything known now about T: a transaction version that revokes
    /// counts from its revocationDate (when signed later), and a version of a period that is not
    /// revoked nor upgraded counts from its purchase (a renewal or history answer signed after its
    /// period began) — unless it was signed after a revoking version of the same transaction (it
    /// may lift the revocation: it keeps its date). Upgrades, renewal infos and notifications keep
    /// their signedDate: what Apple said, it said then.
    public static func datedByWhatTheySay(_ facts: [Fact]) -> [Fact] {
        var decoded: [Int: TransactionFacts] = [:]
        var firstRevoking: [String: Int64] = [:]
        for (index, fact) in facts.enumerated() where fact.kind == .transaction {
            // An unreadable body is left out here; the derivation of these facts reports it.
            guard let tx = try? FactBody.transaction(fact.body, key: fact.key) else { continue }
            decoded[index] = tx
            if tx.revocationDate != nil, !tx.isFromReceipt {
                firstRevoking[fact.key] = Swift.min(firstRevoking[fact.key] ?? .max, fact.signedDate)
            }
        }
        return facts.enumerated().map { index, fact in
            guard let tx = decoded[index] else { return fact }
            var dated = fact
            if let revoked = tx.revocationDate, !tx.isFromReceipt {
                dated.signedDate = Swift.min(fact.signedDate, revoked)
            } else if tx.isUpgraded != true, let purchased = tx.purchaseDate, fact.signedDate < (firstRevoking[fact.key] ?? .max) {
                dated.signedDate = Swift.min(fact.signedDate, purchased)
            }
            return dated
        }
    }

    static func evaluateFacts(
        contract current: Contract, orders currentOrders: [Order], events: [LedgerEntry], audit: [AuditEntry],
        facts: [Fact], at time: Int64, question: Question
    ) -> Answer {
        var signedDates: [Int64: Int64] = [:]
        for event in events { if let signed = event.signedDate { signedDates[event.id] = signed } }
        var contract = Self.contract(
            current, audit: audit.filter { $0.entity == .contract && $0.key == current.contractId },
            signedDates: signedDates, at: time)
        let known = question == .asKnownNow ? datedByWhatTheySay(facts) : facts
        let derived = Derivation.derive(FactSet(known, signedBy: time), now: time)
        var orders: [Order] = []
        for d in derived.orders {
            let tx = d.transaction
            var order =
                currentOrders.first { $0.tradeNo == tx.transactionId }
                ?? Order(no: "-", userId: contract.userId, productId: tx.productId, tradeNo: tx.transactionId)
            order.productId = tx.productId
            order.status = d.status
            order.originNo = tx.originalTransactionId
            order.purchaseDate = tx.purchaseDate
            order.expiresDate = tx.expiresDate
            orders.append(order)
        }
        guard let dc = derived.contract else {
            return Answer(
                entitled: false, contract: contract, orders: orders, status: "not-yet",
                reason: "no payment of contract \(current.contractId) signed by then", covering: nil)
        }
        contract.productId = dc.productId
        contract.status = dc.status
        contract.autoRenew = dc.autoRenew
        contract.expiresDate = dc.expiresDate
        contract.nextProductId = dc.nextProductId
        let tx = dc.current
        let covering = orders.first { $0.tradeNo == tx.transactionId }
        let statusReason = dc.reason("status")
        let said = statusReason.map { r in r.fact + (r.signedDate.map { " signed \(Timestamp.iso8601($0))" } ?? "") } ?? ""
        func answer(_ entitled: Bool, _ status: String, _ reason: String) -> Answer {
            Answer(
                entitled: entitled, contract: contract, orders: orders, status: status, reason: reason,
                covering: entitled ? covering : nil)
        }
        let period = Self.period(tx)
        switch dc.status {
        case .revoked:
            if let revoked = tx.revocationDate {
                let what = covering?.status.rawValue ?? "refunded"
                let signed = statusReason?.signedDate.map { " (Apple signed \(Timestamp.iso8601($0)))" } ?? ""
                return answer(false, "revoked", "the current period \(period) was \(what) \(Timestamp.iso8601(revoked))\(signed)")
            }
            return answer(false, "revoked", "revoked: \(said)")
        case .billingRetry:
            return answer(false, "billing_retry", "Apple could not charge; billing retry, not entitled (\(said))")
        case .expired:
            return answer(
                false, "expired",
                "expired: the last period \(period) ended \(tx.expiresDate.map(Timestamp.iso8601) ?? "?") (\(said))")
        case .gracePeriod:
            if let grace = dc.gracePeriodExpiresDate, time >= grace {
                return answer(false, "billing_retry", "the billing grace period ended \(Timestamp.iso8601(grace)) (\(said))")
            }
            let until = dc.gracePeriodExpiresDate.map { " until \(Timestamp.iso8601($0))" } ?? ""
            return answer(true, "grace_period", "in the billing grace period\(until): entitled while Apple retries (\(said))")
        case .active, .canceled:
            if let purchased = tx.purchaseDate, time < purchased {
                // Apple signs a renewal ahead of its period: until it starts, the period before it runs.
                if let earlier = coveringPaidPeriod(derived, at: time),
                    let order = orders.first(where: { $0.tradeNo == earlier.transactionId })
                {
                    return Answer(
                        entitled: true, contract: contract, orders: orders, status: dc.status.rawValue,
                        reason: "paid period \(Self.period(earlier)) covers then; the next period \(tx.transactionId) "
                            + "starts \(Timestamp.iso8601(purchased))",
                        covering: order)
                }
                return answer(false, "not-yet", "the current period \(period) starts after then")
            }
            if let lapse = Lapse.of(status: dc.status, expiresDate: tx.expiresDate, at: time) {
                return .lapsed(lapse, contract: contract, orders: orders, period: period)
            }
            return answer(
                true, dc.status.rawValue,
                "paid period \(period) covers then"
                    + (dc.status == .canceled ? "; auto-renew off, entitled until it ends" : ""))
        }
    }

    /// Whether `contract` entitled its user at `time`, from the audit trail alone (databases
    /// whose contracts have no facts).
    ///
    /// - Parameters:
    ///   - orders: the contract's orders as they are now; `events`: its ledger rows; `audit`: the
    ///     audit rows of the contract and of those orders.
    public static func evaluate(
        contract current: Contract, orders currentOrders: [Order], events: [LedgerEntry], audit: [AuditEntry],
        at time: Int64
    ) -> Answer {
        var signedDates: [Int64: Int64] = [:]
        for event in events { if let signed = event.signedDate { signedDates[event.id] = signed } }
        let contract = Self.contract(
            current, audit: audit.filter { $0.entity == .contract && $0.key == current.contractId },
            signedDates: signedDates, at: time)
        let orders = currentOrders.map { order in
            Self.order(order, audit: audit.filter { $0.entity == .order && $0.key == order.no }, signedDates: signedDates, at: time)
        }.filter { ($0.purchaseDate ?? Int64.max) <= time }
        let paid = orders.filter { $0.status == .paid }
        let covering = paid.filter { ($0.purchaseDate ?? .max) <= time && time < ($0.expiresDate ?? .max) }
            .max { ($0.expiresDate ?? .max) < ($1.expiresDate ?? .max) }
        func answer(_ entitled: Bool, _ status: String, _ reason: String) -> Answer {
            Answer(entitled: entitled, contract: contract, orders: orders, status: status, reason: reason, covering: covering)
        }
        guard !orders.isEmpty else {
            return answer(false, "not-yet", "no payment of contract \(current.contractId) by then")
        }
        let lastEvent = events.filter { ($0.signedDate ?? .max) <= time && ($0.verdict == .applied) }
            .filter { EventRule(type: $0.appleType, subtype: $0.appleSubtype).changesState }.last
        let lastEventText = lastEvent.map { " (last event: \(eventName($0)) signed \(Timestamp.iso8601($0.signedDate!)))" } ?? ""
        switch contract.status {
        case .revoked:
            return answer(false, "revoked", "revoked" + lastEventText)
        case .billingRetry:
            return answer(false, "billing_retry", "Apple could not charge; billing retry, not entitled" + lastEventText)
        case .expired where covering == nil:
            let ended = paid.compactMap(\.expiresDate).filter { $0 <= time }.max()
            return answer(false, "expired", "expired" + (ended.map { " \(Timestamp.iso8601($0))" } ?? "") + lastEventText)
        case .gracePeriod:
            return answer(true, "grace_period", "in the billing grace period: entitled while Apple retries" + lastEventText)
        default:
            break
        }
        if let covering {
            let period = "\(Timestamp.iso8601(covering.purchaseDate ?? 0)) → \(Timestamp.iso8601(covering.expiresDate ?? 0))"
            let status = contract.status == .expired ? "active" : contract.status.rawValue
            return answer(
                true, status,
                "paid period \(covering.tradeNo ?? covering.no) (\(period)) covers then"
                    + (contract.status == .canceled ? "; auto-renew off, entitled until it ends" : ""))
        }
        let refunded = orders.filter { $0.status == .refunded || $0.status == .revoked }
            .first { ($0.purchaseDate ?? .max) <= time && time < ($0.expiresDate ?? .max) }
        if let refunded {
            return answer(
                false, "revoked", "the period covering then (\(refunded.tradeNo ?? refunded.no)) was \(refunded.status.rawValue)")
        }
        let lastEnd = paid.compactMap(\.expiresDate).filter { $0 <= time }.max()
        if let lapse = Lapse.of(status: contract.status, expiresDate: lastEnd, at: time),
            let last = paid.first(where: { $0.expiresDate == lapse.paidUntil })
        {
            let period = "\(Timestamp.iso8601(last.purchaseDate ?? 0)) → \(Timestamp.iso8601(lapse.paidUntil))"
            return .lapsed(lapse, contract: contract, orders: orders, period: "\(last.tradeNo ?? last.no) (\(period))")
        }
        return answer(
            false, "expired",
            "no paid period covers then" + (lastEnd.map { "; the last one ended \(Timestamp.iso8601($0))" } ?? ""))
    }

    /// A paid, unrefunded subscription period (not superseded by an upgrade) that covers `time`: the
    /// one ending last when several do.
    static func coveringPaidPeriod(_ derived: Derived, at time: Int64) -> TransactionFacts? {
        derived.orders.filter { order in
            let t = order.transaction
            guard order.status == .paid, t.isAutoRenewable, t.isUpgraded != true, let start = t.purchaseDate else { return false }
            return start <= time && time < (t.expiresDate ?? .max)
        }
        .map(\.transaction)
        .max { ($0.expiresDate ?? .max) < ($1.expiresDate ?? .max) }
    }

    /// `2000… (product, start → end)`.
    static func period(_ tx: TransactionFacts) -> String {
        "\(tx.transactionId) (\(tx.productId), \(Timestamp.iso8601(tx.purchaseDate ?? 0)) → "
            + "\(tx.expiresDate.map(Timestamp.iso8601) ?? "open-ended"))"
    }

    static func eventName(_ entry: LedgerEntry) -> String {
        guard let type = entry.notificationType else { return "\(entry.source.rawValue) transaction" }
        return entry.subtype.map { "\(type)/\($0)" } ?? type
    }

    /// One audited update, dated.
    struct Step {
        var time: Int64
        var id: Int64
        var before: [String: String?]
        var after: [String: String?]
    }

    /// Per column: the value at `time`, for columns some audited update changed.
    static func valuesAt<Row: Decodable>(
        _ time: Int64, current: [(String, String?)], audit: [AuditEntry], as _: Row.Type,
        signedDates: [Int64: Int64]
    ) -> [(String, String?)] {
        var steps: [Step] = []
        for entry in audit {
            guard let before = columns(entry.before, as: Row.self), let after = columns(entry.after, as: Row.self) else {
                continue
            }
            steps.append(Step(time: effectiveTime(entry, signedDates: signedDates), id: entry.id, before: before, after: after))
        }
        steps.sort { ($0.time, $0.id) < ($1.time, $1.id) }
        var out: [(String, String?)] = []
        for (column, _) in current {
            let changing = steps.filter { $0.before[column] != $0.after[column] }
            guard let first = changing.first else { continue }
            if let last = changing.last(where: { $0.time <= time }) {
                out.append((column, last.after[column] ?? nil))
            } else {
                out.append((column, first.before[column] ?? nil))
            }
        }
        return out
    }

    static func columns<Row: Decodable>(_ json: String?, as _: Row.Type) -> [String: String?]? {
        let values: [(String, String?)]
        if Row.self == Order.self {
            guard let order = EngineAuditJSON.decode(json, as: Order.self) else { return nil }
            values = order.columnValues
        } else {
            guard let contract = EngineAuditJSON.decode(json, as: Contract.self) else { return nil }
            values = contract.columnValues
        }
        return Dictionary(values.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
    }
}
