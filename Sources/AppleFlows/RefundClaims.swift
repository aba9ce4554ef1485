import AppStoreAPI
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// Answering a refund request at most once: the claim (``RefundAnswerClaim``, a unique key on the
/// request) is taken in the database, in the same transaction as the check that the request is
/// unanswered, before anything is sent; Apple's answer is then recorded with the audit row in one
/// transaction. Two processes (two cron runs, two operators) never both send.
public enum RefundClaims {
    /// What taking the claim found.
    public enum Taken: Sendable {
        /// This process holds it: send.
        case taken(RefundAnswerClaim)
        /// Another run holds it, or answered or skipped the request.
        case held(RefundAnswerClaim)
        /// An answer Apple accepted is in the audit trail already (sent before claims were kept, or
        /// by `apple consumption`).
        case answered(AuditEntry)
    }

    /// Takes the claim on `request` for `by`. A claim Apple's refusal ended is taken over (the
    /// request may be answered again); one still `claimed` only with `resend` (its sender died
    /// before recording Apple's answer); one a policy rule `skipped` only with `overrideSkip` (a
    /// person answering it by hand). `body`: what is about to be sent, kept with the claim.
    public static func take(
        _ request: RefundRequest, store: any Store, by: String, rule: String?, body: String?, resend: Bool,
        overrideSkip: Bool = false, at: Int64 = Timestamp.now()
    ) throws -> Taken {
        let key = request.requestKey
        let signed = request.request.signedDate ?? request.request.receivedAt
        return try store.write { session in
            if let audit = try RefundRequests.acceptedAnswer(transactionId: request.transactionId, since: signed, session) {
                return .answered(audit)
            }
            var claim = RefundAnswerClaim(
                requestKey: key, transactionId: request.transactionId, claimedAt: at, claimedBy: by, rule: rule, body: body)
            if try session.claimRefundAnswer(claim) {
                return .taken(try session.refundAnswerClaim(requestKey: key) ?? claim)
            }
            guard let existing = try session.refundAnswerClaim(requestKey: key) else {
                throw StoreError.failure("refund answer claim \(key) conflicted but cannot be read")
            }
            let takeOver =
                existing.state == .refused || (existing.state == .claimed && resend)
                || (existing.state == .skipped && overrideSkip)
            guard takeOver, try session.takeOverRefundAnswerClaim(existing, by: by, at: at, rule: rule) else {
                return .held(existing)
            }
            claim.id = existing.id
            claim.body = body
            try session.updateRefundAnswerClaim(claim)
            return .taken(claim)
        }
    }

    /// Records that `rule` does not answer `request`: the claim in state `skipped` and an audit row,
    /// in one transaction. Nil when another run holds the request already; else the audit row's id.
    public static func skip(
        _ request: RefundRequest, store: any Store, by: String, actor: String, rule: String, reason: String,
        ticket: String?, at: Int64 = Timestamp.now()
    ) throws -> Int64? {
        try store.write { session in
            let after = JSONValue.object([
                ("refund_request", .string(request.requestKey)), ("rule", .string(rule)), ("answer", .string("none")),
            ]).serialized()
            let claim = RefundAnswerClaim(
                requestKey: request.requestKey, transactionId: request.transactionId, state: .skipped, claimedAt: at,
                claimedBy: by, rule: rule, answeredAt: at)
            guard try session.claimRefundAnswer(claim) else { return nil }
            return try session.appendAudit(
                AuditEntry(
                    at: at, actor: actor, command: "refunds answer", reason: reason, ticket: ticket, entity: .order,
                    key: request.transactionId, before: nil, after: after))
        }
    }

    /// What ``send(_:_:api:environment:store:actor:reason:ticket:explain:)`` did.
    public struct Sent: Sendable {
        public var auditId: Int64
        public var result: Result<APIAnswer, AppStoreAPIError>
    }

    /// Sends `write` under `claim` and records Apple's answer — or its refusal — in the audit trail
    /// and in the claim, in one transaction.
    public static func send(
        _ write: AppleWrite, _ claim: RefundAnswerClaim, api: AppStoreServerAPI, environment: APIEnvironment,
        store: any Store, actor: String, reason: String?, ticket: String?,
        explain: (AppStoreAPIError, _ sandboxTried: Bool) -> AppStoreAPIError = { error, _ in error }
    ) throws -> Sent {
        let sent = write.send(api, environment)
        let result = sent.result.mapError { explain($0, sent.sandboxTried) }
        let after = write.auditAfter(result, environment: environment)
        let now = Timestamp.now()
        let auditId = try store.write { session in
            let id = try session.appendAudit(
                AuditEntry(
                    at: now, actor: actor, command: write.command, reason: reason, ticket: ticket, entity: write.entity,
                    key: write.key, before: nil, after: after))
            var recorded = claim
            recorded.auditId = id
            recorded.answeredAt = now
            recorded.body = write.call.bodyText
            switch result {
            case .success(let answer):
                recorded.state = .answered
                recorded.appleStatus = Int64(answer.status)
            case .failure(let error):
                recorded.state = .refused
                recorded.appleStatus = error.httpStatus.map(Int64.init)
                recorded.appleError =
                    error.appleCode.map { "\($0): \(error.appleMessage ?? error.message)" } ?? error.message
            }
            try session.updateRefundAnswerClaim(recorded)
            return id
        }
        return Sent(auditId: auditId, result: result)
    }
}
