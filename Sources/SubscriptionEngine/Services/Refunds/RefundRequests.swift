import IAPFoundation
import SubscriptionModel

/// A refund request Apple sent (`CONSUMPTION_REQUEST`): whose purchase, its deadline, the answer sent
/// (Send Consumption Information, an audited write) and what Apple decided afterwards.
public struct RefundRequest: Sendable, Equatable {
    /// The request as kept in the ledger (its raw JWS carries Apple's `consumptionRequestReason`).
    public var request: LedgerEntry
    public var transactionId: String
    public var originalTransactionId: String?
    /// When Apple stops waiting for the answer: the request's signedDate + 12 hours.
    public var deadline: Int64
    /// The order of the transaction, when the database has it.
    public var order: Order?
    /// The customer: the order's user, else the subscription's.
    public var userId: String?
    public var productId: String?
    /// The first answer Apple accepted after the request, if any.
    public var answer: RefundRequestAnswer?
    /// A later REFUND or REFUND_DECLINED of the transaction, if any.
    public var outcome: LedgerEntry?
    /// The claim on answering it (`iap_refund_answers`), once taken.
    public var claim: RefundAnswerClaim?

    /// The key of its claim: the request's notification UUID.
    public var requestKey: String { RefundRequests.requestKey(request) }

    /// Whether nothing answers it yet: no answer Apple accepted, no claim but a refused one.
    public var isUnanswered: Bool {
        answer == nil && (claim == nil || claim?.state == .refused)
    }

    /// Where the request stands at `now`.
    public func status(now: Int64) -> RefundRequestStatus {
        if answer != nil || claim?.state == .answered { return .answered }
        switch claim?.state {
        case .claimed?: return .claimed
        case .skipped?: return .skipped
        case .refused?: if now < deadline { return .refused }
        default: break
        }
        if now >= deadline { return .missed }
        return now >= deadline - RefundRequests.warningWindow ? .dueSoon : .open
    }

    /// `refunded`, `declined`, or nil while Apple has not decided (as far as the ledger shows).
    public var outcomeWord: String? {
        switch outcome?.appleType {
        case .known(.refund)?: "refunded"
        case .known(.refundDeclined)?: "declined"
        default: nil
        }
    }
}

/// Where a refund request stands.
public enum RefundRequestStatus: String, Sendable, CaseIterable {
    /// Not answered; more than ``RefundRequests/warningWindow`` left.
    case open
    /// Not answered; less than ``RefundRequests/warningWindow`` left.
    case dueSoon = "due-soon"
    /// Answered (Apple accepted the Consumption Information).
    case answered
    /// Claimed by a sender whose Apple answer is not recorded: being sent, or the sender died
    /// (`refunds answer --resend-claimed` sends it again).
    case claimed
    /// Apple refused the answer sent; it may be answered again before the deadline.
    case refused
    /// A policy rule said not to answer it.
    case skipped
    /// Not answered, and the 12 hours are over.
    case missed
}

/// The audited write that answered a refund request.
public struct RefundRequestAnswer: Sendable, Equatable {
    public var auditId: Int64
    public var at: Int64
    public var actor: String
    public var command: String

    public init(auditId: Int64, at: Int64, actor: String, command: String) {
        self.auditId = auditId
        self.at = at
        self.actor = actor
        self.command = command
    }
}

/// The refund-request desk's reading of the store: the requests Apple sent, oldest deadline first,
/// each linked to its answer (an audit row) and its outcome (a ledger row); the withdrawn consents.
public enum RefundRequests {
    /// Apple waits this long after the request for the answer.
    public static let answerWindow: Int64 = 12 * 3_600_000
    /// `doctor` warns of unanswered requests with less than this left.
    public static let warningWindow: Int64 = 3 * 3_600_000
    /// `doctor` reports a claim still `claimed` after this long: a send (its every retry and wait
    /// within the one-minute default deadline) is long over, so its sender died before recording.
    public static let staleClaimAfter: Int64 = 15 * 60_000
    /// The audited commands that send Consumption Information.
    public static let answerCommands: Set<String> = ["apple consumption", "refunds answer"]

    /// The key of a request's claim (``RefundAnswerClaim``): its notification UUID, else its ledger row.
    public static func requestKey(_ entry: LedgerEntry) -> String {
        entry.notificationUUID ?? "ledger:\(entry.id)"
    }

    /// Every refund request kept (a re-delivered one once), oldest deadline first.
    public static func list(_ session: any StoreSession) throws -> [RefundRequest] {
        var seen: Set<String> = []
        var result: [RefundRequest] = []
        var claims: [String: RefundAnswerClaim] = [:]
        for claim in try session.refundAnswerClaims() { claims[claim.requestKey] = claim }
        for entry in try session.ledger(notificationTypes: [NotificationTypeName.consumptionRequest.rawValue]) {
            guard let tx = entry.transactionId, !tx.isEmpty else { continue }
            if let uuid = entry.notificationUUID, !seen.insert(uuid).inserted { continue }
            var found = try request(entry, transactionId: tx, session)
            found.claim = claims[requestKey(entry)]
            result.append(found)
        }
        return result.sorted { ($0.deadline, $0.request.id) < ($1.deadline, $1.request.id) }
    }

    /// The refund request for `transactionId` still to answer (else the newest one), if any.
    public static func request(transactionId: String, _ session: any StoreSession) throws -> RefundRequest? {
        let all = try list(session).filter { $0.transactionId == transactionId }
        return all.first { $0.isUnanswered } ?? all.last
    }

    /// The RESCIND_CONSENT notifications kept (a re-delivered one once), oldest first.
    public static func consentWithdrawals(_ session: any StoreSession) throws -> [LedgerEntry] {
        var seen: Set<String> = []
        return try session.ledger(notificationTypes: [NotificationTypeName.rescindConsent.rawValue]).filter { entry in
            entry.notificationUUID.map { seen.insert($0).inserted } ?? true
        }
    }

    private static func request(_ entry: LedgerEntry, transactionId tx: String, _ session: any StoreSession) throws
        -> RefundRequest
    {
        let signed = entry.signedDate ?? entry.receivedAt
        let order = try session.order(tradeNo: tx)
        let original = entry.originalTransactionId ?? order?.originNo
        let contract = try original.flatMap { try session.contract(contractId: $0) }
        let later = try session.ledger(transactionIds: [tx], originalTransactionIds: [], appAccountTokens: [])
        let outcome = later.first { row in
            (row.appleType == .known(.refund) || row.appleType == .known(.refundDeclined))
                && row.verdict != .rejected && (row.signedDate ?? 0) >= signed
        }
        let answer = try acceptedAnswer(transactionId: tx, since: signed, session)
        return RefundRequest(
            request: entry, transactionId: tx, originalTransactionId: original, deadline: signed + answerWindow,
            order: order, userId: order?.userId ?? contract?.userId, productId: order?.productId ?? contract?.productId,
            answer: answer.map { RefundRequestAnswer(auditId: $0.id, at: $0.at, actor: $0.actor, command: $0.command) },
            outcome: outcome)
    }

    /// The first audited answer Apple accepted for `transactionId` at or after `since`, if any.
    public static func acceptedAnswer(transactionId tx: String, since: Int64, _ session: any StoreSession) throws
        -> AuditEntry?
    {
        try session.audit(entity: .order, key: tx).first { audit in
            answerCommands.contains(audit.command) && audit.at >= since && accepted(audit.after)
        }
    }

    /// Whether an audited write's `after` records an answer Apple accepted (a 2xx status).
    static func accepted(_ after: String?) -> Bool {
        guard let after, let json = try? JSONParser.parse(after),
            let status = json["apple_response"]?["status"]?.int64Value
        else { return false }
        return (200..<300).contains(status)
    }
}
