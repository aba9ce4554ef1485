import AppStoreAPI
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

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
        help: "How much was consumed, in thousandths of a percent (0–100000); never for an auto-renewable subscription.",
        defaultDescription: "0 when not delivered; for a non-renewing subscription the share of its period passed")

    /// `--reason TEXT`.
    static let reason = Option<String?>(
        "reason", valueName: "text", help: "Why: recorded in the audit trail with the answer.",
        defaultDescription: "refund request NOTIFICATION_UUID")

    /// `--apply`.
    static let apply = CommandTree.applyOption.with(
        help: "Send the request to Apple and record its answer; without it, print the request and send nothing.")

    /// `--all`.
    static let all = OptionSpec.flag(
        "all", help: "Every open refund request, each answered by the first matching rule of --policy.")

    /// `--policy FILE`.
    static let policy = Option<String?>(
        "policy", valueName: "file", help: "With --all: the refund policy (JSON, first-match rules; see DESCRIPTION).")

    /// `--resend-claimed`.
    static let resendClaimed = OptionSpec.flag(
        "resend-claimed",
        help: "Also send a request claimed by a run whose answer was never recorded (its sender died).")

    static let argument = Argument<String?>(
        "transaction", help: "The transactionId of the CONSUMPTION_REQUEST (leave out with --all).")

    static let command = CommandSpec(
        name: "answer",
        abstract: "Answer a refund request, or all open ones by a policy, with Consumption Information; send with --apply.",
        discussion: """
            The product type (from the signed transaction Apple sent with the request) decides what is \
            sent, as Apple's rules say: an auto-renewable subscription never carries \
            consumptionPercentage (Apple computes it); a consumable, non-consumable or non-renewing \
            subscription carries it when known (--consumption-percentage; for a non-renewing \
            subscription the share of its period passed), and 0 when the item was not delivered; \
            GRANT_PRORATED needs a percentage above 0 and below 100000 except for an auto-renewable \
            subscription. A request Apple would refuse is refused before sending (exit 65). \
            deliveryStatus is DELIVERED when the transaction's order was paid. customerConsented is sent \
            only with --customer-consented (or a policy's "customer_consented": true). \
            Each request is answered at most once: --apply first claims it in the database, in the \
            same transaction as the check that it is unanswered, then sends it and records Apple's \
            answer in the audit trail ('refunds list' shows it). A request already answered or claimed \
            is refused (exit 4); one whose sender died before recording Apple's answer is sent again \
            only with --resend-claimed; one a policy rule left unanswered may be answered by hand. \
            With --all --policy FILE, each open request is answered by the first rule whose conditions \
            hold. The policy is a JSON object: {"customer_consented": true, "rules": [RULE…]}; a RULE \
            is {"name": N, "when": {…}, "answer": {…} or "none"}. "when" may hold product_type \
            (AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE, NON_CONSUMABLE), storefront (alpha-3 codes), \
            reason (Apple's consumptionRequestReason), currency, delivered (true/false), \
            tenure_days_min/max (days since the customer's first purchase), prior_refunds_min/max, \
            consumption_min/max (thousandths of a percent), amount_min/max (Apple's price, \
            milli-units); each a string or a list where it names values; all must hold, and one on \
            something the database does not know does not. "answer" may hold refund_preference, \
            delivery_status, consumption_percentage and sample_content_provided; "none" records \
            that the rule does not answer. A request no rule matches is left for a person. Each answer \
            is audited with its rule ("refund policy rule N") and 'refunds list' shows the rule.
            """,
        examples: [
            CommandExample(
                "iapctl refunds answer 2000000123456789 --customer-consented --refund-preference DECLINE --apply",
                "Send the composed answer, preferring that Apple declines the refund."),
            CommandExample(
                "iapctl refunds answer --all --policy /etc/iapctl/refund-policy.json --apply",
                "Answer every open request by the policy (a cron job: see docs/apple-setup.md)."),
        ],
        options: [
            AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption, deliveryStatus,
            consumptionPercentage, AppleWrites.refundPreferenceOption, all, policy, resendClaimed, reason,
            CommandTree.ticketOption, apply,
        ] + AppleCommands.options,
        arguments: [argument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        if invocation.flag(all) { return try runPolicy(invocation) }
        if invocation[policy] != nil { throw CLIError.usage("--policy goes with --all") }
        guard let tx = invocation[argument] else {
            throw CLIError.usage("give the TRANSACTION id of a refund request, or --all --policy FILE")
        }
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
        if let claim = request.claim, claim.state == .answered || (claim.state == .claimed && !invocation.flag(resendClaimed)) {
            throw held(claim, tx)
        }
        if request.claim?.state == .skipped {
            invocation.note("policy rule '\(request.claim?.rule ?? "?")' left it unanswered; answering it by hand")
        }
        // What the request is and its deadline first: also when the answer cannot be composed (a
        // transaction the database has no order of needs --delivery-status), the deadline is what counts.
        let now = Timestamp.now()
        if now >= request.deadline {
            invocation.warn("Apple stopped waiting at \(Timestamp.iso8601(request.deadline)); it may refuse the answer")
        }
        for line in context(request, knowledge, choices) { invocation.note(line) }
        let write = try RefundDesk.answer(request, knowledge: knowledge, choices: choices)
        let reason =
            invocation[reason].flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
            ?? "refund request \(request.request.notificationUUID ?? "ledger #\(request.request.id)")"
        let ticket = invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 }
        guard apply else {
            let status = try AppleWrites.send(write, invocation, dryRun: true, reason: reason, ticket: ticket) { _ in .success }
            invocation.note(
                consented
                    ? "send it with --apply"
                    : "Apple accepts it only with --customer-consented (give it only if the customer consented); "
                        + "then send it with --apply")
            return status
        }
        let apple = try AppleSession(invocation)
        let store = try DbOpen.existing(invocation)
        let claimed = try RefundClaims.take(
            request, store: store, by: RefundClaims.claimant(invocation), rule: nil, body: write.call.bodyText,
            resend: invocation.flag(resendClaimed), overrideSkip: true)
        guard case .taken(let claim) = claimed else {
            switch claimed {
            case .held(let other): throw held(other, tx)
            case .answered(let audit):
                throw CLIError(
                    .conflict, "the refund request for \(tx) was already answered (audit row \(audit.id))",
                    hint: "'iapctl audit show \(audit.id)' shows what was sent")
            case .taken: fatalError("unreachable")
            }
        }
        let sent = try RefundClaims.send(
            write, claim, apple: apple, store: store, actor: invocation.actor, reason: reason, ticket: ticket)
        invocation.note("recorded as audit row \(sent.auditId)")
        let answer = try sent.result.get()
        var r = Record()
        r.append("audit_id", sent.auditId)
        r.append("http_status", Int64(answer.status))
        invocation.emit([r])
        invocation.note("Apple accepted the consumption information for \(tx)")
        return .success
    }

    /// A request claimed already: answered, skipped by a policy, refused by Apple, or being sent.
    static func held(_ claim: RefundAnswerClaim, _ tx: String) -> CLIError {
        let by = "\(claim.claimedBy) at \(Timestamp.iso8601(claim.claimedAt))"
        switch claim.state {
        case .answered:
            return CLIError(
                .conflict, "the refund request for \(tx) was already answered by \(by)",
                hint: claim.auditId.map { "'iapctl audit show \($0)' shows what was sent" })
        case .skipped:
            return CLIError(
                .conflict,
                "the refund request for \(tx) was left unanswered by policy rule '\(claim.rule ?? "?")' (\(by))",
                hint: "'iapctl refunds list' shows it")
        case .claimed:
            return CLIError(
                .conflict,
                "the refund request for \(tx) was claimed by \(by) and Apple's answer is not recorded: it is being "
                    + "sent, or its sender died",
                hint: "if that run is over, send it again with --resend-claimed")
        case .refused:
            return CLIError(.conflict, "the refund request for \(tx) is being answered again by \(by)")
        }
    }

    // MARK: --all --policy

    static let policyColumns: [Column] = [
        Column("transaction_id", title: "TRANSACTION"), Column("deadline_at", title: "DEADLINE"),
        Column("rule", title: "RULE", maxWidth: 24), Column("action", title: "ACTION"),
        Column("http_status", title: "HTTP"), Column("audit_id", title: "AUDIT"),
        Column("problem", title: "PROBLEM", maxWidth: 60),
    ]

    static func runPolicy(_ invocation: Invocation) throws -> ExitCode {
        if invocation[argument] != nil { throw CLIError.usage("--all takes no TRANSACTION") }
        guard let path = invocation[policy] else {
            throw CLIError.usage("--all needs --policy FILE", hint: "the policy's format is in iapctl-refunds-answer(1)")
        }
        for (given, name) in [
            (invocation.flag(AppleWrites.customerConsentedOption), "--customer-consented"),
            (invocation[deliveryStatus] != nil, "--delivery-status"),
            (invocation[consumptionPercentage] != nil, "--consumption-percentage"),
            (invocation[AppleWrites.refundPreferenceOption] != nil, "--refund-preference"),
            (invocation.flag(AppleWrites.sampleContentProvidedOption), "--sample-content-provided"),
        ] where given {
            throw CLIError.usage("\(name) answers one request; with --all the policy's rules say what to send")
        }
        let text = String(decoding: try FileSystem.readAll(path: path, maxBytes: 1 << 20), as: UTF8.self)
        let policy: RefundPolicy
        do { policy = try RefundPolicy.parse(text) } catch {
            throw CLIError(
                .dataError, "refund policy \(path): \(error)", hint: "the policy's format is in iapctl-refunds-answer(1)")
        }
        let apply = invocation.flag(apply)
        if apply && !policy.customerConsented {
            throw CLIError.usage(
                "refund policy \(path) does not say \"customer_consented\": true; Apple accepts an answer only with it",
                hint: "say it only if every customer answered under this policy consented")
        }
        let resend = invocation.flag(resendClaimed)
        let now = Timestamp.now()
        let open = try DbOpen.read(invocation) { session in
            try RefundRequests.list(session).filter { request in
                let status = request.status(now: now)
                return status == .open || status == .dueSoon || (resend && status == .claimed)
            }.map { ($0, try RefundDesk.knowledge($0, session)) }
        }
        let apple = apply && !open.isEmpty ? try AppleSession(invocation) : nil
        let store = apply ? try DbOpen.existing(invocation) : nil
        let ticket = invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 }
        var records: [Record] = []
        var failed = 0
        for (request, knowledge) in open {
            var r = Record()
            r.append("transaction_id", request.transactionId)
            r.append("deadline_at", request.deadline)
            r.append("notification_uuid", request.request.notificationUUID)
            guard let rule = policy.rule(for: RefundPolicy.Facts(request, knowledge)) else {
                r.append("rule", nil as String?)
                r.append("action", "no-rule")
                records.append(r)
                continue
            }
            r.append("rule", rule.name)
            let reason = "refund policy rule \(rule.name) (\(path))"
            guard let answer = rule.answer else {
                if let store {
                    let skipped = try RefundClaims.skip(
                        request, store: store, by: RefundClaims.claimant(invocation), actor: invocation.actor,
                        rule: rule.name, reason: reason, ticket: ticket)
                    r.append("action", skipped == nil ? "claimed-elsewhere" : "skipped")
                    r.append("audit_id", skipped)
                } else {
                    r.append("action", "would-skip")
                }
                records.append(r)
                continue
            }
            let choices = RefundDesk.Choices(
                customerConsented: policy.customerConsented, sampleContentProvided: answer.sampleContentProvided,
                deliveryStatus: answer.deliveryStatus, consumptionPercentage: answer.consumptionPercentage,
                refundPreference: answer.refundPreference)
            let write: AppleWrite
            do { write = try RefundDesk.answer(request, knowledge: knowledge, choices: choices) } catch {
                r.append("action", "refused-before-sending")
                r.append("problem", error.cliError.message)
                records.append(r)
                failed += 1
                continue
            }
            r.append("body", write.call.bodyText)
            guard let store, let apple else {
                r.append("action", "would-send")
                records.append(r)
                continue
            }
            let claimed = try RefundClaims.take(
                request, store: store, by: RefundClaims.claimant(invocation), rule: rule.name,
                body: write.call.bodyText, resend: resend)
            guard case .taken(let claim) = claimed else {
                r.append("action", "claimed-elsewhere")
                records.append(r)
                continue
            }
            let sent = try RefundClaims.send(
                write, claim, apple: apple, store: store, actor: invocation.actor, reason: reason, ticket: ticket)
            r.append("audit_id", sent.auditId)
            switch sent.result {
            case .success(let answer):
                r.append("action", "sent")
                r.append("http_status", Int64(answer.status))
            case .failure(let error):
                r.append("action", "apple-refused")
                r.append("http_status", error.httpStatus.map(Int64.init))
                r.append("problem", error.message)
                failed += 1
            }
            records.append(r)
        }
        invocation.emit(records, columns: policyColumns)
        let counts = Dictionary(grouping: records) { $0["action"]?.stringValue ?? "" }.mapValues(\.count)
        invocation.note(
            "\(open.count) open refund request\(open.count == 1 ? "" : "s")"
                + (counts.isEmpty ? "" : ": " + counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
                + (apply ? "" : " (dry run: nothing sent, nothing recorded; send with --apply)"))
        return failed > 0 ? .failure : .success
    }

    /// Thousandths of a percent as a percentage with one decimal (18611 → "18.6").
    static func percent(milli: Int64) -> String {
        let tenths = (milli + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// What the composed request rests on, for the operator to check.
    static func context(_ request: RefundRequest, _ known: RefundDesk.Knowledge, _ choices: RefundDesk.Choices)
        -> [String]
    {
        var lines = [
            "refund request of \(Timestamp.iso8601(request.request.signedDate ?? 0)) for transaction \(request.transactionId)"
                + (request.userId.map { " of user \($0)" } ?? "") + (request.productId.map { " (\($0))" } ?? "")
                + (request.deadline < Timestamp.now()
                    ? "; Apple's deadline passed at \(Timestamp.iso8601(request.deadline))"
                    : "; Apple waits until \(Timestamp.iso8601(request.deadline))")
        ]
        if choices.deliveryStatus == nil, let order = request.order {
            lines.append("deliveryStatus DELIVERED: order \(order.no) is \(order.status.rawValue)")
        }
        if let type = known.productType { lines.append("product type: \(type.rawValue)") }
        if known.productType == .autoRenewable {
            lines.append("no consumptionPercentage: Apple computes it for an auto-renewable subscription")
        } else if choices.consumptionPercentage == nil, let used = known.consumptionPercentage {
            lines.append(
                "consumptionPercentage \(used) (\(percent(milli: used)) %): the share of the paid period passed when Apple asked")
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
        case .productTypeUnknown(let tx):
            CLIError(
                .dataError,
                "the refund request for \(tx) carries no signed transaction with a product type: Apple's rules for "
                    + "what to send depend on it",
                hint: "answer it by hand with 'iapctl apple consumption \(tx)' after checking the product type")
        case .percentageForAutoRenewable(let tx):
            CLIError(
                .dataError,
                "transaction \(tx) is an auto-renewable subscription: Apple refuses a consumptionPercentage for it "
                    + "(ConsumptionPercentageAutoRenewableSubscriptionError)",
                hint: "leave out the consumption percentage: Apple computes it from elapsed time")
        case .undeliveredPercentageNonZero(let tx, let percentage, let status):
            CLIError(
                .dataError,
                "transaction \(tx): deliveryStatus \(status) needs consumptionPercentage 0, not \(percentage) "
                    + "(UndeliveredConsumptionPercentageNonZeroError)",
                hint: "give 0 (or none), or deliveryStatus DELIVERED if the item was delivered")
        case .proratedNeedsPercentage(let tx, let percentage):
            CLIError(
                .dataError,
                "transaction \(tx): GRANT_PRORATED needs a consumptionPercentage above 0 and below 100000"
                    + (percentage.map { ", not \($0)" } ?? "; none is known"),
                hint: "give the share consumed (--consumption-percentage, or the rule's consumption_percentage), "
                    + "or prefer GRANT_FULL or DECLINE")
        case .percentageOutOfRange(let tx, let percentage):
            CLIError(
                .dataError, "transaction \(tx): consumptionPercentage \(percentage) is outside 0…100000",
                hint: "thousandths of a percent: 100000 is all of it")
        }
    }
}
