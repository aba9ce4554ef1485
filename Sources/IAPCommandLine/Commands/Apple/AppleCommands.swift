import AppStoreAPI
import AppStoreJWS

/// `iapctl apple …`: the App Store Server API. This file holds the group, its shared options and the
/// read commands (lookup, transactions, subscriptions, refunds); notifications and writes have theirs.
enum AppleCommands {
    static let section = "Apple API options"

    /// Options every `apple` command inherits: the key, the server, the trust options for `-o`.
    static let options: [any OptionDeclaration] = [
        keyFileOption, keyIdOption, issuerIdOption, bundleIdOption, environmentOption, maxWaitOption,
        deadlineOption, timeoutOption, connectTimeoutOption, rootCAOption, appAppleIdOption, atOption,
    ]

    /// `--key-file`.
    static let keyFileOption = Option<String?>(
        "key-file", valueName: "file",
        help: "The In-App Purchase key (.p8) from App Store Connect; only its owner may read it (chmod 600). "
            + "The key itself is never taken from the command line.",
        environmentVariable: "IAPCTL_APPLE_KEY_FILE", configKey: "apple-key-file", isInherited: true,
        section: section, completion: .file)

    /// `--key-id`.
    static let keyIdOption = Option<String?>(
        "key-id", valueName: "id", help: "The key's id (App Store Connect shows it next to the key).",
        environmentVariable: "IAPCTL_APPLE_KEY_ID", configKey: "apple-key-id", isInherited: true,
        section: section)

    /// `--issuer-id`.
    static let issuerIdOption = Option<String?>(
        "issuer-id", valueName: "uuid", help: "Your issuer id (above the keys in App Store Connect).",
        environmentVariable: "IAPCTL_APPLE_ISSUER_ID", configKey: "apple-issuer-id", isInherited: true,
        section: section)

    /// `--bundle-id`.
    static let bundleIdOption = Option<String>(
        "bundle-id", valueName: "id", help: "The app's bundle id (the token's bid; items of other apps are rejected).",
        environmentVariable: "IAPCTL_BUNDLE_ID", configKey: "bundle-id", isInherited: true,
        section: section)

    /// `--environment`.
    static let environmentOption = Option<APIEnvironment>(
        "environment", valueName: "env",
        help: "Which server to ask: production, sandbox, or auto (Production, then Sandbox when Production "
            + "does not know the id, as Apple advises).",
        allowedValues: OptionSpec.choices(APIEnvironment.self), configKey: "apple-environment",
        defaultValue: "auto", isInherited: true, section: section)

    /// `--max-wait`.
    static let maxWaitOption = Option<Int64>(
        "max-wait", valueName: "seconds",
        help: "The longest to wait when Apple's rate limit (429) says when to retry; beyond it iapctl stops "
            + "and says when.",
        configKey: "apple-max-wait", defaultValue: "60", isInherited: true, section: section,
        validation: .positiveInteger)

    /// `--deadline`.
    static let deadlineOption = Option<Int>(
        "deadline", valueName: "seconds",
        help: "The longest iapctl waits for an answer from Apple, every retry, backoff and rate-limit wait "
            + "included; then it stops and says after how many attempts. Each answer starts it afresh, so a long "
            + "walk or job runs while Apple answers.",
        environmentVariable: "IAPCTL_APPLE_DEADLINE", configKey: "apple-deadline", defaultValue: "60",
        isInherited: true, section: section, validation: .positiveInteger)

    /// `--timeout`.
    static let timeoutOption = Option<Int>(
        "timeout", valueName: "seconds", help: "The longest one request may take (within --deadline).", configKey: "apple-timeout",
        defaultValue: "60", isInherited: true, section: section, validation: .positiveInteger)

    /// `--connect-timeout`.
    static let connectTimeoutOption = Option<Int>(
        "connect-timeout", valueName: "seconds", help: "The longest connecting to Apple may take.",
        configKey: "apple-connect-timeout", defaultValue: "10", isInherited: true, section: section,
        validation: .positiveInteger)

    /// `--root-ca`.
    static let rootCAOption = Option<[String]>(
        "root-ca", valueName: "file", help: "With -o: a trusted root for verifying the items, DER or PEM.",
        configKey: "root-ca", defaultDescription: "the built-in Apple Root CA - G3",
        isInherited: true, section: section, completion: .file)

    /// `--app-apple-id`.
    static let appAppleIdOption = Option<Int64?>(
        "app-apple-id", valueName: "n", help: "With -o: the app's Apple id (needed to verify Production items).",
        environmentVariable: "IAPCTL_APP_APPLE_ID", configKey: "app-apple-id", isInherited: true,
        section: section, validation: .positiveInteger)

    /// `--at`.
    static let atOption = Option<TrustConfiguration.ValidationTime>(
        "at", valueName: "when",
        help: "With -o: when the certificate chain must be valid: signed, now, or an ISO-8601 time.",
        configKey: "at", defaultValue: "signed", isInherited: true, section: section,
        completion: .values(["signed", "now"]), validation: .timestamp(keywords: ["signed", "now"]))

    static let transactionArgument = Argument<String>(
        "transaction", help: "Any transactionId, originalTransactionId or appTransactionId of the customer.")

    /// `transactions history --product ID`, repeatable.
    static let productOption = Option<[String]>(
        "product", valueName: "id", help: "Only this product id.")

    /// `transactions history --product-type TYPE`, repeatable.
    static let productTypeOption = Option<[String]>(
        "product-type", valueName: "type", help: "Only this product type.", allowedValues: OptionSpec.choices(AppleChoices.ProductType.self)
    )

    /// `transactions history --since TIME`.
    static let sinceOption = Option<PointInTime?>(
        "since", valueName: "time", help: "Only purchases at or after: ISO-8601, ms, or back from now (36h, 7d).")

    /// `transactions history --until TIME`.
    static let untilOption = Option<PointInTime?>(
        "until", valueName: "time", help: "Only purchases before: ISO-8601, ms, or back from now.")

    /// `transactions history --sort ORDER`.
    static let sortOption = Option<String>(
        "sort", valueName: "order", help: "By modification date.",
        allowedValues: OptionSpec.choices(AppleChoices.SortOrder.self), defaultValue: "ascending")

    /// `transactions history --subscription-group ID`, repeatable.
    static let subscriptionGroupOption = Option<[String]>(
        "subscription-group", valueName: "id", help: "Only this subscription group (subscriptionGroupIdentifier).")

    /// `transactions history --ownership TYPE`.
    static let ownershipOption = Option<String?>(
        "ownership", valueName: "type", help: "Only purchases the customer made, or only those shared by family.",
        allowedValues: OptionSpec.choices(OwnershipTypeName.self))

    /// `transactions history --revoked`.
    static let revokedOption = OptionSpec.flag("revoked", help: "Only revoked (refunded) transactions.")

    /// `transactions history --not-revoked`.
    static let notRevokedOption = OptionSpec.flag("not-revoked", help: "Only transactions not revoked.")

    /// `subscriptions status --status N`, repeatable.
    static let statusOption = Option<[Int]>(
        "status", valueName: "n", help: "Only subscriptions in this status (1–5).",
        allowedValues: OptionSpec.choices(AppleChoices.SubscriptionStatus.self))

    static let group = CommandSpec(
        name: "apple",
        abstract: "Ask Apple's App Store Server API: look up orders, fetch history, fill gaps, extend, send data.",
        discussion: """
            Every command signs its requests with your In-App Purchase key (--key-file, --key-id, \
            --issuer-id, --bundle-id; see README 'Talking to Apple'). By default the signed items Apple \
            returns are printed one per line, ready for 'iapctl notify', 'restore' or 'verify'; with -o \
            table|json|ndjson|csv they are shown decoded, after each one is verified like 'verify' does \
            (an item that does not verify is an error, never shown).

            Retryable errors are retried with backoff; a rate limit (429) is waited out up to --max-wait; \
            without an answer from Apple within --deadline (60 s), retries and waits included, it stops. \
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
            lookup, transactions, appTransaction, subscriptions, refunds, AppleNotifications.group, AppleWrites.extend,
            AppleWrites.extendStatus, AppleWrites.consumption, AppleWrites.setAppAccountToken, AppleFinish.command,
            AppleReconcileCommand.spec,
        ],
        options: options
    )

    /// `lookup ORDER-ID`.
    static let orderIdArgument = Argument<String>(
        "order-id", help: "The order ID from the receipt e-mail (e.g. MK5TTTVWJH).")

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
        arguments: [orderIdArgument],
        handler: runLookup)

    static let transactions = CommandSpec(
        name: "transactions",
        abstract: "A transaction, or a customer's whole transaction history.",
        subcommands: [
            CommandSpec(
                name: "get",
                abstract: "Get Transaction Info: one signed transaction.",
                examples: [CommandExample("iapctl apple transactions get 2000000123456789 -o json", "Decoded.")],
                arguments: [transactionArgument],
                handler: runTransaction),
            CommandSpec(
                name: "history",
                abstract: "Get Transaction History: every transaction of the customer, all pages.",
                examples: [
                    CommandExample(
                        "iapctl apple transactions history 2000000123456789 -o table", "The whole history, decoded."),
                    CommandExample(
                        "iapctl apple transactions history 2000000123456789 --product com.example.pro --revoked",
                        "Only refunded or revoked purchases of one product."),
                    CommandExample(
                        "iapctl apple transactions history 2000000123456789 --subscription-group 21429771 --ownership FAMILY_SHARED",
                        "Only family-shared purchases of one subscription group."),
                ],
                options: [
                    productOption, productTypeOption, subscriptionGroupOption, ownershipOption, sinceOption, untilOption,
                    sortOption, revokedOption, notRevokedOption,
                ],
                arguments: [transactionArgument],
                handler: runHistory),
        ])

    static let appTransaction = CommandSpec(
        name: "app-transaction",
        abstract: "Get App Transaction Info: the customer's signed AppTransaction (their download of the app).",
        discussion: "Its appTransactionId is the same for one Apple Account and app across devices, redownloads "
            + "and refunds (one per family member with Family Sharing). Without -o prints the signed item; -o "
            + "shows it decoded after verification. Exit 3 when Apple has no app transaction for the customer.",
        examples: [
            CommandExample("iapctl apple app-transaction 2000000123456789 -o json", "The customer's AppTransaction, decoded.")
        ],
        arguments: [transactionArgument],
        handler: runAppTransaction)

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
                options: [statusOption],
                arguments: [transactionArgument],
                handler: runStatuses)
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
                handler: runRefunds)
        ])

    static func runLookup(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let orderId = invocation[orderIdArgument]
        let call = Endpoint.lookup(orderId: orderId)
        // Order IDs exist only in Production: auto asks Sandbox only when Production refuses the token.
        let lookup = try OrderLookup(try session.send(call, sandboxOnNotFound: false), call: call)
        guard lookup.isValid else {
            throw CLIError(
                .notFound, "Apple says order ID \(orderId) is invalid (status \(lookup.status.map(String.init) ?? "missing"))",
                hint: "check it against the customer's receipt e-mail (e.g. MK5TTTVWJH); it is not a transactionId")
        }
        let found = lookup.transactions
        try session.emitTransactions(found.items, from: found.server, what: "lookup \(orderId)")
        invocation.note("order ID \(orderId): \(found.items.count) transaction(s) from \(found.server.rawValue)")
        return found.items.isEmpty ? .notFound : .success
    }

    static func runTransaction(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.transaction(invocation[transactionArgument])
        let answer = try session.send(call)
        let jws = try AppStoreServerAPI.requiredString(answer, "signedTransactionInfo", call: call)
        try session.emitTransactions([jws], from: answer.server, what: "transaction")
        return .success
    }

    static func runAppTransaction(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.appTransaction(invocation[transactionArgument])
        let answer = try session.send(call)
        let jws = try AppStoreServerAPI.requiredString(answer, "signedAppTransactionInfo", call: call)
        if session.printsSignedItems {
            invocation.print(jws)
            return .success
        }
        let reports = try session.verified([jws], as: .appTransaction, from: answer.server, what: "app transaction")
        invocation.emit(
            reports.map { report in
                let app = report.appTransaction
                var r = Record()
                r.append("app_transaction_id", app?.appTransactionId)
                r.append("bundle_id", app?.bundleId)
                r.append("app_apple_id", app?.appAppleId)
                r.append("environment", app?.receiptType)
                r.append("original_purchase_date", app?.originalPurchaseDate)
                r.append("original_application_version", app?.originalApplicationVersion)
                r.append("original_platform", app?.originalPlatform)
                r.append("application_version", app?.applicationVersion)
                r.append("preorder_date", app?.preorderDate)
                if invocation.output.isStructured { r.append("payload", report.payload ?? .null) }
                return r
            },
            columns: [
                Column("app_transaction_id", title: "APP_TRANSACTION"), Column("bundle_id", title: "BUNDLE"),
                Column("original_purchase_date", title: "FIRST_DOWNLOAD"),
                Column("original_application_version", title: "FIRST_VERSION"),
                Column("original_platform", title: "PLATFORM"), Column("environment", title: "ENV"),
            ])
        return .success
    }

    static func runHistory(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        var query = TransactionHistoryQuery(
            products: invocation[productOption], productTypes: invocation[productTypeOption], sort: invocation[sortOption],
            subscriptionGroups: invocation[subscriptionGroupOption], ownership: invocation[ownershipOption])
        if let start = invocation[sinceOption] { query.start = start.milliseconds }
        if let end = invocation[untilOption] { query.end = end.milliseconds }
        if invocation.flag(revokedOption) && invocation.flag(notRevokedOption) {
            throw CLIError.usage("--revoked and --not-revoked exclude each other")
        }
        if invocation.flag(revokedOption) { query.revoked = true }
        if invocation.flag(notRevokedOption) { query.revoked = false }
        let call = Endpoint.transactionHistory(invocation[transactionArgument], query: query.items)
        return try walk(session, call, what: "transaction history")
    }

    static func runRefunds(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        return try walk(session, Endpoint.refundHistory(invocation[transactionArgument]), what: "refund history")
    }

    /// All pages of a revision-paginated history, then its items.
    static func walk(_ session: AppleSession, _ call: APICall, what: String) throws -> ExitCode {
        let found = try session.explaining(followsEnvironment: true) { () throws(AppStoreAPIError) in
            try session.api.signedTransactionHistory(call, session.environment) { pages, items in
                session.progress("\(what): page \(pages), \(items) transactions")
            }
        }
        session.endProgress()
        try session.emitTransactions(found.items, from: found.server, what: what)
        session.invocation.note(
            "\(what): \(found.items.count) transaction(s) in \(found.pages) page(s) from \(found.server.rawValue)")
        return .success
    }

    static func runStatuses(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.subscriptionStatuses(
            invocation[transactionArgument], statuses: invocation[statusOption])
        let answer = try session.send(call)
        let rows = try SubscriptionStatusItem.items(answer, call: call)
        if session.printsSignedItems {
            for row in rows { invocation.print(row.transaction) }
        } else {
            var records: [Record] = []
            for verified in try session.verified(rows, from: answer.server, what: "subscription status") {
                let row = verified.item
                let renewal = verified.renewal
                var r = Record()
                r.append("subscription_group_identifier", row.group)
                r.append("status", row.status)
                r.append("status_name", row.status.flatMap { SubscriptionStatusItem.statusNames[$0] })
                r.append("auto_renew", renewal?.renewalInfo?.autoRenewStatus.map { $0 == 1 })
                r.append("auto_renew_product_id", renewal?.renewalInfo?.autoRenewProductId)
                for (key, value) in AppleSession.transactionRecord(verified.transaction, structured: false).fields {
                    r.append(key, value)
                }
                if invocation.output.isStructured {
                    r.append("transaction", verified.transaction.payload ?? .null)
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
}
