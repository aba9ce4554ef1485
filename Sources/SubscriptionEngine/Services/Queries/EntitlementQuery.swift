import SubscriptionModel

/// `entitled`, `contracts show --as-of`, `orders list --as-of`: state at a past moment, reconstructed
/// from the audit trail dated by the ledger and from the signed facts (``EntitlementAsOf``).
/// Every method works inside the caller's read transaction.
public enum EntitlementQuery {
    /// One contract with everything needed to reconstruct it, and its answer at one time.
    public struct Subject: Sendable, Equatable {
        public var history: RecordHistory
        public var answer: EntitlementAsOf.Answer
        /// signedDate of every ledger row the audit rows point at, by ledger id.
        public var signedDates: [Int64: Int64]
    }

    /// Whether a user was entitled at one time: the deciding contract and every contract looked at.
    public struct Verdict: Sendable, Equatable {
        /// The user's contracts (those theirs at that time), of the product if one was asked for.
        public var subjects: [Subject]
        /// The contract that decides: the first entitled one, else the first that existed then, else the first.
        public var best: Subject?
        public var entitled: Bool { best?.answer.entitled ?? false }
    }

    /// A contract as it was at one time.
    public struct ContractAsOf: Sendable, Equatable {
        public var subject: Subject
        /// Its ledger events signed by then.
        public var events: [LedgerEntry]
        /// The newest applied event's signedDate by then.
        public var lastEventDate: Int64?
        /// Its audit rows in effect by then.
        public var changes: [AuditEntry]
    }

    /// Gathers a contract's orders, ledger events and audit rows, and evaluates it at `time`.
    public static func subject(
        _ contract: Contract, at time: Int64, question: EntitlementAsOf.Question = .asKnownThen, in session: any StoreSession
    ) throws -> Subject {
        let orders = try session.orders(originNo: contract.contractId)
        let history = try RecordHistory.gather(session, orders: orders, contract: contract)
        let signedDates = try self.signedDates(history.audit, known: history.events, in: session)
        var events = history.events
        // Ledger rows that caused changes but mention other ids (rare) still date their changes.
        for (id, _) in signedDates where !events.contains(where: { $0.id == id }) {
            if let entry = try session.ledgerEntry(id: id) { events.append(entry) }
        }
        let evaluated = EntitlementAsOf.evaluate(
            contract: contract, orders: orders, events: events, audit: history.audit,
            facts: try session.facts(originalTransactionId: contract.contractId), at: time, question: question)
        let answer = HandEntitlement.apply(
            try session.overrides(entity: .contract, key: contract.contractId), to: evaluated, at: time)
        return Subject(history: history, answer: answer, signedDates: signedDates)
    }

    /// Whether `user` was entitled (to `product`, or to anything) at `time`.
    public static func entitled(
        user: String, product: String?, at time: Int64, question: EntitlementAsOf.Question = .asKnownNow,
        in session: any StoreSession
    ) throws -> Verdict {
        var contracts = try session.contracts(matching: ContractFilter(userId: user))
        for key in try changedSince(time, entity: .contract, in: session)
        where !contracts.contains(where: { $0.contractId == key }) {
            if let contract = try session.contract(contractId: key) { contracts.append(contract) }
        }
        let subjects = try contracts.map { try subject($0, at: time, question: question, in: session) }
            .filter { $0.answer.contract.userId == user }
            .filter { product == nil || $0.answer.contract.productId == product }
        let best =
            subjects.first { $0.answer.entitled } ?? subjects.first { $0.answer.status != "not-yet" } ?? subjects.first
        return Verdict(subjects: subjects, best: best)
    }

    /// Contract `contractId` as it was at `time`; nil when there is no such contract.
    public static func contract(
        _ contractId: String, at time: Int64, question: EntitlementAsOf.Question = .asKnownThen, in session: any StoreSession
    ) throws -> ContractAsOf? {
        guard let contract = try session.contract(contractId: contractId) else { return nil }
        let found = try subject(contract, at: time, question: question, in: session)
        let events = found.history.events.filter { ($0.signedDate ?? .max) <= time }
        return ContractAsOf(
            subject: found, events: events,
            lastEventDate: events.filter { $0.verdict == .applied }.compactMap(\.signedDate).max(),
            changes: found.history.audit.filter {
                EntitlementAsOf.effectiveTime($0, signedDates: found.signedDates) <= time
            })
    }

    /// The orders (of `user`, if given) as they were at `time`, newest first, of that status and product if given.
    public static func orders(
        user: String?, status: OrderStatus?, product: String?, at time: Int64, in session: any StoreSession
    ) throws -> [Order] {
        var candidates = try session.orders(matching: OrderFilter(userId: user))
        for key in try changedSince(time, entity: .order, in: session) where !candidates.contains(where: { $0.no == key }) {
            if let order = try session.order(no: key) { candidates.append(order) }
        }
        var out: [Order] = []
        for order in candidates {
            let audit = try session.audit(entity: .order, key: order.no)
            let dates = try signedDates(audit, known: [], in: session)
            let then = EntitlementAsOf.order(order, audit: audit, signedDates: dates, at: time)
            let existed = then.purchaseDate.map { $0 <= time } ?? (then.createdAt <= time)
            guard existed, user == nil || then.userId == user else { continue }
            guard status == nil || then.status == status, product == nil || then.productId == product else { continue }
            out.append(then)
        }
        return out
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
        RecordHistory.unique(
            try session.auditEntries(matching: AuditFilter(since: time + 1)).filter { $0.entity == entity }.map(\.key))
    }
}
