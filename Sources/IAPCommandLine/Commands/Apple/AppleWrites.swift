import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// The `apple` commands that change something at Apple: renewal-date extensions, consumption
/// information, the app account token. Each needs --reason, shows the exact request with --dry-run,
/// sends an idempotent requestIdentifier where Apple takes one, and records Apple's answer in the audit
/// trail.
enum AppleWrites {
    static let writeOptions: [any OptionDeclaration] = [
        CommandTree.reasonOption, CommandTree.ticketOption,
        CommandTree.dryRun.with(help: "Print the exact request (method, URL, body); send nothing, record nothing."),
    ]

    static let requestIdOption = Option<RequestIdentifierText?>(
        "request-id", valueName: "uuid",
        help: "Apple's requestIdentifier (Apple does a write once per identifier). By default a new UUID each run, "
            + "kept across this run's retries; pass the one a run printed to repeat that very extension (after "
            + "a timeout) without extending twice.")

    /// `extend [ORIGINAL]`.
    static let extendOriginalArgument = Argument<String?>(
        "original", help: "The originalTransactionId (leave out with --all-active).")

    /// `extend-status PRODUCT REQUEST-ID`.
    static let massProductArgument = Argument<String>("product", help: "The product id of the mass extension.")
    static let massRequestIdArgument = Argument<String>(
        "request-id", help: "Its requestIdentifier ('apple extend --all-active' printed it).")

    /// `consumption TRANSACTION`.
    static let consumptionTransactionArgument = Argument<String>(
        "transaction", help: "The transactionId of the CONSUMPTION_REQUEST.")

    /// `set-app-account-token ORIGINAL`.
    static let originalArgument = Argument<String>("original", help: "The originalTransactionId.")

    /// `extend --days N`.
    static let daysOption = Option<ExtensionDays>(
        "days", valueName: "n", help: "Days to extend by (1–90).", validation: .positiveInteger)

    /// `extend --reason-code CODE`.
    static let reasonCodeOption = Option<Int64>(
        "reason-code", valueName: "code",
        help: "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.",
        allowedValues: OptionSpec.choices(AppleChoices.ExtendReasonCode.self))

    /// `extend --all-active`.
    static let allActiveOption = OptionSpec.flag(
        "all-active", help: "Every active subscriber of --product (mass extension).")

    /// `extend --product ID`.
    static let productOption = Option<String?>("product", valueName: "id", help: "With --all-active: the product id.")

    /// `extend --storefront CODE`, repeatable.
    static let storefrontOption = Option<[String]>(
        "storefront", valueName: "code", help: "With --all-active: only these storefronts (ISO 3166-1 alpha-3).")

    /// `consumption --customer-consented`.
    static let customerConsentedOption = OptionSpec.flag(
        "customer-consented", help: "The customer consented to sending consumption data (required by Apple).")

    /// `consumption --sample-content-provided`.
    static let sampleContentProvidedOption = OptionSpec.flag(
        "sample-content-provided", help: "A free sample or trial was provided before the purchase.")

    /// `consumption --delivery-status STATUS`.
    static let deliveryStatusOption = Option<String>(
        "delivery-status", valueName: "status", help: "Whether the item was delivered and works.",
        allowedValues: OptionSpec.choices(AppleChoices.DeliveryStatus.self))

    /// `consumption --consumption-percentage MILLI`.
    static let consumptionPercentageOption = Option<ConsumptionPercentage?>(
        "consumption-percentage", valueName: "milli",
        help: "How much was consumed, in thousandths of a percent (0–100000).")

    /// `consumption --refund-preference PREF`.
    static let refundPreferenceOption = Option<String?>(
        "refund-preference", valueName: "pref", help: "Your preference for the refund decision.",
        allowedValues: OptionSpec.choices(AppleChoices.RefundPreference.self))

    /// `set-app-account-token --token UUID`.
    static let tokenOption = Option<AppAccountToken>("token", valueName: "uuid", help: "The new appAccountToken (a UUID).")

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
        arguments: [extendOriginalArgument],
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
            massProductArgument, massRequestIdArgument,
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
        arguments: [consumptionTransactionArgument],
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
        arguments: [originalArgument],
        handler: runSetToken)

    static func runExtend(_ invocation: Invocation) throws -> ExitCode {
        let days = invocation[daysOption].days
        let code = invocation[reasonCodeOption]
        _ = try reasonAndTicket(invocation)
        let write: AppleWrite
        let original = invocation[extendOriginalArgument]
        if invocation.flag(allActiveOption) {
            guard original == nil else { throw CLIError.usage("--all-active takes no ORIGINAL") }
            guard let product = invocation[productOption] else { throw CLIError.usage("--all-active needs --product") }
            write = AppleWrite.massExtend(
                product: product, days: days, reasonCode: code, storefronts: invocation[storefrontOption],
                requestIdentifier: givenRequestIdentifier(invocation))
        } else {
            guard let original else {
                throw CLIError.usage("give the ORIGINAL transaction id, or --all-active --product P")
            }
            if invocation[productOption] != nil || !invocation[storefrontOption].isEmpty {
                throw CLIError.usage("--product and --storefront go with --all-active")
            }
            write = AppleWrite.extend(
                original: original, days: days, reasonCode: code, requestIdentifier: givenRequestIdentifier(invocation))
        }
        return try send(write, invocation) { answer in
            if invocation.flag(allActiveOption) {
                invocation.note(
                    "Apple accepted the mass extension; check it with 'iapctl apple extend-status "
                        + "\(invocation[productOption] ?? "") \(answer?["requestIdentifier"]?.stringValue ?? "")'")
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
        let call = Endpoint.massExtendStatus(
            productId: invocation[massProductArgument], requestIdentifier: invocation[massRequestIdArgument])
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
        let tx = invocation[consumptionTransactionArgument]
        let write = AppleWrite.consumption(
            transaction: tx, sampleContentProvided: invocation.flag(sampleContentProvidedOption),
            deliveryStatus: invocation[deliveryStatusOption],
            consumptionPercentage: invocation[consumptionPercentageOption]?.milli,
            refundPreference: invocation[refundPreferenceOption])
        return try send(write, invocation) { _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
    }

    static func runSetToken(_ invocation: Invocation) throws -> ExitCode {
        let token = invocation[tokenOption].token
        let original = invocation[originalArgument]
        return try send(AppleWrite.setAppAccountToken(original: original, token: token), invocation) { _ in
            invocation.note("Apple set the appAccountToken of \(original)")
            return .success
        }
    }

    /// `--reason` (not blank) and `--ticket` ("" is none), as every audited change takes them.
    static func reasonAndTicket(_ invocation: Invocation) throws(CLIError) -> (reason: String, ticket: String?) {
        try Corrections.reasonAndTicket(invocation, example: "outage 2025-06-01, ticket INC-9")
    }

    /// `--request-id`, lowercased; nil: the write makes a new one.
    static func givenRequestIdentifier(_ invocation: Invocation) -> String? { invocation[requestIdOption]?.identifier }

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
            if let id = write.requestIdentifier, invocation[requestIdOption] == nil {
                invocation.note("the requestIdentifier is new on each run; to send this one, add --request-id \(id)")
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
        invocation.note(
            "recorded as audit row \(outcome.auditId)" + (write.requestIdentifier.map { " (requestIdentifier \($0))" } ?? ""))
        if case .failure(let error) = outcome.result, let id = write.requestIdentifier,
            error.kind == .unavailable || error.kind == .rateLimited
        {
            invocation.note(
                "Apple may have received it: to repeat this very request without doing it twice, run the same "
                    + "command with --request-id \(id)")
        }
        let answer = try outcome.result.get()
        var r = Record()
        r.append("audit_id", outcome.auditId)
        r.append("http_status", Int64(answer.status))
        for (key, value) in answer.json?.objectMembers ?? [] { r.append(key.snakeCased, value) }
        invocation.emit([r])
        return try done(answer.json)
    }
}

/// `--days N`: 1 to 90 (``WriteRequest/extensionDays(_:)``).
struct ExtensionDays: OptionValue {
    let days: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        do { days = try WriteRequest.extensionDays(text) } catch { throw OptionValueProblem(error.cliError) }
    }
}

/// `--consumption-percentage MILLI`: 0 to 100000 (``WriteRequest/consumptionPercentage(_:)``).
struct ConsumptionPercentage: OptionValue {
    let milli: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        do { milli = try WriteRequest.consumptionPercentage(text) ?? 0 } catch { throw OptionValueProblem(error.cliError) }
    }
}

/// `--request-id UUID`, lowercased (``WriteRequest/requestIdentifier(_:)``).
struct RequestIdentifierText: OptionValue {
    let identifier: String

    init(optionText text: String) throws(OptionValueProblem) {
        do { identifier = try WriteRequest.requestIdentifier(text) ?? text } catch {
            throw OptionValueProblem(error.cliError)
        }
    }
}

/// `--token UUID` (``WriteRequest/appAccountToken(_:)``).
struct AppAccountToken: OptionValue {
    let token: String

    init(optionText text: String) throws(OptionValueProblem) {
        do { token = try WriteRequest.appAccountToken(text) } catch { throw OptionValueProblem(error.cliError) }
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
