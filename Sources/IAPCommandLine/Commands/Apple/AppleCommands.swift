import AppStoreAPI
import AppStoreJWS

/// `iapctl apple …`: the App Store Server API. This file holds the group, its shared options and the
/// read commands (lookup, transactions, subscriptions, refunds); notifications and writes have theirs.
enum AppleCommands {
    static let section = "Apple API options"

    /// Options every `apple` command inherits: the key, the server, the trust options for `-o`.
    static let options: [OptionSpec] = [
        OptionSpec(
            "key-file", valueName: "file",
            help: "The In-App Purchase key (.p8) from App Store Connect; must not be readable by other users. "
                + "The key itself is never taken from the command line.",
            environmentVariable: "IAPCTL_APPLE_KEY_FILE", configKey: "apple-key-file", isInherited: true,
            section: section, completion: .file),
        OptionSpec(
            "key-id", valueName: "id", help: "The key's id (App Store Connect shows it next to the key).",
            environmentVariable: "IAPCTL_APPLE_KEY_ID", configKey: "apple-key-id", isInherited: true,
            section: section),
        OptionSpec(
            "issuer-id", valueName: "uuid", help: "Your issuer id (above the keys in App Store Connect).",
            environmentVariable: "IAPCTL_APPLE_ISSUER_ID", configKey: "apple-issuer-id", isInherited: true,
            section: section),
        OptionSpec(
            "bundle-id", valueName: "id", help: "The app's bundle id (the token's bid; items of other apps are rejected).",
            environmentVariable: "IAPCTL_BUNDLE_ID", configKey: "bundle-id", isRequired: true, isInherited: true,
            section: section),
        OptionSpec(
            "environment", valueName: "env",
            help: "Which server to ask: production, sandbox, or auto (Production, then Sandbox when Production "
                + "does not know the id, as Apple advises).",
            allowedValues: APIEnvironment.allCases.map(\.rawValue), configKey: "apple-environment",
            defaultValue: "auto", isInherited: true, section: section),
        OptionSpec(
            "max-wait", valueName: "seconds",
            help: "The longest to wait when Apple's rate limit (429) says when to retry; beyond it iapctl stops "
                + "and says when.",
            configKey: "apple-max-wait", defaultValue: "60", isInherited: true, section: section,
            validation: .positiveInteger),
        OptionSpec(
            "timeout", valueName: "seconds", help: "The longest one request may take.", configKey: "apple-timeout",
            defaultValue: "60", isInherited: true, section: section, validation: .positiveInteger),
        OptionSpec(
            "connect-timeout", valueName: "seconds", help: "The longest connecting to Apple may take.",
            configKey: "apple-connect-timeout", defaultValue: "10", isInherited: true, section: section,
            validation: .positiveInteger),
        OptionSpec(
            "root-ca", valueName: "file", help: "With -o: a trusted root for verifying the items, DER or PEM.",
            kind: .repeatable, configKey: "root-ca", defaultDescription: "the built-in Apple Root CA - G3",
            isInherited: true, section: section, completion: .file),
        OptionSpec(
            "app-apple-id", valueName: "n", help: "With -o: the app's Apple id (needed to verify Production items).",
            environmentVariable: "IAPCTL_APP_APPLE_ID", configKey: "app-apple-id", isInherited: true,
            section: section, validation: .positiveInteger),
        OptionSpec(
            "at", valueName: "when",
            help: "With -o: when the certificate chain must be valid: signed, now, or an ISO-8601 time.",
            configKey: "at", defaultValue: "signed", isInherited: true, section: section,
            completion: .values(["signed", "now"]), validation: .timestamp(keywords: ["signed", "now"])),
    ]

    static let transactionArgument = ArgumentSpec("transaction", help: "Any transactionId of the customer.")

    static let group = CommandSpec(
        name: "apple",
        abstract: "Ask Apple's App Store Server API: look up orders, fetch history, fill gaps, extend, send data.",
        discussion: """
            Every command signs its requests with your In-App Purchase key (--key-file, --key-id, \
            --issuer-id, --bundle-id; see README 'Talking to Apple'). By default the signed items Apple \
            returns are printed one per line, ready for 'iapctl notify', 'restore' or 'verify'; with -o \
            table|json|ndjson|csv they are shown decoded, after each one is verified like 'verify' does \
            (an item that does not verify is an error, never shown).

            Retryable errors are retried with backoff; a rate limit (429) is waited out up to --max-wait. \
            Exit codes: 3 unknown id, 65 Apple refused the request as invalid, 69 Apple or the network \
            unavailable, 75 still rate limited, 78 the key, issuer or bundle id (401).
            """,
        examples: [
            CommandExample("iapctl apple lookup MK5TTTVWJH -o table", "The purchases of a receipt's order ID."),
            CommandExample(
                "iapctl apple notifications history --since 2d | iapctl notify",
                "Fetch the last two days of notifications and apply what was missed."),
        ],
        subcommands: [
            lookup, transactions, subscriptions, refunds, AppleNotifications.group, AppleWrites.extend,
            AppleWrites.extendStatus, AppleWrites.consumption, AppleWrites.setAppAccountToken,
        ],
        options: options
    )

    static let lookup = CommandSpec(
        name: "lookup",
        abstract: "Turn the order ID of a customer's receipt e-mail into their signed transactions.",
        discussion: "Apple's Look Up Order ID (Production only: with --environment auto, Production is asked). "
            + "Exit 3 when Apple says the order ID is invalid or unknown.",
        examples: [
            CommandExample(
                "iapctl apple lookup MK5TTTVWJH | iapctl restore --user u42", "Which orders the purchase is, for u42."),
            CommandExample("iapctl apple lookup MK5TTTVWJH -o json", "Decoded, after verification."),
        ],
        arguments: [ArgumentSpec("order-id", help: "The order ID from the receipt e-mail (e.g. MK5TTTVWJH).")],
        handlerKey: "apple lookup")

    static let transactions = CommandSpec(
        name: "transactions",
        abstract: "A transaction, or a customer's whole transaction history.",
        subcommands: [
            CommandSpec(
                name: "get",
                abstract: "Get Transaction Info: one signed transaction.",
                examples: [CommandExample("iapctl apple transactions get 2000000123456789 -o json", "Decoded.")],
                arguments: [transactionArgument],
                handlerKey: "apple transactions get"),
            CommandSpec(
                name: "history",
                abstract: "Get Transaction History: every transaction of the customer, all pages.",
                examples: [
                    CommandExample(
                        "iapctl apple transactions history 2000000123456789 -o table", "The whole history, decoded."),
                    CommandExample(
                        "iapctl apple transactions history 2000000123456789 --product com.example.pro --revoked",
                        "Only refunded or revoked purchases of one product."),
                ],
                options: [
                    OptionSpec(
                        "product", valueName: "id", help: "Only this product id.", kind: .repeatable),
                    OptionSpec(
                        "product-type", valueName: "type", help: "Only this product type.", kind: .repeatable,
                        allowedValues: ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"]),
                    OptionSpec(
                        "since", valueName: "time",
                        help: "Only purchases at or after: ISO-8601, ms, or back from now (36h, 7d)."),
                    OptionSpec("until", valueName: "time", help: "Only purchases before: ISO-8601, ms, or back from now."),
                    OptionSpec(
                        "sort", valueName: "order", help: "By modification date.", allowedValues: ["ascending", "descending"],
                        defaultValue: "ascending"),
                    .flag("revoked", help: "Only revoked (refunded) transactions."),
                    .flag("not-revoked", help: "Only transactions not revoked."),
                ],
                arguments: [transactionArgument],
                handlerKey: "apple transactions history"),
        ])

    static let subscriptions = CommandSpec(
        name: "subscriptions",
        abstract: "The customer's subscriptions as Apple sees them now.",
        subcommands: [
            CommandSpec(
                name: "status",
                abstract: "Get All Subscription Statuses: the latest transaction and renewal info of each subscription.",
                discussion: "Without -o prints each subscription's latest signed transaction, one per line; -o shows "
                    + "the status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked) and the decoded "
                    + "transaction and renewal info.",
                examples: [CommandExample("iapctl apple subscriptions status 2000000123456789 -o table", "Now, decoded.")],
                options: [
                    OptionSpec(
                        "status", valueName: "n", help: "Only subscriptions in this status (1–5).", kind: .repeatable,
                        allowedValues: ["1", "2", "3", "4", "5"])
                ],
                arguments: [transactionArgument],
                handlerKey: "apple subscriptions status")
        ])

    static let refunds = CommandSpec(
        name: "refunds",
        abstract: "Refunded purchases of a customer.",
        subcommands: [
            CommandSpec(
                name: "history",
                abstract: "Get Refund History: every refunded transaction of the customer, all pages.",
                examples: [CommandExample("iapctl apple refunds history 2000000123456789 -o table", "Decoded.")],
                arguments: [transactionArgument],
                handlerKey: "apple refunds history")
        ])

    static func handlers() -> [String: CommandHandler] {
        [
            "apple lookup": runLookup,
            "apple transactions get": runTransaction,
            "apple transactions history": runHistory,
            "apple subscriptions status": runStatuses,
            "apple refunds history": runRefunds,
        ]
    }

    static func runLookup(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let orderId = invocation.arguments[0]
        let call = Endpoint.lookup(orderId: orderId)
        // Order IDs exist only in Production: auto asks Sandbox only when Production refuses the token.
        let answer = try session.send(call, sandboxOnNotFound: false)
        let status = answer.json?["status"]?.int64Value
        let items = try strings(answer.json?["signedTransactions"], call: call, optional: status == 1)
        guard status == 0 else {
            throw CLIError(
                .notFound, "Apple says order ID \(orderId) is invalid (status \(status.map(String.init) ?? "missing"))",
                hint: "check it against the customer's receipt e-mail (e.g. MK5TTTVWJH); it is not a transactionId")
        }
        try session.emitTransactions(items, from: answer.server, what: "lookup \(orderId)")
        invocation.note("order ID \(orderId): \(items.count) transaction(s) from \(answer.server.rawValue)")
        return items.isEmpty ? .notFound : .success
    }

    static func runTransaction(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.transaction(invocation.arguments[0])
        let answer = try session.send(call)
        guard let jws = answer.json?["signedTransactionInfo"]?.stringValue else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no signedTransactionInfo")
        }
        try session.emitTransactions([jws], from: answer.server, what: "transaction")
        return .success
    }

    static func runHistory(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        var query: [(String, String)] = []
        let now = Timestamp.now()
        if let since = invocation.value("since") {
            query.append(("startDate", String(try AuditTime.parse(since, option: "since", now: now))))
        }
        if let until = invocation.value("until") {
            query.append(("endDate", String(try AuditTime.parse(until, option: "until", now: now))))
        }
        query += invocation.values("product").map { ("productId", $0) }
        query += invocation.values("product-type").map { ("productType", $0) }
        query.append(("sort", (invocation.value("sort") ?? "ascending").uppercased()))
        if invocation.flag("revoked") && invocation.flag("not-revoked") {
            throw CLIError.usage("--revoked and --not-revoked exclude each other")
        }
        if invocation.flag("revoked") { query.append(("revoked", "true")) }
        if invocation.flag("not-revoked") { query.append(("revoked", "false")) }
        let call = Endpoint.transactionHistory(invocation.arguments[0], query: query)
        return try walk(session, call, what: "transaction history")
    }

    static func runRefunds(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        return try walk(session, Endpoint.refundHistory(invocation.arguments[0]), what: "refund history")
    }

    /// All pages of a revision-paginated history, then its items.
    static func walk(_ session: AppleSession, _ call: APICall, what: String) throws -> ExitCode {
        let (server, pages) = try session.explaining(followsEnvironment: true) { () throws(AppStoreAPIError) in
            try session.api.walkRevisions(call, session.environment) { pages, items in
                session.progress("\(what): page \(pages), \(items) transactions")
            }
        }
        session.endProgress()
        var items: [String] = []
        for page in pages { items += try strings(page["signedTransactions"], call: call, optional: false) }
        try session.emitTransactions(items, from: server, what: what)
        session.invocation.note("\(what): \(items.count) transaction(s) in \(pages.count) page(s) from \(server.rawValue)")
        return .success
    }

    static func runStatuses(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.subscriptionStatuses(
            invocation.arguments[0], statuses: invocation.values("status").compactMap { Int($0) })
        let answer = try session.send(call)
        guard case .array(let groups)? = answer.json?["data"] else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no data array")
        }
        var rows: [(group: String?, status: Int64?, original: String?, tx: String, renewal: String?)] = []
        for group in groups {
            guard case .array(let last)? = group["lastTransactions"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): a data item has no lastTransactions array")
            }
            for item in last {
                guard let tx = item["signedTransactionInfo"]?.stringValue else {
                    throw AppStoreAPIError(.malformedResponse, "\(call.path): a lastTransactions item has no signedTransactionInfo")
                }
                rows.append(
                    (
                        group["subscriptionGroupIdentifier"]?.stringValue, item["status"]?.int64Value,
                        item["originalTransactionId"]?.stringValue, tx, item["signedRenewalInfo"]?.stringValue
                    ))
            }
        }
        if session.printsSignedItems {
            for row in rows { invocation.print(row.tx) }
        } else {
            let what = "subscription status"
            let transactions = try session.verified(rows.map(\.tx), as: .transaction, from: answer.server, what: what)
            let renewals = try session.verified(
                rows.compactMap(\.renewal), as: .renewalInfo, from: answer.server, what: what + " renewal info")
            var renewalIndex = 0
            var records: [Record] = []
            for (row, report) in zip(rows, transactions) {
                var r = Record()
                r.append("subscription_group_identifier", row.group)
                r.append("status", row.status)
                r.append("status_name", row.status.flatMap { statusNames[$0] })
                var renewal: VerificationReport?
                if row.renewal != nil {
                    renewal = renewals[renewalIndex]
                    renewalIndex += 1
                }
                r.append("auto_renew", renewal?.renewalInfo?.autoRenewStatus.map { $0 == 1 })
                r.append("auto_renew_product_id", renewal?.renewalInfo?.autoRenewProductId)
                for (key, value) in AppleSession.transactionRecord(report, structured: false).fields { r.append(key, value) }
                if invocation.output.isStructured {
                    r.append("transaction", report.payload ?? .null)
                    r.append("renewal", renewal?.payload ?? .null)
                }
                records.append(r)
            }
            invocation.emit(
                records,
                columns: [
                    Column("original_transaction_id", title: "ORIGINAL"), Column("product_id", title: "PRODUCT"),
                    Column("status_name", title: "STATUS"), Column("expires_date", title: "EXPIRES"),
                    Column("auto_renew", title: "AUTO_RENEW"), Column("transaction_id", title: "LATEST"),
                    Column("environment", title: "ENV"),
                ])
        }
        invocation.note("\(rows.count) subscription(s) from \(answer.server.rawValue)")
        return rows.isEmpty ? .notFound : .success
    }

    static let statusNames: [Int64: String] = [
        1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked",
    ]

    /// A JSON array of strings (Apple's signed… lists).
    static func strings(_ value: JSONValue?, call: APICall, optional: Bool) throws -> [String] {
        guard let value, case .array(let list) = value else {
            if optional { return [] }
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no signedTransactions array")
        }
        let items = list.compactMap(\.stringValue)
        guard items.count == list.count else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): signedTransactions holds a non-string")
        }
        return items
    }
}
