import SubscriptionDerivation
import SubscriptionModel

/// `doctor`'s checks of the data's invariants, in report order.
public enum DiagnosisCheck: String, CaseIterable, Sendable {
    case lapsed
    case paidWithoutTransaction = "paid-without-transaction"
    case mixedOwners = "mixed-owners"
    case orderWithoutContract = "order-without-contract"
    case sharedId = "shared-id"
    case oldUnmatched = "old-unmatched"
    case environment
    case statusVsFacts = "status-vs-facts"
    case refundRequestDue = "refund-request-due"
    case refundAnswerClaimed = "refund-answer-claimed"

    /// What the check looks for (the help text).
    public var about: String {
        switch self {
        case .lapsed:
            return "active or canceled contracts paid until before --lapsed-before (a day ago) "
                + "with nothing from Apple since: no renewal, expiry, grace or billing retry"
        case .paidWithoutTransaction: return "paid orders with no transactionId (trade_no)"
        case .mixedOwners: return "a contract whose orders belong to different users"
        case .orderWithoutContract:
            return "orders whose originalTransactionId has no contract (one-time purchases excepted)"
        case .sharedId: return "one transactionId or appAccountToken (order number) on two orders"
        case .oldUnmatched: return "unmatched ledger items older than a day"
        case .environment: return "rows of an environment the database does not accept (--environment)"
        case .statusVsFacts:
            return "contracts whose status differs from what their signed facts derive "
                + "(the latest applied event where no facts are kept)"
        case .refundRequestDue:
            return "refund requests (CONSUMPTION_REQUEST) unanswered with less than 3 hours left"
        case .refundAnswerClaimed:
            return "refund answers claimed over 15 minutes ago whose sender never recorded Apple's answer "
                + "(it died while sending), the request's deadline not yet passed"
        }
    }
}

/// Why a contract should have another status.
public enum StatusBasis: Sendable, Equatable {
    /// Its signed facts derive it: the fact that decided the status, and when it was signed.
    case facts(fact: String?, signedDate: Int64?)
    /// No facts are kept: the latest applied state change (signed at `signedDate`) leaves it.
    case latestEvent(LedgerEntry, signedDate: Int64)
}

/// One problem `doctor` found, with what a fix needs to know.
public enum DiagnosisFinding: Sendable, Equatable {
    /// An active or canceled contract whose paid period ended before the threshold (``Lapse``).
    case lapsed(Contract, Lapse)
    /// A paid order without a transactionId; `ledgerTransaction`: a transaction carrying its number as appAccountToken.
    case paidWithoutTransaction(Order, ledgerTransaction: String?)
    /// A paid order whose trade_no was cleared by hand (audit row `audit`) although the signed
    /// facts still hold its transaction `transactionId`: undoing that change is the fix.
    case tradeNoClearedByHand(Order, audit: Int64, transactionId: String)
    /// An order whose user is not its contract's.
    case mixedOwners(Order, contract: Contract)
    /// An order whose origin_no has no contract; `ledgerOriginal`: the originalTransactionId Apple's
    /// transaction gives, when that contract exists.
    case orderWithoutContract(Order, originNo: String, ledgerOriginal: String?)
    /// An order with a transactionId (as the order has it) that an older order has too.
    case sharedTransactionId(Order, firstOrder: Order, transactionId: String)
    /// An order whose number (lowercased: Apple's appAccountToken) an older order has too.
    case sharedAppAccountToken(Order, firstOrder: Order, token: String)
    /// An unmatched ledger item older than a day.
    case oldUnmatched(LedgerEntry)
    /// A contract or order of an environment the database does not accept.
    case foreignEnvironment(EntityKind, key: String, environment: String, accepted: [String])
    /// Rows of another environment while the accepted environments were not given: one per environment.
    case environmentUnchecked(environment: String, rows: Int, accepted: [String])
    /// An order whose status is not what the newest signed version of its transaction derives;
    /// `override`: the hand override in force that holds it (then the fix lifts it, not sets it again).
    case orderStatusVsFacts(Order, transactionId: String, signedDate: Int64, derived: OrderStatus, override: Override?)
    /// A contract whose status is not what its facts (or its latest applied event) leave;
    /// `override`: the hand override in force that holds it.
    case contractStatusVsFacts(Contract, expected: ContractStatus, basis: StatusBasis, override: Override?)
    /// A refund request not answered with less than ``RefundRequests/warningWindow`` left.
    case refundRequestDue(RefundRequest)
    /// A refund request whose answer was claimed over ``RefundRequests/staleClaimAfter`` ago and
    /// never recorded (the sender died between claiming and recording Apple's answer), before its deadline.
    case refundAnswerClaimed(RefundRequest, RefundAnswerClaim)

    public var check: DiagnosisCheck {
        switch self {
        case .lapsed: return .lapsed
        case .paidWithoutTransaction, .tradeNoClearedByHand: return .paidWithoutTransaction
        case .mixedOwners: return .mixedOwners
        case .orderWithoutContract: return .orderWithoutContract
        case .sharedTransactionId, .sharedAppAccountToken: return .sharedId
        case .oldUnmatched: return .oldUnmatched
        case .foreignEnvironment, .environmentUnchecked: return .environment
        case .orderStatusVsFacts, .contractStatusVsFacts: return .statusVsFacts
        case .refundRequestDue: return .refundRequestDue
        case .refundAnswerClaimed: return .refundAnswerClaimed
        }
    }

    /// What the finding is about: `contract`, `order`, `ledger` or `database`.
    public var entity: String {
        switch self {
        case .lapsed, .contractStatusVsFacts: return "contract"
        case .paidWithoutTransaction, .tradeNoClearedByHand, .mixedOwners, .orderWithoutContract, .sharedTransactionId,
            .sharedAppAccountToken, .orderStatusVsFacts:
            return "order"
        case .oldUnmatched: return "ledger"
        case .refundRequestDue, .refundAnswerClaimed: return "refund-request"
        case .foreignEnvironment(let entity, _, _, _): return entity.rawValue
        case .environmentUnchecked: return "database"
        }
    }

    /// The row's key (`-` for the database).
    public var key: String {
        switch self {
        case .lapsed(let contract, _), .contractStatusVsFacts(let contract, _, _, _): return contract.contractId
        case .paidWithoutTransaction(let order, _), .tradeNoClearedByHand(let order, _, _), .mixedOwners(let order, _),
            .orderWithoutContract(let order, _, _),
            .sharedTransactionId(let order, _, _), .sharedAppAccountToken(let order, _, _),
            .orderStatusVsFacts(let order, _, _, _, _):
            return order.no
        case .oldUnmatched(let entry): return String(entry.id)
        case .foreignEnvironment(_, let key, _, _): return key
        case .environmentUnchecked: return "-"
        case .refundRequestDue(let request), .refundAnswerClaimed(let request, _): return request.transactionId
        }
    }
}

/// What `doctor` found and how much it looked at.
public struct DiagnosisReport: Sendable, Equatable {
    public var findings: [DiagnosisFinding]
    public var orders: Int
    public var contracts: Int
    public var unmatched: Int
}

/// `iapctl doctor`: the data's invariants, checked read-only; each finding says enough for the
/// command layer to write the command that fixes it.
public enum Diagnosis {
    static let day: Int64 = 86_400_000

    /// Runs every check over the store (inside the caller's read transaction).
    ///
    /// - Parameters:
    ///   - accepted: the environments the database accepts.
    ///   - environmentGiven: whether they were given; when not, rows of another environment are not
    ///     proof of bad data (the database may simply be a Sandbox one): one finding per environment
    ///     says so, instead of one per row.
    ///   - lapsedBefore: contracts whose paid period ended before it are reported as lapsed (nil:
    ///     ``Lapse/reportedAfter`` before `now`).
    public static func examine(
        _ session: any StoreSession, now: Int64, accepted: Set<String>, environmentGiven: Bool,
        lapsedBefore: Int64? = nil
    ) throws -> DiagnosisReport {
        let contracts = try session.contracts(matching: ContractFilter())
        let orders = try session.orders(matching: OrderFilter())
        let unmatched = try session.unmatchedLedger(limit: nil)
        let acceptedList = accepted.sorted()
        var findings: [DiagnosisFinding] = []
        var byContract: [String: Contract] = [:]
        for contract in contracts { byContract[contract.contractId] = contract }
        var ordersByOrigin: [String: [Order]] = [:]
        for order in orders { if let origin = order.originNo { ordersByOrigin[origin, default: []].append(order) } }

        // lapsed
        let lapseCutoff = lapsedBefore ?? now - Lapse.reportedAfter
        for contract in contracts.reversed() {
            guard let lapse = Lapse.of(contract, at: now), lapse.paidUntil < lapseCutoff else { continue }
            findings.append(.lapsed(contract, lapse))
        }

        // paid-without-transaction
        for order in orders.reversed() where order.status == .paid && (order.tradeNo ?? "").isEmpty {
            if let cleared = try Self.tradeNoClearedByHand(order, in: session) {
                findings.append(.tradeNoClearedByHand(order, audit: cleared.audit, transactionId: cleared.transactionId))
                continue
            }
            let mentions = try session.ledger(transactionIds: [], originalTransactionIds: [], appAccountTokens: [order.no])
            findings.append(
                .paidWithoutTransaction(order, ledgerTransaction: mentions.last { $0.transactionId != nil }?.transactionId))
        }

        // mixed-owners
        for contract in contracts.reversed() {
            for order in ordersByOrigin[contract.contractId] ?? [] where order.userId != contract.userId {
                findings.append(.mixedOwners(order, contract: contract))
            }
        }

        // order-without-contract
        for order in orders.reversed() {
            guard let origin = order.originNo, byContract[origin] == nil else { continue }
            let mentions = try session.ledger(
                transactionIds: order.tradeNo.map { [$0] } ?? [], originalTransactionIds: [origin], appAccountTokens: [])
            if mentions.contains(where: { $0.appleType == .known(.oneTimeCharge) }) { continue }
            let fromLedger = mentions.last {
                $0.transactionId == order.tradeNo && $0.originalTransactionId != nil && $0.originalTransactionId != origin
            }?.originalTransactionId
            findings.append(
                .orderWithoutContract(
                    order, originNo: origin, ledgerOriginal: fromLedger.flatMap { byContract[$0] == nil ? nil : $0 }))
        }

        // shared-id: oldest first, the later one is reported
        var seenTrade: [String: Order] = [:]
        var seenNo: [String: Order] = [:]
        for order in orders.reversed() {
            if let tradeNo = order.tradeNo, !tradeNo.isEmpty {
                if let first = seenTrade[tradeNo.lowercased()] {
                    findings.append(.sharedTransactionId(order, firstOrder: first, transactionId: tradeNo))
                } else {
                    seenTrade[tradeNo.lowercased()] = order
                }
            }
            let no = order.no.lowercased()
            if let first = seenNo[no] {
                findings.append(.sharedAppAccountToken(order, firstOrder: first, token: no))
            } else {
                seenNo[no] = order
            }
        }

        // old-unmatched
        for entry in unmatched where entry.receivedAt < now - day {
            findings.append(.oldUnmatched(entry))
        }

        // environment
        var foreign: [DiagnosisFinding] = []
        var foreignCounts: [String: Int] = [:]
        for contract in contracts.reversed() {
            guard let environment = contract.environment, !accepted.contains(environment) else { continue }
            foreign.append(.foreignEnvironment(.contract, key: contract.contractId, environment: environment, accepted: acceptedList))
            foreignCounts[environment, default: 0] += 1
        }
        for order in orders.reversed() {
            guard let environment = order.environment, !accepted.contains(environment) else { continue }
            guard order.status == .paid || order.status == .pending else { continue }
            foreign.append(.foreignEnvironment(.order, key: order.no, environment: environment, accepted: acceptedList))
            foreignCounts[environment, default: 0] += 1
        }
        if environmentGiven { findings += foreign }

        // status-vs-facts: the stored status against the engine's derivation of the kept facts
        for contract in contracts.reversed() {
            let facts = try session.facts(originalTransactionId: contract.contractId)
            let derivation = Derivation.derive(FactSet(facts), now: now)
            // A status held by a hand override in force is reported with it: the fix lifts the
            // override (back to the facts) instead of setting the status by hand once more.
            let held = try session.overridesInForce(originalTransactionId: contract.contractId).filter { $0.field == "status" }
            for derivedOrder in derivation.orders {
                let tx = derivedOrder.transaction
                guard let order = ordersByOrigin[contract.contractId]?.first(where: { $0.tradeNo == tx.transactionId }),
                    order.status != derivedOrder.status
                else { continue }
                findings.append(
                    .orderStatusVsFacts(
                        order, transactionId: tx.transactionId, signedDate: derivedOrder.signedDate,
                        derived: derivedOrder.status,
                        override: held.last { $0.entity == .order && $0.key == order.no && $0.value == order.status.rawValue }))
            }
            let expected: ContractStatus
            let basis: StatusBasis
            if let derived = derivation.contract {
                let reason = derived.reason("status")
                (expected, basis) = (derived.status, .facts(fact: reason?.fact, signedDate: reason?.signedDate))
            } else {
                let events = try session.ledger(
                    transactionIds: [], originalTransactionIds: [contract.contractId], appAccountTokens: [])
                guard let latest = latestStateChange(contract, events: events) else { continue }
                (expected, basis) = (latest.status, .latestEvent(latest.event, signedDate: latest.event.signedDate!))
            }
            guard expected != contract.status else { continue }
            findings.append(
                .contractStatusVsFacts(
                    contract, expected: expected, basis: basis,
                    override: held.last {
                        $0.entity == .contract && $0.key == contract.contractId && $0.value == contract.status.rawValue
                    }))
        }

        if !environmentGiven {
            for (environment, count) in foreignCounts.sorted(by: { $0.key < $1.key }) {
                findings.append(.environmentUnchecked(environment: environment, rows: count, accepted: acceptedList))
            }
        }

        // refund-request-due
        for request in try RefundRequests.list(session) where request.status(now: now) == .dueSoon {
            findings.append(.refundRequestDue(request))
        }
        // refund-answer-claimed
        for request in try RefundRequests.list(session) where now < request.deadline {
            guard let claim = request.claim, claim.state == .claimed, now - claim.claimedAt > RefundRequests.staleClaimAfter
            else { continue }
            findings.append(.refundAnswerClaimed(request, claim))
        }
        return DiagnosisReport(
            findings: findings, orders: orders.count, contracts: contracts.count, unmatched: unmatched.count)
    }

    /// The status the newest applied state change leaves, when that event alone decides it.
    static func latestStateChange(_ contract: Contract, events: [LedgerEntry]) -> (status: ContractStatus, event: LedgerEntry)? {
        let applied = events.filter { $0.verdict == .applied && $0.signedDate != nil && EventRule(for: $0).changesState }
        guard let latest = applied.max(by: { ($0.signedDate!, $0.id) < ($1.signedDate!, $1.id) }),
            let status = EventRule(for: latest).resultingStatus
        else { return nil }
        // A paid period newer than an EXPIRED event (a renewal that arrived late) legitimately revives it.
        if status == .expired, let expires = contract.expiresDate, expires > latest.signedDate! { return nil }
        return (status, latest)
    }
}
