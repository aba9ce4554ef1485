import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// The `apple` commands that change something at Apple: renewal-date extensions, consumption
/// information, the app account token. Each needs --reason, shows the exact request with --dry-run,
/// sends an idempotent requestIdentifier where Apple takes one, and records Apple's answer in the audit
/// trail.
enum AppleWrites {
    static let writeOptions: [OptionSpec] = [
        CommandTree.reasonOption, CommandTree.ticketOption,
        CommandTree.dryRun.with(help: "Print the exact request (method, URL, body); send nothing, record nothing."),
    ]

    static let requestIdOption = OptionSpec(
        "request-id", valueName: "uuid",
        help: "Apple's requestIdentifier; by default one derived from the request and --reason, so running the "
            + "same command again (after a timeout) does not extend twice.")

    /// `extend --days N`.
    static let daysOption = OptionSpec(
        "days", valueName: "n", help: "Days to extend by (1–90).", isRequired: true, validation: .positiveInteger)

    /// `extend --reason-code CODE`.
    static let reasonCodeOption = OptionSpec(
        "reason-code", valueName: "code",
        help: "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.",
        allowedValues: OptionSpec.choices(AppleChoices.ExtendReasonCode.self), isRequired: true)

    /// `extend --all-active`.
    static let allActiveOption = OptionSpec.flag(
        "all-active", help: "Every active subscriber of --product (mass extension).")

    /// `extend --product ID`.
    static let productOption = OptionSpec("product", valueName: "id", help: "With --all-active: the product id.")

    /// `extend --storefront CODE`, repeatable.
    static let storefrontOption = OptionSpec(
        "storefront", valueName: "code", help: "With --all-active: only these storefronts (ISO 3166-1 alpha-3).",
        kind: .repeatable)

    /// `consumption --customer-consented`.
    static let customerConsentedOption = OptionSpec.flag(
        "customer-consented", help: "The customer consented to sending consumption data (required by Apple).")

    /// `consumption --sample-content-provided`.
    static let sampleContentProvidedOption = OptionSpec.flag(
        "sample-content-provided", help: "A free sample or trial was provided before the purchase.")

    /// `consumption --delivery-status STATUS`.
    static let deliveryStatusOption = OptionSpec(
        "delivery-status", valueName: "status", help: "Whether the item was delivered and works.",
        allowedValues: OptionSpec.choices(AppleChoices.DeliveryStatus.self), isRequired: true)

    /// `consumption --consumption-percentage MILLI`.
    static let consumptionPercentageOption = OptionSpec(
        "consumption-percentage", valueName: "milli",
        help: "How much was consumed, in thousandths of a percent (0–100000).")

    /// `consumption --refund-preference PREF`.
    static let refundPreferenceOption = OptionSpec(
        "refund-preference", valueName: "pref", help: "Your preference for the refund decision.",
        allowedValues: OptionSpec.choices(AppleChoices.RefundPreference.self))

    /// `set-app-account-token --token UUID`.
    static let tokenOption = OptionSpec("token", valueName: "uuid", help: "The new appAccountToken (a UUID).", isRequired: true)

    static let extend = CommandSpec(
        name: "extend",
        abstract: "Extend a subscription's renewal date (or every active subscriber's of a product) — audited.",
        discussion: """
            Extend a Subscription Renewal Date for ORIG (an originalTransactionId), or with --all-active \
            --product P, Extend Subscription Renewal Dates for All Active Subscribers (Apple answers at once \
            and works in the background: check it with 'apple extend-status P REQUEST_ID'). Apple allows \
            1–90 days and at most two extensions per subscription a year.
            """,
        examples: [
            CommandExample(
                "iapctl apple extend 2000000100000001 --days 7 --reason-code 3 --reason 'outage 2025-06-01' --ticket INC-9",
                "A week for one subscriber after an outage."),
            CommandExample(
                "iapctl apple extend --all-active --product com.example.pro.monthly --days 3 --reason-code 3 --reason 'outage' --dry-run",
                "Show the mass extension request without sending it."),
        ],
        options: [
            daysOption, reasonCodeOption, allActiveOption, productOption, storefrontOption, requestIdOption,
        ] + writeOptions,
        arguments: [ArgumentSpec("original", help: "The originalTransactionId (leave out with --all-active).", isOptional: true)],
        handler: runExtend)

    static let extendStatus = CommandSpec(
        name: "extend-status",
        abstract: "Whether a mass renewal-date extension is complete, and how many succeeded and failed.",
        examples: [
            CommandExample(
                "iapctl apple extend-status com.example.pro.monthly 758883e8-151b-47b7-abd0-60c4d804c2f5 -o table",
                "The status of a mass extension.")
        ],
        arguments: [
            ArgumentSpec("product", help: "The product id of the mass extension."),
            ArgumentSpec("request-id", help: "Its requestIdentifier ('apple extend --all-active' printed it)."),
        ],
        handler: runExtendStatus)

    static let consumption = CommandSpec(
        name: "consumption",
        abstract: "Send Consumption Information for a refund request (CONSUMPTION_REQUEST) — audited.",
        discussion: "Apple asks for it in a CONSUMPTION_REQUEST notification and needs it within 12 hours. "
            + "Send it only with the customer's consent (--customer-consented).",
        examples: [
            CommandExample(
                "iapctl apple consumption 2000000123456789 --customer-consented --delivery-status DELIVERED --consumption-percentage 25000 --refund-preference DECLINE --reason 'ticket T-5'",
                "A quarter consumed, delivered: prefer declining the refund.")
        ],
        options: [
            customerConsentedOption, sampleContentProvidedOption, deliveryStatusOption, consumptionPercentageOption,
            refundPreferenceOption,
        ] + writeOptions,
        arguments: [ArgumentSpec("transaction", help: "The transactionId of the CONSUMPTION_REQUEST.")],
        handler: runConsumption)

    static let setAppAccountToken = CommandSpec(
        name: "set-app-account-token",
        abstract: "Set the appAccountToken (your order number) of a purchase made without one — audited.",
        examples: [
            CommandExample(
                "iapctl apple set-app-account-token 2000000100000001 --token 7389a31a-fb6d-4569-a2a6-db7d85d84813 --reason 'bought on the web flow'",
                "Attach the purchase to an order number.")
        ],
        options: [tokenOption] + writeOptions,
        arguments: [ArgumentSpec("original", help: "The originalTransactionId.")],
        handler: runSetToken)

    static func runExtend(_ invocation: Invocation) throws -> ExitCode {
        let days = try WriteRequest.extensionDays(invocation.value(daysOption))
        let code = Int64(invocation.value(reasonCodeOption) ?? "0") ?? 0
        let (reason, ticket) = try reasonAndTicket(invocation)
        let write: AppleWrite
        if invocation.flag(allActiveOption) {
            guard invocation.arguments.isEmpty else { throw CLIError.usage("--all-active takes no ORIGINAL") }
            guard let product = invocation.value(productOption) else { throw CLIError.usage("--all-active needs --product") }
            write = AppleWrite.massExtend(
                product: product, days: days, reasonCode: code, storefronts: invocation.values(storefrontOption),
                requestIdentifier: try givenRequestIdentifier(invocation), reason: reason, ticket: ticket)
        } else {
            guard let original = invocation.arguments.first else {
                throw CLIError.usage("give the ORIGINAL transaction id, or --all-active --product P")
            }
            if invocation.value(productOption) != nil || !invocation.values(storefrontOption).isEmpty {
                throw CLIError.usage("--product and --storefront go with --all-active")
            }
            write = AppleWrite.extend(
                original: original, days: days, reasonCode: code, requestIdentifier: try givenRequestIdentifier(invocation),
                reason: reason, ticket: ticket)
        }
        return try send(write, invocation) { answer in
            if invocation.flag(allActiveOption) {
                invocation.note(
                    "Apple accepted the mass extension; check it with 'iapctl apple extend-status "
                        + "\(invocation.value(productOption) ?? "") \(answer?["requestIdentifier"]?.stringValue ?? "")'")
                return .success
            }
            guard WriteAnswer.extended(answer) else {
                invocation.warn("Apple did not extend the subscription (success is not true); see its answer")
                return .failure
            }
            return .success
        }
    }

    static func runExtendStatus(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.massExtendStatus(productId: invocation.arguments[0], requestIdentifier: invocation.arguments[1])
        let answer = try session.explaining { () throws(AppStoreAPIError) in
            try session.api.send(call, to: AppleNotifications.server(session))
        }
        var r = Record()
        for key in WriteAnswer.massExtensionStatusFields {
            r.append(key.snakeCased, answer.json?[key] ?? .null)
        }
        invocation.emit([r])
        return WriteAnswer.massExtensionComplete(answer.json) ? .success : .failure
    }

    static func runConsumption(_ invocation: Invocation) throws -> ExitCode {
        try WriteRequest.requireConsent(invocation.flag(customerConsentedOption))
        let percentage = try WriteRequest.consumptionPercentage(invocation.value(consumptionPercentageOption))
        let tx = invocation.arguments[0]
        let write = AppleWrite.consumption(
            transaction: tx, sampleContentProvided: invocation.flag(sampleContentProvidedOption),
            deliveryStatus: invocation.value(deliveryStatusOption) ?? "", consumptionPercentage: percentage,
            refundPreference: invocation.value(refundPreferenceOption))
        return try send(write, invocation) { _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
    }

    static func runSetToken(_ invocation: Invocation) throws -> ExitCode {
        let token = try WriteRequest.appAccountToken(invocation.value(tokenOption) ?? "")
        let original = invocation.arguments[0]
        return try send(AppleWrite.setAppAccountToken(original: original, token: token), invocation) { _ in
            invocation.note("Apple set the appAccountToken of \(original)")
            return .success
        }
    }

    /// `--reason` (not blank) and `--ticket` ("" is none), as every audited change takes them.
    static func reasonAndTicket(_ invocation: Invocation) throws(CLIError) -> (reason: String, ticket: String?) {
        try Corrections.reasonAndTicket(invocation, example: "outage 2025-06-01, ticket INC-9")
    }

    /// `--request-id`, lowercased; nil: the operation derives one.
    static func givenRequestIdentifier(_ invocation: Invocation) throws(WriteRequest.Refusal) -> String? {
        try WriteRequest.requestIdentifier(invocation.value(requestIdOption))
    }

    /// Dry run: the exact request. Otherwise: send it (the database must be there first, to record it),
    /// record Apple's answer — or Apple's refusal — in the audit trail, then print the answer.
    static func send(_ write: AppleWrite, _ invocation: Invocation, done: (JSONValue?) throws -> ExitCode) throws
        -> ExitCode
    {
        let (reason, ticket) = try reasonAndTicket(invocation)
        return try send(
            write, invocation, dryRun: invocation.flag(CommandTree.dryRun), reason: reason, ticket: ticket, done: done)
    }

    /// ``send(_:_:done:)`` with the dry run, reason and ticket decided by the caller (`refunds answer`).
    static func send(
        _ write: AppleWrite, _ invocation: Invocation, dryRun: Bool, reason: String, ticket: String?,
        done: (JSONValue?) throws -> ExitCode
    ) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = write.call
        let server = AppleWrite.server(for: session.environment)
        if dryRun {
            invocation.print("\(call.method) \(session.api.url(call, server))")
            invocation.print("Authorization: Bearer <ES256 JWT signed with key \(session.keyId), not shown>")
            if let body = call.bodyText {
                invocation.print("Content-Type: application/json")
                invocation.print("")
                invocation.print(body)
            }
            if write.byTransaction && session.environment == .auto {
                invocation.note("with --environment auto, Sandbox is asked when Production does not know the id")
            }
            invocation.note("dry run: nothing sent, nothing recorded")
            return .success
        }
        let store = try DbOpen.existing(invocation)
        let outcome = try write.perform(
            session.api, session.environment, store: store, actor: invocation.actor,
            reason: reason, ticket: ticket, explain: session.explained)
        invocation.note("recorded as audit row \(outcome.auditId)")
        let answer = try outcome.result.get()
        var r = Record()
        r.append("audit_id", outcome.auditId)
        r.append("http_status", Int64(answer.status))
        for (key, value) in answer.json?.objectMembers ?? [] { r.append(key.snakeCased, value) }
        invocation.emit([r])
        return try done(answer.json)
    }
}

extension WriteRequest.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .extensionDays: .usage("--days must be 1 to 90 (Apple's limit)")
        case .consentMissing:
            .usage("--customer-consented is required", hint: "Apple accepts consumption data only with the customer's consent")
        case .consumptionPercentage: .usage("--consumption-percentage must be 0 to 100000 (thousandths of a percent)")
        case .requestIdentifier(let given): .usage("--request-id '\(given)' is not a UUID")
        case .appAccountToken(let token):
            .usage("--token '\(token)' is not a UUID", hint: "appAccountToken is a UUID, e.g. an order number")
        }
    }
}
