import AppStoreAPI
import AppStoreJWS
import SubscriptionEngine

/// The `apple` commands that change something at Apple: renewal-date extensions, consumption
/// information, the app account token. Each needs --reason, shows the exact request with --dry-run,
/// sends an idempotent requestIdentifier where Apple takes one, and records Apple's answer in the audit
/// trail.
enum AppleWrites {
    static let writeOptions: [OptionSpec] = [
        CommandTree.reasonOption, CommandTree.ticketOption,
        OptionSpec.flag("dry-run", help: "Print the exact request (method, URL, body); send nothing, record nothing."),
    ]

    static let requestIdOption = OptionSpec(
        "request-id", valueName: "uuid",
        help: "Apple's requestIdentifier; by default one derived from the request and --reason, so running the "
            + "same command again (after a timeout) does not extend twice.")

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
            OptionSpec("days", valueName: "n", help: "Days to extend by (1–90).", isRequired: true, validation: .positiveInteger),
            OptionSpec(
                "reason-code", valueName: "code",
                help: "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.",
                allowedValues: ["0", "1", "2", "3"], isRequired: true),
            .flag("all-active", help: "Every active subscriber of --product (mass extension)."),
            OptionSpec("product", valueName: "id", help: "With --all-active: the product id."),
            OptionSpec(
                "storefront", valueName: "code", help: "With --all-active: only these storefronts (ISO 3166-1 alpha-3).",
                kind: .repeatable),
            requestIdOption,
        ] + writeOptions,
        arguments: [ArgumentSpec("original", help: "The originalTransactionId (leave out with --all-active).", isOptional: true)],
        handlerKey: "apple extend")

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
        handlerKey: "apple extend-status")

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
            .flag("customer-consented", help: "The customer consented to sending consumption data (required by Apple)."),
            .flag("sample-content-provided", help: "A free sample or trial was provided before the purchase."),
            OptionSpec(
                "delivery-status", valueName: "status", help: "Whether the item was delivered and works.",
                allowedValues: [
                    "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
                    "UNDELIVERED_OTHER",
                ], isRequired: true),
            OptionSpec(
                "consumption-percentage", valueName: "milli",
                help: "How much was consumed, in thousandths of a percent (0–100000)."),
            OptionSpec(
                "refund-preference", valueName: "pref", help: "Your preference for the refund decision.",
                allowedValues: ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]),
        ] + writeOptions,
        arguments: [ArgumentSpec("transaction", help: "The transactionId of the CONSUMPTION_REQUEST.")],
        handlerKey: "apple consumption")

    static let setAppAccountToken = CommandSpec(
        name: "set-app-account-token",
        abstract: "Set the appAccountToken (your order number) of a purchase made without one — audited.",
        examples: [
            CommandExample(
                "iapctl apple set-app-account-token 2000000100000001 --token 7389a31a-fb6d-4569-a2a6-db7d85d84813 --reason 'bought on the web flow'",
                "Attach the purchase to an order number.")
        ],
        options: [OptionSpec("token", valueName: "uuid", help: "The new appAccountToken (a UUID).", isRequired: true)]
            + writeOptions,
        arguments: [ArgumentSpec("original", help: "The originalTransactionId.")],
        handlerKey: "apple set-app-account-token")

    static func handlers() -> [String: CommandHandler] {
        [
            "apple extend": runExtend,
            "apple extend-status": runExtendStatus,
            "apple consumption": runConsumption,
            "apple set-app-account-token": runSetToken,
        ]
    }

    static func runExtend(_ invocation: Invocation) throws -> ExitCode {
        guard let days = Int64(invocation.value("days") ?? ""), (1...90).contains(days) else {
            throw CLIError.usage("--days must be 1 to 90 (Apple's limit)")
        }
        let code = Int64(invocation.value("reason-code") ?? "0") ?? 0
        let reason = invocation.value("reason") ?? ""
        let call: APICall
        let entity: (EntityKind, String)
        if invocation.flag("all-active") {
            guard invocation.arguments.isEmpty else { throw CLIError.usage("--all-active takes no ORIGINAL") }
            guard let product = invocation.value("product") else { throw CLIError.usage("--all-active needs --product") }
            let requestId = try requestIdentifier(invocation, "extend-mass|\(product)|\(days)|\(code)|\(reason)")
            call = Endpoint.massExtend(
                productId: product, days: days, reasonCode: code, requestIdentifier: requestId,
                storefronts: invocation.values("storefront"))
            entity = (.contract, "product:\(product)")
        } else {
            guard let original = invocation.arguments.first else {
                throw CLIError.usage("give the ORIGINAL transaction id, or --all-active --product P")
            }
            if invocation.value("product") != nil || !invocation.values("storefront").isEmpty {
                throw CLIError.usage("--product and --storefront go with --all-active")
            }
            let requestId = try requestIdentifier(invocation, "extend|\(original)|\(days)|\(code)|\(reason)")
            call = Endpoint.extend(original: original, days: days, reasonCode: code, requestIdentifier: requestId)
            entity = (.contract, original)
        }
        return try send(
            call, invocation, entity: entity, command: "apple extend", byTransaction: !invocation.flag("all-active")
        ) { answer in
            if invocation.flag("all-active") {
                invocation.note(
                    "Apple accepted the mass extension; check it with 'iapctl apple extend-status "
                        + "\(invocation.value("product") ?? "") \(answer?["requestIdentifier"]?.stringValue ?? "")'")
                return .success
            }
            guard answer?["success"]?.boolValue == true else {
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
        for key in ["requestIdentifier", "complete", "completeDate", "succeededCount", "failedCount"] {
            r.append(RowRendering.snakeCase(key), answer.json?[key] ?? .null)
        }
        invocation.emit([r])
        return answer.json?["complete"]?.boolValue == true ? .success : .failure
    }

    static func runConsumption(_ invocation: Invocation) throws -> ExitCode {
        guard invocation.flag("customer-consented") else {
            throw CLIError.usage(
                "--customer-consented is required", hint: "Apple accepts consumption data only with the customer's consent")
        }
        var body: [(key: String, value: JSONValue)] = [
            ("customerConsented", .bool(true)),
            ("sampleContentProvided", .bool(invocation.flag("sample-content-provided"))),
            ("deliveryStatus", .string(invocation.value("delivery-status") ?? "")),
        ]
        if let raw = invocation.value("consumption-percentage") {
            guard let milli = Int64(raw), (0...100_000).contains(milli) else {
                throw CLIError.usage("--consumption-percentage must be 0 to 100000 (thousandths of a percent)")
            }
            body.append(("consumptionPercentage", .int(milli)))
        }
        if let preference = invocation.value("refund-preference") { body.append(("refundPreference", .string(preference))) }
        let tx = invocation.arguments[0]
        return try send(Endpoint.consumption(tx, body: .object(body)), invocation, entity: (.order, tx), command: "apple consumption") {
            _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
    }

    static func runSetToken(_ invocation: Invocation) throws -> ExitCode {
        let token = invocation.value("token") ?? ""
        guard AppleSession.isUUID(token) else {
            throw CLIError.usage("--token '\(token)' is not a UUID", hint: "appAccountToken is a UUID, e.g. an order number")
        }
        let original = invocation.arguments[0]
        return try send(
            Endpoint.setAppAccountToken(original: original, token: token.lowercased()), invocation,
            entity: (.contract, original), command: "apple set-app-account-token"
        ) { _ in
            invocation.note("Apple set the appAccountToken of \(original)")
            return .success
        }
    }

    static func requestIdentifier(_ invocation: Invocation, _ basis: String) throws -> String {
        if let given = invocation.value("request-id") {
            guard AppleSession.isUUID(given) else { throw CLIError.usage("--request-id '\(given)' is not a UUID") }
            return given.lowercased()
        }
        return RequestIdentifier.derived(from: basis + "|" + (invocation.value("ticket") ?? ""))
    }

    /// Dry run: the exact request. Otherwise: send it (the database must be there first, to record it),
    /// record Apple's answer — or Apple's refusal — in the audit trail, then print the answer.
    static func send(
        _ call: APICall, _ invocation: Invocation, entity: (EntityKind, String), command: String,
        byTransaction: Bool = true, done: (JSONValue?) throws -> ExitCode
    ) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let server: APIServer = session.environment == .sandbox ? .sandbox : .production
        if invocation.flag("dry-run") {
            invocation.print("\(call.method) \(session.api.url(call, server))")
            invocation.print("Authorization: Bearer <ES256 JWT signed with key \(session.keyId), not shown>")
            if let body = call.bodyText {
                invocation.print("Content-Type: application/json")
                invocation.print("")
                invocation.print(body)
            }
            if byTransaction && session.environment == .auto {
                invocation.note("with --environment auto, Sandbox is asked when Production does not know the id")
            }
            invocation.note("dry run: nothing sent, nothing recorded")
            return .success
        }
        let store = try DbOpen.existing(invocation)
        let result: Result<APIAnswer, AppStoreAPIError>
        do {
            // A write Apple refused as unknown in Production changed nothing there: asking Sandbox is safe.
            result = .success(
                byTransaction ? try session.api.send(call, session.environment) : try session.api.send(call, to: server))
        } catch {
            let sandboxTried = byTransaction ? session.environment != .production : session.environment == .sandbox
            result = .failure(session.explained(error, sandboxTried: sandboxTried))
        }
        let answered = (try? result.get().server.rawValue) ?? session.environment.rawValue
        let request = JSONValue.object([
            ("method", .string(call.method)), ("path", .string(call.target)), ("environment", .string(answered)),
            ("body", call.body ?? .null),
        ])
        let response: JSONValue
        switch result {
        case .success(let answer):
            response = .object([("status", .int(Int64(answer.status))), ("body", answer.json ?? .null)])
        case .failure(let error):
            response = .object([
                ("status", error.httpStatus.map { .int(Int64($0)) } ?? .null),
                ("errorCode", error.appleCode.map(JSONValue.int) ?? .null),
                ("errorMessage", .string(error.appleMessage ?? error.message)),
            ])
        }
        let auditId = try store.write { session in
            try session.appendAudit(
                AuditEntry(
                    at: Timestamp.now(), actor: invocation.actor, command: command,
                    reason: invocation.value("reason"), ticket: invocation.value("ticket"), entity: entity.0,
                    key: entity.1, before: nil,
                    after: JSONValue.object([("apple_request", request), ("apple_response", response)]).serialized()))
        }
        invocation.note("recorded as audit row \(auditId)")
        let answer = try result.get()
        var r = Record()
        r.append("audit_id", auditId)
        r.append("http_status", Int64(answer.status))
        for (key, value) in answer.json?.objectMembers ?? [] { r.append(RowRendering.snakeCase(key), value) }
        invocation.emit([r])
        return try done(answer.json)
    }
}
