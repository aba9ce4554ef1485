/// The claim on answering one refund request (`iap_refund_answers`): taken — a unique key on the
/// request — in the same transaction as the check that it is unanswered, before anything is sent,
/// so two processes never both send; then it records what was sent and what Apple answered.
public struct RefundAnswerClaim: Sendable, Equatable {
    /// Where the answer stands.
    public enum State: String, Sendable, CaseIterable {
        /// Taken; nothing recorded since: being sent, or its sender died before Apple's answer was
        /// recorded (sent again only by a rerun that says so: `--resend-claimed`).
        case claimed
        /// Apple accepted it.
        case answered
        /// Apple refused it (or it could not be sent); `refunds answer TRANSACTION` may try again.
        case refused
        /// A policy rule said not to answer.
        case skipped
    }

    public var id: Int64
    /// The request: its notification UUID (``RefundRequests/requestKey(_:)``).
    public var requestKey: String
    public var transactionId: String
    public var state: State
    public var claimedAt: Int64
    /// Who took it: the actor and the process (`sam pid 4711 on host`).
    public var claimedBy: String
    /// The policy rule that matched, when a policy answered.
    public var rule: String?
    /// The request body sent (JSON), once composed.
    public var body: String?
    /// Apple's HTTP status, once it answered.
    public var appleStatus: Int64?
    /// Apple's error code and message, when it refused.
    public var appleError: String?
    /// The audit row of the answer, once recorded.
    public var auditId: Int64?
    /// When Apple's answer (or the skip) was recorded.
    public var answeredAt: Int64?

    public init(
        id: Int64 = 0, requestKey: String, transactionId: String, state: State = .claimed, claimedAt: Int64,
        claimedBy: String, rule: String? = nil, body: String? = nil, appleStatus: Int64? = nil,
        appleError: String? = nil, auditId: Int64? = nil, answeredAt: Int64? = nil
    ) {
        self.id = id
        self.requestKey = requestKey
        self.transactionId = transactionId
        self.state = state
        self.claimedAt = claimedAt
        self.claimedBy = claimedBy
        self.rule = rule
        self.body = body
        self.appleStatus = appleStatus
        self.appleError = appleError
        self.auditId = auditId
        self.answeredAt = answeredAt
    }
}

extension RefundAnswerClaim.State: ColumnTextEnum {}
