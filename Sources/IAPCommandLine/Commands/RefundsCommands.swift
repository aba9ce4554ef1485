import AppStoreAPI
import IAPFoundation
import IAPOperations
import SubscriptionEngine

/// `iapctl refunds list|answer|consents`: the refund-request desk over the ledger and the audit trail.
enum RefundsCommands {
    static let listColumns: [Column] = [
        Column("deadline_at", title: "DEADLINE"), Column("status", title: "STATUS"),
        Column("transaction_id", title: "TRANSACTION"), Column("user_id", title: "USER", maxWidth: 24),
        Column("product_id", title: "PRODUCT", maxWidth: 32), Column("reason", title: "REASON", maxWidth: 28),
        Column("answered_at", title: "ANSWERED"), Column("audit_id", title: "AUDIT"), Column("outcome", title: "OUTCOME"),
    ]

    static func list(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let requests = try DbOpen.read(invocation) { session in try RefundRequests.list(session) }
        var counts: [RefundRequestStatus: Int] = [:]
        for request in requests { counts[request.status(now: now), default: 0] += 1 }
        let shown =
            invocation.flag(RefundsSpec.open)
            ? requests.filter { [.open, .dueSoon].contains($0.status(now: now)) } : requests
        invocation.emit(shown.map { record($0, now: now) }, columns: listColumns)
        let parts = RefundRequestStatus.allCases.compactMap { status in counts[status].map { "\($0) \(status.rawValue)" } }
        invocation.note(
            "\(requests.count) refund request\(requests.count == 1 ? "" : "s")"
                + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"))
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
        r.append("answered_at", request.answer?.at)
        r.append("answered_by", request.answer?.actor)
        r.append("audit_id", request.answer?.auditId)
        r.append("outcome", request.outcomeWord)
        r.append("outcome_at", request.outcome?.signedDate)
        r.append("outcome_ledger_id", request.outcome?.id)
        return r
    }

    static func consents(_ invocation: Invocation) throws -> ExitCode {
        let withdrawals = try DbOpen.read(invocation) { session in try RefundDesk.consentWithdrawals(session) }
        invocation.emit(
            withdrawals.map { w in
                var r = Record()
                r.append("signed_at", w.entry.signedDate)
                r.append("environment", w.environment)
                r.append("app_transaction_id", w.appTransactionId)
                r.append("user_id", w.userIds.isEmpty ? nil : w.userIds.joined(separator: " "))
                r.append(
                    "original_transaction_ids", w.originalTransactionIds.isEmpty ? nil : w.originalTransactionIds.joined(separator: " "))
                r.append("original_purchase_date", w.originalPurchaseDate)
                r.append("notification_uuid", w.entry.notificationUUID)
                r.append("ledger_id", w.entry.id)
                return r
            },
            columns: [
                Column("signed_at", title: "SIGNED"), Column("environment", title: "ENVIRONMENT"),
                Column("app_transaction_id", title: "APP TRANSACTION"), Column("user_id", title: "USER"),
                Column("ledger_id", title: "LEDGER"),
            ])
        invocation.note(
            "\(withdrawals.count) consent withdrawal\(withdrawals.count == 1 ? "" : "s") (RESCIND_CONSENT)"
                + (withdrawals.isEmpty ? "" : ": end those users' sessions and delete the data kept under that consent"))
        return .success
    }

    static func answer(_ invocation: Invocation) throws -> ExitCode {
        let tx = invocation[AppleWrites.consumptionTransactionArgument]
        let apply = invocation.flag(RefundsSpec.apply)
        let consented = invocation.flag(AppleWrites.customerConsentedOption)
        if apply { try WriteRequest.requireConsent(consented) }
        let choices = RefundDesk.Choices(
            customerConsented: consented, sampleContentProvided: invocation.flag(AppleWrites.sampleContentProvidedOption),
            deliveryStatus: invocation[RefundsSpec.deliveryStatus],
            consumptionPercentage: invocation[RefundsSpec.consumptionPercentage]?.milli,
            refundPreference: invocation[AppleWrites.refundPreferenceOption].flatMap(AppleChoices.RefundPreference.init))
        let found = try DbOpen.read(invocation) { session in
            try RefundRequests.request(transactionId: tx, session).map { ($0, try RefundDesk.knowledge($0, session)) }
        }
        guard let (request, knowledge) = found else {
            throw CLIError(
                .notFound, "no refund request (CONSUMPTION_REQUEST) for transaction \(tx) in the ledger",
                hint: "'iapctl refunds list' shows the requests received; 'iapctl apple consumption' answers one by hand")
        }
        if let answer = request.answer {
            throw CLIError(
                .conflict,
                "the refund request for \(tx) was already answered at \(Timestamp.iso8601(answer.at)) by "
                    + "\(answer.actor) (audit row \(answer.auditId))",
                hint: "'iapctl audit show \(answer.auditId)' shows what was sent")
        }
        let write = try RefundDesk.answer(request, knowledge: knowledge, choices: choices)
        let now = Timestamp.now()
        if now >= request.deadline {
            invocation.warn("Apple stopped waiting at \(Timestamp.iso8601(request.deadline)); it may refuse the answer")
        }
        for line in context(request, knowledge, choices) { invocation.note(line) }
        let reason =
            invocation[RefundsSpec.reason].flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
            ?? "refund request \(request.request.notificationUUID ?? "ledger #\(request.request.id)")"
        let ticket = invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 }
        let status = try AppleWrites.send(write, invocation, dryRun: !apply, reason: reason, ticket: ticket) { _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
        if !apply {
            invocation.note(
                consented
                    ? "send it with --apply"
                    : "Apple accepts it only with --customer-consented (give it only if the customer consented); "
                        + "then send it with --apply")
        }
        return status
    }

    /// What the composed request rests on, for the operator to check.
    static func context(_ request: RefundRequest, _ known: RefundDesk.Knowledge, _ choices: RefundDesk.Choices)
        -> [String]
    {
        var lines = [
            "refund request of \(Timestamp.iso8601(request.request.signedDate ?? 0)) for transaction \(request.transactionId)"
                + (request.userId.map { " of user \($0)" } ?? "") + (request.productId.map { " (\($0))" } ?? "")
                + "; Apple waits until \(Timestamp.iso8601(request.deadline))"
        ]
        if choices.deliveryStatus == nil, let order = request.order {
            lines.append("deliveryStatus DELIVERED: order \(order.no) is \(order.status.rawValue)")
        }
        if choices.consumptionPercentage == nil, let used = known.consumptionPercentage {
            lines.append("consumptionPercentage \(used): the share of the paid period passed when Apple asked")
        }
        var customer: [String] = []
        if let refunds = known.priorRefunds { customer.append("\(refunds) other refunded order\(refunds == 1 ? "" : "s")") }
        if let since = known.customerSince { customer.append("customer since \(Timestamp.iso8601(since))") }
        if !customer.isEmpty {
            lines.append(customer.joined(separator: ", ") + " (shown, not sent: the v2 request has no field for them)")
        }
        return lines
    }
}

extension RefundDesk.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .deliveryUnknown(let tx):
            .usage(
                "the database has no paid order for transaction \(tx): give --delivery-status",
                hint: "DELIVERED when the customer received a working item; UNDELIVERED_… otherwise")
        }
    }
}
