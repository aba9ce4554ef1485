import AppStoreAPI
import AppStoreJWS

/// `iapctl apple …`: the App Store Server API. This file holds the group, its shared options and the
/// groups of one or two commands (transactions, subscriptions, refunds); each command is its own file
/// beside this one.
enum AppleCommands {
    static let section = "Apple API options"

    /// Options every `apple` command inherits: the key, the server, the trust options for `-o`.
    static let options: [any OptionDeclaration] = [
        keyFileOption, keyIdOption, issuerIdOption, bundleIdOption, environmentOption, maxWaitOption,
        deadlineOption, walkDeadlineOption, maxPagesOption, timeoutOption, connectTimeoutOption, rootCAOption,
        appAppleIdOption, atOption,
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
    static let bundleIdOption = Option<String?>(
        "bundle-id", valueName: "id", help: "The app's bundle id (the token's bid; items of other apps are rejected).",
        environmentVariable: "IAPCTL_BUNDLE_ID", configKey: "bundle-id", isInherited: true,
        section: section)

    /// `--environment`.
    static let environmentOption = Option<APIEnvironment>(
        "environment", valueName: "env",
        help: "Which server to ask: Production, Sandbox, or auto (Production, then Sandbox when Production "
            + "does not know the id, as Apple advises; a contract the database has from Sandbox: Sandbox first).",
        allowedValues: APIEnvironment.allCases.map(\.spelling), configKey: "apple-environment",
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
            + "walk or job runs while Apple answers (a walk in all is bounded by --walk-deadline).",
        environmentVariable: "IAPCTL_APPLE_DEADLINE", configKey: "apple-deadline", defaultValue: "60",
        isInherited: true, section: section, validation: .positiveInteger)

    /// `--walk-deadline`.
    static let walkDeadlineOption = Option<Int>(
        "walk-deadline", valueName: "seconds",
        help: "The longest one paginated walk (transaction, refund or notification history) may take in all, "
            + "every page included; unlike --deadline it does not start afresh with each answer.",
        environmentVariable: "IAPCTL_APPLE_WALK_DEADLINE", configKey: "apple-walk-deadline", defaultValue: "1800",
        isInherited: true, section: section, validation: .positiveInteger)

    /// `--max-pages`.
    static let maxPagesOption = Option<Int>(
        "max-pages", valueName: "n",
        help: "The most pages one paginated walk reads (Apple's pages hold at most 20 items); more stops it "
            + "with exit 65.",
        environmentVariable: "IAPCTL_APPLE_MAX_PAGES", configKey: "apple-max-pages", defaultValue: "10000",
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

    static let transactionArgument = Argument<AppleTransactionId>(
        "transaction", help: "Any transactionId, originalTransactionId or appTransactionId of the customer.")

    static let group = CommandSpec(
        name: "apple",
        abstract: "Ask Apple's App Store Server API: look up orders, fetch history, fill gaps, extend, send data.",
        discussion: """
            Every command signs its requests with your In-App Purchase key (--key-file, --key-id, \
            --issuer-id, --bundle-id; see "Setting up the key" below). By default the signed items Apple \
            returns are printed one per line, ready for 'iapctl notify', 'restore' or 'verify'; with -o \
            table|json|ndjson|csv they are shown decoded, after each one is verified like 'verify' does \
            (an item that does not verify is an error, never shown).

            Retryable errors are retried with backoff; a rate limit (429) is waited out up to --max-wait; \
            without an answer from Apple within --deadline (60 s), retries and waits included, it stops. \
            A paginated walk (transaction, refund and notification history) keeps one page at a time and \
            is bounded whatever Apple answers: an answer larger than 4 MiB, a page that repeats an earlier \
            revision or paginationToken, or more than --max-pages pages (10,000) stop it with exit 65, and \
            it stops with exit 69 when it has taken --walk-deadline (30 minutes) in all. \
            Exit codes: 3 unknown id, 65 Apple refused the request as invalid, 69 Apple or the network \
            unavailable, 75 still rate limited, 78 the key, issuer or bundle id (401).

            Setting up the key, once, in App Store Connect:

              1. Users and Access → Integrations → In-App Purchase:
                 generate a key (the Admin or Account Holder role may).
              2. Download it: AuthKey_KEYID.p8 (App Store Connect lets you
                 download it only once). It signs requests as your team:
                 keep it out of version control, readable by its owner
                 only (chmod 600); iapctl refuses a key file its group or
                 other users can read.
              3. Note the key id (10 characters, shown next to the key;
                 iapctl also reads it from the file name AuthKey_KEYID.p8)
                 and the issuer id (the UUID shown above the list of keys).
              4. The bundle id is the app's (Apps → the app → App
                 Information).

            iapctl reads each setting from an option, the environment or the --config \
            JSON file (the option wins over the environment, the environment over the \
            file); the key itself never goes on the command line:

              key file   --key-file    IAPCTL_APPLE_KEY_FILE   "apple-key-file"
              key id     --key-id      IAPCTL_APPLE_KEY_ID     "apple-key-id"
              issuer id  --issuer-id   IAPCTL_APPLE_ISSUER_ID  "apple-issuer-id"
              bundle id  --bundle-id   IAPCTL_BUNDLE_ID        "bundle-id"
              server     --environment                         "apple-environment"

            'iapctl apple settings' checks them offline: which are set, from where, and \
            whether the key file reads; nothing is sent to Apple. Purchases made in \
            Xcode, TestFlight or with a Sandbox account are on Sandbox: --environment \
            Sandbox (auto asks Production first, then Sandbox).
            """,
        examples: [
            CommandExample("iapctl apple lookup MK5TTTVWJH -o table", "The purchases of a receipt's order ID."),
            CommandExample(
                "iapctl apple notifications history --since 2d | iapctl notify",
                "Fetch the last two days of notifications and apply what was missed."),
        ],
        subcommands: [
            AppleLookup.command, transactions, AppleAppTransaction.command, subscriptions, refunds, AppleNotifications.group,
            AppleExtend.command,
            AppleExtendStatus.command, AppleConsumption.command, AppleSetAppAccountToken.command, AppleFinish.command,
            AppleReconcileCommand.spec, AppleSettingsCommand.command,
        ],
        options: options
    )

    static let transactions = CommandSpec(
        name: "transactions",
        abstract: "A transaction, or a customer's whole transaction history.",
        subcommands: [
            AppleTransactionsGet.command,
            AppleTransactionsHistory.command,
        ])

    static let subscriptions = CommandSpec(
        name: "subscriptions",
        abstract: "The customer's subscriptions as Apple sees them now.",
        subcommands: [
            AppleSubscriptionsStatus.command
        ])

    static let refunds = CommandSpec(
        name: "refunds",
        abstract: "Refunded purchases of a customer.",
        subcommands: [
            AppleRefundsHistory.command
        ])

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

}
