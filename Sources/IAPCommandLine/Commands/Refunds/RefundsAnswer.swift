import AppStoreAPI
import IAPFoundation
import IAPOperations
import SubscriptionEngine

/// `iapctl refunds answer TRANSACTION`: the Consumption Information for a refund request, composed
/// from the database; sent with `--apply`.
enum RefundsAnswer {
    /// `--delivery-status STATUS`.
    static let deliveryStatus = Option<AppleChoices.DeliveryStatus?>(
        "delivery-status", valueName: "status",
        help: "Whether the item was delivered and works; required when the database has no paid order for it.",
        allowedValues: OptionSpec.choices(AppleChoices.DeliveryStatus.self),
        defaultDescription: "DELIVERED when the order was paid")

    /// `--consumption-percentage MILLI`.
    static let consumptionPercentage = Option<ConsumptionPercentage?>(
        "consumption-percentage", valueName: "milli",
        help: "How much was consumed, in thousandths of a percent (0–100000).",
        defaultDescription: "the share of the paid period passed when Apple asked; none for one-time purchases")

    /// `--reason TEXT`.
    static let reason = Option<String?>(
        "reason", valueName: "text", help: "Why: recorded in the audit trail with the answer.",
        defaultDescription: "refund request NOTIFICATION_UUID")

    /// `--apply`.
    static let apply = CommandTree.applyOption.with(
        help: "Send the request to Apple and record its answer; without it, print the request and send nothing.")

    static let command = CommandSpec(
        name: "answer",
        abstract: "Compose the Consumption Information for a refund request from the database; send it with --apply.",
        discussion: """
            From the database: deliveryStatus DELIVERED when the transaction's order was paid, and \
            consumptionPercentage as the share of the paid period that had passed when Apple asked \
            (subscriptions). The customer's prior refunds and first purchase are shown, not sent (the \
            v2 request has no field for them). customerConsented is sent only with \
            --customer-consented, and Apple accepts the answer only with it. Without --apply it \
            prints the exact request and sends nothing; with --apply it sends it and records Apple's \
            answer in the audit trail, which links it to the request ('refunds list').
            """,
        examples: [
            CommandExample(
                "iapctl refunds answer 2000000123456789 --customer-consented --refund-preference DECLINE --apply",
                "Send the composed answer, preferring that Apple declines the refund.")
        ],
        options: [
            AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption, deliveryStatus,
            consumptionPercentage, AppleWrites.refundPreferenceOption, reason, CommandTree.ticketOption, apply,
        ] + AppleCommands.options,
        arguments: [AppleWrites.consumptionTransactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let tx = invocation[AppleWrites.consumptionTransactionArgument]
        let apply = invocation.flag(apply)
        let consented = invocation.flag(AppleWrites.customerConsentedOption)
        if apply { try WriteRequest.requireConsent(consented) }
        let choices = RefundDesk.Choices(
            customerConsented: consented, sampleContentProvided: invocation.flag(AppleWrites.sampleContentProvidedOption),
            deliveryStatus: invocation[deliveryStatus],
            consumptionPercentage: invocation[consumptionPercentage]?.milli,
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
            invocation[reason].flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
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
