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

    /// `consumption TRANSACTION`.
    static let consumptionTransactionArgument = Argument<String>(
        "transaction", help: "The transactionId of the CONSUMPTION_REQUEST.")

    /// `consumption --customer-consented`.
    static let customerConsentedOption = OptionSpec.flag(
        "customer-consented", help: "The customer consented to sending consumption data (required by Apple).")

    /// `consumption --sample-content-provided`.
    static let sampleContentProvidedOption = OptionSpec.flag(
        "sample-content-provided", help: "A free sample or trial was provided before the purchase.")

    /// `consumption --refund-preference PREF`.
    static let refundPreferenceOption = Option<String?>(
        "refund-preference", valueName: "pref", help: "Your preference for the refund decision.",
        allowedValues: OptionSpec.choices(AppleChoices.RefundPreference.self))

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
