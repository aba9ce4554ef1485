import AppStoreAPI
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl refunds list`: the refund requests received, oldest deadline first, over the ledger and the audit trail.
enum RefundsList {
    /// `--open`.
    static let open = OptionSpec.flag(
        "open", help: "Only requests still to answer (open, due-soon, or refused by Apple before the deadline).")

    static let command = CommandSpec(
        name: "list",
        abstract: "List the refund requests (CONSUMPTION_REQUEST) received, oldest deadline first.",
        discussion: """
            STATUS: open, due-soon (less than 3 hours left), answered (Apple accepted the Consumption \
            Information: when, by whom, the audit row), claimed (a run claimed it and Apple's answer is \
            not recorded: being sent, or its sender died — 'refunds answer --resend-claimed' sends it \
            again), refused (Apple refused the answer sent; it may be answered again), skipped (a \
            policy rule said not to answer), missed (12 hours passed unanswered). RULE: the policy \
            rule that answered it. OUTCOME: refunded or declined once Apple's REFUND or \
            REFUND_DECLINED of the transaction arrived.
            """,
        examples: [CommandExample("iapctl refunds list -o json", "Every request, as JSON.")],
        options: [open],
        handler: run)

    static let listColumns: [Column] = [
        Column("deadline_at", title: "DEADLINE"), Column("status", title: "STATUS"),
        Column("transaction_id", title: "TRANSACTION"), Column("user_id", title: "USER", maxWidth: 24),
        Column("product_id", title: "PRODUCT", maxWidth: 32), Column("reason", title: "REASON", maxWidth: 28),
        Column("answered_at", title: "ANSWERED"), Column("rule", title: "RULE", maxWidth: 24),
        Column("audit_id", title: "AUDIT"), Column("outcome", title: "OUTCOME"),
    ]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let requests = try DbOpen.read(invocation) { session in try RefundRequests.list(session) }
        var counts: [RefundRequestStatus: Int] = [:]
        for request in requests { counts[request.status(now: now), default: 0] += 1 }
        let shown =
            invocation.flag(open)
            ? requests.filter { [.open, .dueSoon, .refused].contains($0.status(now: now)) } : requests
        invocation.emit(shown.map { record($0, now: now) }, columns: listColumns)
        let parts = RefundRequestStatus.allCases.compactMap { status in counts[status].map { "\($0) \(status.rawValue)" } }
        let total =
            "\(requests.count) refund request\(requests.count == 1 ? "" : "s")"
            + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
        // With --open the count shown comes first, so the line agrees with the rows above it.
        invocation.note(invocation.flag(open) ? "\(shown.count) still to answer, of " + total : total)
        return .success
    }

    /// One request as a record (times in ms; `_at` keys print as times).
    static func record(_ request: RefundRequest, now: Int64) -> Record {
        var r = Record()
        r.append("deadline_at", request.deadline)
        r.append("status", request.status(now: now).rawValue)
        r.append("transaction_id", request.transactionId)
        r.append("original_transaction_id", request.originalTransactionId)
        r.append("user_id", request.userId)
        r.append("product_id", request.productId)
        r.append("reason", RefundDesk.reason(of: request.request))
        r.append("requested_at", request.request.signedDate)
        r.append("notification_uuid", request.request.notificationUUID)
        r.append("ledger_id", request.request.id)
        let claim = request.claim
        let answeredByClaim = claim?.state == .answered || claim?.state == .skipped
        r.append("answered_at", request.answer?.at ?? (answeredByClaim ? claim?.answeredAt : nil))
        r.append("answered_by", request.answer?.actor ?? (answeredByClaim ? claim?.claimedBy : nil))
        r.append("audit_id", request.answer?.auditId ?? claim?.auditId)
        r.append("rule", claim?.rule)
        r.append("claimed_at", claim?.claimedAt)
        r.append("claimed_by", claim?.claimedBy)
        r.append("apple_error", claim?.appleError)
        r.append("outcome", request.outcomeWord)
        r.append("outcome_at", request.outcome?.signedDate)
        r.append("outcome_ledger_id", request.outcome?.id)
        return r
    }
}
