import AppStoreJWS
import SubscriptionEngine

/// The whole `iapctl` command line as data: every command, option, argument and help text.
///
/// Parsing, `--help`, usage errors, shell completions and man pages all come from this tree;
/// handlers are looked up by each command's `handlerKey` in `CommandHandlers.standard()`.
public enum CommandTree {
    /// The program's version, printed by `iapctl --version`.
    public static let version = "0.1.0"

    /// Order statuses (`orders.status`).
    public static let orderStatuses = OrderStatus.allCases.map(\.rawValue)
    /// Member contract statuses (`member_contracts.status`).
    public static let contractStatuses = ContractStatus.allCases.map(\.rawValue)
    /// App Store environments a payload may come from.
    public static let environments = EnvironmentName.allCases.map(\.rawValue)
    /// Restore policies.
    public static let restorePolicies = ["keep", "transfer", "transfer-if-inactive"]
    /// Shells `completion` writes scripts for.
    public static let shells = ["bash", "zsh", "fish"]

    /// Options of every command that touches data (inherited from the root).
    public static let globalOptions: [OptionSpec] = [
        OptionSpec(
            "db", valueName: "url",
            help: "The database: a path or sqlite:PATH for SQLite, or mysql://USER@HOST[:PORT]/NAME[?socket=PATH] "
                + "for MySQL/MariaDB (its password only from IAPCTL_DB_PASSWORD or an option file, never argv).",
            environmentVariable: "IAPCTL_DB", configKey: "db", defaultValue: "iapctl.db", isInherited: true,
            section: "Global options", completion: .file),
        OptionSpec(
            "output", short: "o", valueName: "format",
            help: "How to print results: aligned table, one JSON document, one JSON object per line, or CSV.",
            allowedValues: OutputFormat.allCases.map(\.rawValue), configKey: "output", defaultValue: "table",
            isInherited: true, section: "Global options"),
        .flag(
            "quiet", short: "q", help: "Print less on stderr: only errors.", isInherited: true,
            section: "Global options"),
        .flag(
            "verbose", short: "v", help: "Print more on stderr: each step and where settings came from.",
            isInherited: true, section: "Global options"),
        OptionSpec(
            "config", valueName: "file",
            help: "A JSON file of settings keyed by long option name, e.g. {\"db\": \"…\", \"bundle-id\": \"…\"}; "
                + "flags win over the environment, the environment over the file.",
            environmentVariable: "IAPCTL_CONFIG", isInherited: true, section: "Global options", completion: .file),
        OptionSpec(
            "actor", valueName: "name", help: "Who the audit trail records for manual changes.",
            environmentVariable: "IAPCTL_ACTOR", configKey: "actor", defaultDescription: "the OS user",
            isInherited: true, section: "Global options"),
        .flag(
            "redact",
            help: "Mask user ids, order numbers, tokens, transaction and contract ids in the output (the same "
                + "value the same way within one run), to paste it into a ticket.",
            configKey: "redact", isInherited: true, section: "Global options"),
        .flag(
            "no-color",
            help: "Never colour the output (colour is used only on a terminal, without NO_COLOR and not with "
                + "TERM=dumb).",
            configKey: "no-color", isInherited: true, section: "Global options"),
        .flag(
            "wide",
            help: "Never cut table cells. Tables are cut (with …) only to fit a terminal's width; in a file or a "
                + "pipe they are always whole.",
            configKey: "wide", isInherited: true, section: "Global options"),
        .flag(
            "csv-raw",
            help: "With -o csv, write cells as they are. By default a text cell starting with =, +, -, @, tab or CR "
                + "gets a leading ' so a spreadsheet does not run it as a formula (numbers are never changed).",
            configKey: "csv-raw", isInherited: true, section: "Global options"),
    ]

    /// How `notify`, `verify` and `restore` decide what to trust.
    public static let trustOptions: [OptionSpec] = [
        OptionSpec(
            "root-ca", valueName: "file", help: "A trusted root certificate, DER or PEM.", kind: .repeatable,
            configKey: "root-ca", defaultDescription: "the built-in Apple Root CA - G3", section: "Trust options",
            completion: .file),
        OptionSpec(
            "bundle-id", valueName: "id", help: "The app's bundle id; payloads of other apps are rejected.",
            environmentVariable: "IAPCTL_BUNDLE_ID", configKey: "bundle-id", isRequired: true,
            section: "Trust options"),
        OptionSpec(
            "app-apple-id", valueName: "n", help: "The app's Apple id; required when Production is accepted.",
            environmentVariable: "IAPCTL_APP_APPLE_ID", configKey: "app-apple-id", section: "Trust options",
            validation: .positiveInteger),
        OptionSpec(
            "environment", valueName: "env",
            help: "An accepted environment. Xcode and LocalTesting only when asked for; their unsigned data is "
                + "then accepted with a warning.",
            kind: .repeatable, allowedValues: environments, configKey: "environment", defaultValue: "Production",
            section: "Trust options"),
        OptionSpec(
            "at", valueName: "when",
            help: "When the certificate chain must be valid: the payload's signedDate (a receipt's creation "
                + "date) (signed), now, or an ISO-8601 time.",
            configKey: "at", defaultValue: "signed", section: "Trust options", completion: .values(["signed", "now"]),
            validation: .timestamp(keywords: ["signed", "now"])),
    ]

    /// `verify` and `restore` also read StoreKit 1 app receipts.
    public static let receiptOptions: [OptionSpec] = [
        OptionSpec(
            "receipt-root-ca", valueName: "file",
            help: "A trusted root for StoreKit 1 app receipts, DER or PEM. Give Xcode's StoreKit test "
                + "certificate here to accept Xcode receipts (with --environment Xcode).",
            kind: .repeatable, configKey: "receipt-root-ca", defaultDescription: "the built-in Apple Inc. Root",
            section: "Trust options", completion: .file)
    ]

    static let dryRun = OptionSpec.flag("dry-run", help: "Show what would change; write nothing.")

    static func userOption(_ help: String, required: Bool = false) -> OptionSpec {
        OptionSpec("user", valueName: "user", help: help, isRequired: required)
    }

    static let limitOption = OptionSpec(
        "limit", valueName: "n", help: "Show at most this many rows.", validation: .positiveInteger)

    static func fromOption(_ help: String) -> OptionSpec {
        OptionSpec("from", valueName: "file", help: help + " '-' reads stdin.", completion: .file)
    }

    static let reasonOption = OptionSpec(
        "reason", valueName: "text", help: "Why: recorded in the audit trail with the actor and the change.",
        isRequired: true)

    static let ticketOption = OptionSpec(
        "ticket", valueName: "id", help: "A support ticket or incident id, recorded with the change.")

    static let asOfOption = OptionSpec(
        "as-of", valueName: "time",
        help: "Show the state at this moment, reconstructed from the audit trail dated by the ledger: "
            + "ISO-8601, ms, or back from now (36h, 7d).")

    /// The root of the tree.
    public static let root = CommandSpec(
        name: "iapctl",
        abstract: "App Store in-app purchase operations: orders, subscriptions, notifications.",
        discussion: """
            iapctl keeps orders (one per payment) and member contracts (one per auto-renewing \
            subscription) in a database, applies App Store Server Notifications V2, verifies the \
            signed transactions apps send, and answers restore questions. Every JWS received is \
            kept in a ledger and every manual change is audited, so nothing is lost.

            Start with 'iapctl db init', then 'iapctl orders create' when a user starts a purchase, \
            and feed Apple's notifications to 'iapctl notify'.
            """,
        examples: [
            CommandExample("iapctl db init --db sqlite:shop.db", "Create the database shop.db."),
            CommandExample(
                "iapctl orders create --user u42 --product com.example.pro.monthly",
                "Start a purchase; prints the order number to pass to StoreKit as appAccountToken."),
            CommandExample(
                "iapctl notify --bundle-id com.example.app --app-apple-id 1234567890 < body.json",
                "Apply a notification Apple posted to your webhook."),
        ],
        subcommands: [
            db, orders, contracts, notify, verify, restore, entitled, audit, doctor, AppleCommands.group, completion,
            help, versionCommand, man,
        ],
        options: globalOptions + [.flag("version", help: "Print the version and exit.")]
    )

    static let db = CommandSpec(
        name: "db",
        abstract: "Create, migrate and inspect the database.",
        discussion: "The database is chosen with --db (or IAPCTL_DB, or 'db' in --config); by default iapctl.db "
            + "in the current folder.",
        examples: [
            CommandExample("iapctl db init", "Create iapctl.db here, or migrate it to the current schema."),
            CommandExample("iapctl db status -o json", "The schema version and row counts as JSON."),
        ],
        subcommands: [
            CommandSpec(
                name: "init",
                abstract: "Create the schema or migrate it to the current version (safe to run again).",
                discussion: "Applies the migrations the database has not seen yet, in order, each in its own "
                    + "transaction. Running it on an up-to-date database changes nothing.",
                examples: [
                    CommandExample("iapctl db init", "Create or migrate iapctl.db in the current folder."),
                    CommandExample(
                        "iapctl db init --db sqlite:/var/lib/iapctl/shop.db --dry-run",
                        "List the migrations that would run, without running them."),
                ],
                options: [OptionSpec.flag("dry-run", help: "List the migrations that would run; run none.")],
                handlerKey: "db init"),
            CommandSpec(
                name: "status",
                abstract: "Show the schema version and the number of rows in each table.",
                examples: [
                    CommandExample("iapctl db status", "Version and row counts as a table."),
                    CommandExample("iapctl db status -o json --db sqlite:shop.db", "The same for shop.db, as JSON."),
                ],
                handlerKey: "db status"),
        ]
    )

    static let orders = CommandSpec(
        name: "orders",
        abstract: "Create, list, inspect and correct orders (one row per payment).",
        discussion: "An order's number (a UUID) is what the app passes to StoreKit as appAccountToken; Apple "
            + "echoes it in every transaction of that purchase, which is how notifications find the order.",
        examples: [
            CommandExample("iapctl orders list --user u42", "Every order of user u42."),
            CommandExample("iapctl orders show 2000000123456789", "An order by its Apple transactionId."),
        ],
        subcommands: [
            CommandSpec(
                name: "create",
                abstract: "Create a pending order and print its order number.",
                discussion: """
                    Prints the new order number alone on stdout, so scripts can capture it. The app \
                    passes it to StoreKit 2 as appAccountToken; the order becomes paid when Apple's \
                    notification (or the app's verified transaction) arrives.

                    With --from, creates one order per NDJSON line {"user": "…", "product": "…"} (an \
                    optional "no" imports an existing order number; CSV with a header line works too) and \
                    prints one number per line, in input order. A bad row creates nothing.
                    """,
                examples: [
                    CommandExample(
                        "iapctl orders create --user u42 --product com.example.pro.monthly",
                        "One pending order; prints its number."),
                    CommandExample(
                        "printf '{\"user\":\"u1\",\"product\":\"p\"}\\n' | iapctl orders create --from -",
                        "Orders from NDJSON on stdin, one number per line."),
                ],
                options: [
                    userOption("The user who buys (your account id)."),
                    OptionSpec("product", valueName: "product", help: "The App Store product id."),
                    OptionSpec(
                        "no", valueName: "no",
                        help: "Use this order number instead of a new UUID (to import existing orders)."),
                    fromOption(
                        "Create one order per NDJSON line {\"user\", \"product\"[, \"no\"]} (or CSV row with a "
                            + "header user,product[,no]) of this file; all or nothing."),
                ],
                handlerKey: "orders create"),
            CommandSpec(
                name: "list",
                abstract: "List orders, newest first.",
                examples: [
                    CommandExample("iapctl orders list --status paid --limit 20", "The 20 newest paid orders."),
                    CommandExample("iapctl orders list --user u42 -o csv > u42.csv", "A user's orders as CSV."),
                ],
                options: [
                    userOption("Only this user's orders."),
                    OptionSpec(
                        "status", valueName: "status", help: "Only orders in this status.",
                        allowedValues: orderStatuses),
                    OptionSpec("product", valueName: "product", help: "Only orders of this product id."),
                    limitOption, asOfOption,
                ],
                handlerKey: "orders list"),
            CommandSpec(
                name: "show",
                abstract: "Show an order, its contract and its history.",
                discussion: "KEY may be the order number, the Apple transactionId or the originalTransactionId "
                    + "(which shows every order of that subscription). The history lists the notifications "
                    + "and manual corrections, with actor and reason.",
                examples: [
                    CommandExample("iapctl orders show 6f1c2d9e-4b7a-4c1e-9a51-0b6f7d3e2a10", "By order number."),
                    CommandExample("iapctl orders show 2000000123456789 -o json", "By transactionId, as JSON."),
                ],
                arguments: [ArgumentSpec("key", help: "Order number, transactionId or originalTransactionId.")],
                handlerKey: "orders show"),
            CommandSpec(
                name: "update",
                abstract: "Correct an order by hand (audited).",
                discussion: """
                    Changes one order (KEY: order number or transactionId) or, with --from, many: \
                    NDJSON rows {"no" or "trade_no", field: value…} or CSV with a header line. Fields: \
                    status, user_id, product_id, expires_date (ms or ISO-8601), trade_no, origin_no; \
                    a row with "no" may set trade_no; "reason" and "ticket" override the options for \
                    that row. In NDJSON null (on the command line "") clears expires_date, trade_no or \
                    origin_no; an empty CSV cell leaves the field as it is.

                    A batch is all-or-nothing: one bad row (unknown order, bad value) changes nothing \
                    and the error names its line. Each change is recorded with the actor, the reason, \
                    the ticket and the values before and after; a change to nothing is not recorded.
                    """,
                examples: [
                    CommandExample(
                        "iapctl orders update 2000000123456789 --status refunded --reason 'refund by support' --ticket T-118",
                        "Mark an order refunded."),
                    CommandExample(
                        "iapctl orders update --from fixes.csv --reason 'import fix' --dry-run",
                        "Show what a batch would change, without writing."),
                ],
                options: [
                    OptionSpec("status", valueName: "status", help: "The new status.", allowedValues: orderStatuses),
                    OptionSpec("user", valueName: "user", help: "Move the order to this user."),
                    OptionSpec("product", valueName: "product", help: "The corrected product id."),
                    OptionSpec(
                        "expires", valueName: "time", help: "The new expiry, ISO-8601 (e.g. 2025-12-31T00:00:00Z).",
                        validation: .timestamp(keywords: [])),
                    OptionSpec("trade-no", valueName: "id", help: "The Apple transactionId; '' clears it."),
                    OptionSpec("origin-no", valueName: "id", help: "The Apple originalTransactionId; '' clears it."),
                    reasonOption, ticketOption,
                    fromOption("Apply the corrections of this NDJSON or CSV file (all or nothing)."),
                    dryRun,
                ],
                arguments: [
                    ArgumentSpec("key", help: "Order number or transactionId (leave out with --from).", isOptional: true)
                ],
                handlerKey: "orders update"),
        ]
    )

    static let contracts = CommandSpec(
        name: "contracts",
        abstract: "List, inspect and correct member contracts (one per auto-renewing subscription).",
        discussion: "A contract's id is the subscription's originalTransactionId, stable across renewals.",
        examples: [
            CommandExample("iapctl contracts list --status billing_retry", "Subscriptions Apple cannot charge."),
            CommandExample("iapctl contracts show 2000000100000001", "A contract and its event timeline."),
        ],
        subcommands: [
            CommandSpec(
                name: "list",
                abstract: "List member contracts.",
                examples: [
                    CommandExample("iapctl contracts list --user u42", "A user's subscriptions."),
                    CommandExample(
                        "iapctl contracts list --status active -o ndjson", "Active ones, one JSON per line."),
                ],
                options: [
                    userOption("Only this user's contracts."),
                    OptionSpec(
                        "status", valueName: "status", help: "Only contracts in this status.",
                        allowedValues: contractStatuses),
                    limitOption,
                ],
                handlerKey: "contracts list"),
            CommandSpec(
                name: "show",
                abstract: "Show a contract, its orders and its event timeline with each event's verdict.",
                examples: [
                    CommandExample("iapctl contracts show 2000000100000001", "As sections of a table."),
                    CommandExample("iapctl contracts show 2000000100000001 -o json", "As one JSON document."),
                    CommandExample(
                        "iapctl contracts show 2000000100000001 --as-of 2025-03-14T09:30:00Z",
                        "The contract as it was then, and whether it entitled its user."),
                ],
                options: [asOfOption],
                arguments: [ArgumentSpec("id", help: "The contract id (the originalTransactionId).")],
                handlerKey: "contracts show"),
            CommandSpec(
                name: "explain",
                abstract: "Explain why a contract is in its state: the derivation, event by event.",
                discussion: """
                    First, which signed fact (signed when, from Apple, the app or a restore) decides \
                    each field: the engine's own derivation of the kept facts. Then lists every \
                    ledger event of the contract in signedDate order with the rule that \
                    fired (type/subtype → transition), the state before and after, and why an event \
                    changed nothing (duplicate, stale against which newer event, ignored type), with \
                    the manual changes in between, ending in the current state. Readable in a \
                    ticket; -o json for scripts.
                    """,
                examples: [
                    CommandExample("iapctl contracts explain 2000000100000001", "The derivation as a table."),
                    CommandExample("iapctl contracts explain 2000000100000001 -o json", "As one JSON document."),
                ],
                arguments: [ArgumentSpec("id", help: "The contract id (the originalTransactionId).")],
                handlerKey: "contracts explain"),
            CommandSpec(
                name: "update",
                abstract: "Correct a contract by hand (audited).",
                discussion: "Changes the status, the auto-renew flag or the expiry of one contract. The change is "
                    + "recorded with the actor, the reason, the ticket and the values before and after; a change "
                    + "to nothing is not recorded.",
                examples: [
                    CommandExample(
                        "iapctl contracts update 2000000100000001 --status revoked --reason 'chargeback'",
                        "Revoke a subscription."),
                    CommandExample(
                        "iapctl contracts update 2000000100000001 --expires 2025-12-31T00:00:00Z --reason 'goodwill' --dry-run",
                        "Show an extension without writing it."),
                ],
                options: [
                    OptionSpec("status", valueName: "status", help: "The new status.", allowedValues: contractStatuses),
                    reasonOption, ticketOption,
                    OptionSpec(
                        "auto-renew", valueName: "on|off", help: "Turn the auto-renew flag on or off.",
                        allowedValues: ["on", "off"]),
                    OptionSpec(
                        "expires", valueName: "time", help: "The new expiry, ISO-8601 (e.g. 2025-12-31T00:00:00Z).",
                        validation: .timestamp(keywords: [])),
                    dryRun,
                ],
                arguments: [ArgumentSpec("id", help: "The contract id (the originalTransactionId).")],
                handlerKey: "contracts update"),
        ]
    )

    static let inputFile = ArgumentSpec(
        "file", help: "Where to read from; stdin when left out or '-'.", isOptional: true, completion: .file)

    static let notify = CommandSpec(
        name: "notify",
        abstract: "Apply App Store Server Notifications V2.",
        discussion: """
            Reads a raw JWS, a webhook body {"signedPayload": "…"}, or many of either one per line, \
            from FILE or stdin. Each is verified (signature, certificate chain, bundle id, app id, \
            environment), kept in the ledger, and applied through the subscription engine.

            Each item gets a verdict: applied, duplicate, stale, ignored, unmatched or rejected. \
            A single item exits with its code; a batch exits 0, or 1 if some item failed.
            """,
        examples: [
            CommandExample(
                "iapctl notify body.json --bundle-id com.example.app --app-apple-id 1234567890",
                "Apply one webhook body."),
            CommandExample(
                "iapctl notify --environment Sandbox -o ndjson < notifications.ndjson",
                "Apply many Sandbox notifications; one result object per line."),
            CommandExample("iapctl notify --replay-unmatched", "Retry unmatched notifications after creating orders."),
            CommandExample(
                "iapctl notify --gap-report history.json --apply", "Apply what Apple sent but never reached us."),
        ],
        options: [
            dryRun,
            .flag("atomic", help: "Apply the whole batch in one transaction: all items or none."),
            .flag("replay-unmatched", help: "Apply again the notifications kept as unmatched in the ledger."),
            OptionSpec(
                "gap-report", valueName: "file",
                help: "Report the notifications in these saved Get Notification History responses that the "
                    + "ledger never applied, with Apple's send attempts (exit 1 when some are missing).",
                completion: .file),
            .flag("apply", help: "With --gap-report: replay exactly the missing notifications."),
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handlerKey: "notify"
    )

    static let verify = CommandSpec(
        name: "verify",
        abstract: "Verify and decode any App Store JWS or StoreKit 1 app receipt; optionally apply a transaction.",
        discussion: """
            Detects what the JWS is (notification, transaction or renewal info), prints each \
            check it passed or failed and the decoded payload. With --apply, a transaction the \
            app sent is run through the subscription engine (the client verification path): \
            whichever of the app and Apple arrives second finds the work already done.

            A StoreKit 1 app receipt (base64 or DER, or a verifyReceipt body {"receipt-data": "…"}) \
            is verified offline: its PKCS#7 signature, the chain to Apple Inc. Root at the \
            receipt's creation date with Apple's OIDs, the bundle id and the receipt type. A \
            receipt proves what was paid when it was signed, and no more: it cannot show renewals \
            after that, refunds or revocations made later, or family sharing. With --apply each \
            in-app entry is a lower-authority client submission: it records payments and extends \
            expiry dates, but never revokes, expires or reopens a state Apple set; Apple's \
            notifications do that.
            """,
        examples: [
            CommandExample(
                "iapctl verify transaction.jws --bundle-id com.example.app --environment Sandbox",
                "Check a transaction and show its fields."),
            CommandExample(
                "iapctl verify --apply --bundle-id com.example.app --app-apple-id 1234567890 < tx.jws",
                "Record the app's purchase before Apple's notification arrives."),
            CommandExample(
                "iapctl verify receipt.b64 --bundle-id com.example.app --environment Sandbox",
                "Check a StoreKit 1 app receipt and list its in-app purchases."),
        ],
        options: [
            .flag("apply", help: "Run the transaction (or each in-app entry of a receipt) through the subscription engine."),
            dryRun,
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handlerKey: "verify"
    )

    static let restore = CommandSpec(
        name: "restore",
        abstract: "Say which orders a device's restored transactions are, and whether they belong to a user.",
        discussion: """
            Reads the transactions (one JWS per line) a device restored for user U and reports \
            for each: which order or contract it is, how it matched (transactionId, \
            originalTransactionId, appAccountToken), and a verdict: restorable, owned-by-other, \
            transferred, unknown or rejected. A purchase is never credited to another account \
            unless --policy allows a transfer.

            A StoreKit 1 app receipt (base64, DER or {"receipt-data": "…"}) works too: after it \
            verifies, each of its in-app entries is answered like a transaction (a receipt has no \
            appAccountToken, so it matches by transactionId, originalTransactionId or the \
            product fallback). A receipt proves what was paid when it was signed, not renewals, \
            refunds or family sharing after that; with --apply it never revokes, expires or \
            reopens a state Apple set.
            """,
        examples: [
            CommandExample(
                "iapctl restore --user u42 restored.txt --bundle-id com.example.app",
                "Report only."),
            CommandExample(
                "iapctl restore --user u42 --apply --policy transfer-if-inactive --reason 'new phone' < restored.txt",
                "Apply, moving subscriptions whose owner has no active contract."),
        ],
        options: [
            userOption("The user the device belongs to.", required: true),
            .flag("apply", help: "Apply restorable transactions through the subscription engine."),
            OptionSpec(
                "policy", valueName: "policy",
                help: "Transactions owned by another user: keep them there, transfer them, or transfer only "
                    + "when the other user is not entitled now (a canceled contract inside its paid period is active).",
                allowedValues: restorePolicies, defaultValue: "keep"),
            OptionSpec("reason", valueName: "text", help: "Why, for the audit trail (needed for transfers)."),
            OptionSpec("order", valueName: "no", help: "Only consider this order number."),
            dryRun,
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handlerKey: "restore"
    )

    static let audit = CommandSpec(
        name: "audit",
        abstract: "Read the audit trail and undo a mistaken change.",
        discussion: """
            Every change to an order or a contract is audited: manual corrections (orders update, \
            contracts update, restore transfers, audit undo) and the engine's changes (notify, \
            verify --apply) alike, with the actor, the reason, the ticket and the row before and after.
            """,
        examples: [
            CommandExample("iapctl audit list --actor sam --since 7d", "What sam changed in the last week."),
            CommandExample("iapctl audit undo 118 --reason 'wrong order' --ticket T-77", "Revert audit row 118."),
        ],
        subcommands: [
            CommandSpec(
                name: "list",
                abstract: "List audit rows, newest first.",
                discussion: "On this command --actor filters by who made the change (it is not who runs iapctl).",
                examples: [
                    CommandExample("iapctl audit list --ticket T-118", "Everything done under ticket T-118."),
                    CommandExample(
                        "iapctl audit list --since 2025-06-01T00:00:00Z -o ndjson", "Changes since June, as NDJSON."),
                    CommandExample("iapctl audit list --user alice", "Every change to alice's orders and contracts."),
                    CommandExample(
                        "iapctl audit list --contract 2000000900000001 --command notify",
                        "What notifications changed on one subscription."),
                ],
                options: [
                    OptionSpec(
                        "since", valueName: "time",
                        help: "Only rows at or after this time: ISO-8601, ms, or back from now (36h, 7d)."),
                    OptionSpec("ticket", valueName: "id", help: "Only rows recorded with this ticket."),
                    OptionSpec(
                        "user", valueName: "user",
                        help: "Only changes to this user's orders and contracts (also those moved to or from them)."),
                    OptionSpec(
                        "order", valueName: "key",
                        help: "Only changes to this order (its number or its transactionId)."),
                    OptionSpec("contract", valueName: "id", help: "Only changes to this contract."),
                    OptionSpec(
                        "command", valueName: "name",
                        help: "Only changes made by this command (notify, orders update, audit undo, …; a prefix)."),
                    limitOption,
                ],
                handlerKey: "audit list"),
            CommandSpec(
                name: "show",
                abstract: "Show one audit row: who, when, why, the field changes, the row before and after.",
                examples: [CommandExample("iapctl audit show 118", "Audit row 118.")],
                arguments: [ArgumentSpec("id", help: "The audit row id (ID column of audit list).")],
                handlerKey: "audit show"),
            CommandSpec(
                name: "raw",
                abstract: "Print a ledger item exactly as it was received: the same bytes, no newline added.",
                discussion: """
                    The ledger keeps every received JWS or webhook body in a compact form (each certificate \
                    chain stored once, a re-delivery as a reference to its first copy); this rebuilds the \
                    original bytes (for an app receipt's later entries: the receipt they came with). ID is \
                    the ledger_id of audit show, contracts explain or the verdict output. On a terminal, \
                    control characters are shown escaped; redirect to get the bytes.
                    """,
                examples: [
                    CommandExample("iapctl audit raw 42 > item42.jws", "The JWS of ledger item 42, byte for byte.")
                ],
                arguments: [ArgumentSpec("id", help: "The ledger item id (ledger_id).")],
                handlerKey: "audit raw"),
            CommandSpec(
                name: "undo",
                abstract: "Put back what an audited change replaced (itself audited).",
                discussion: """
                    Plans the inverse of audit row ID: each field it changed gets its earlier value \
                    back, through the same audited correction as orders/contracts update. A change \
                    the engine made for one notification (an order and its contract together) is \
                    undone as a whole change set or not at all. Refused with exit 4 when a row \
                    changed since (the undo would silently discard that later change), when a row \
                    was created by that change, when it changed a field that cannot be set by hand, \
                    or when it was already undone (the message names the undo's audit row). \
                    --dry-run shows the plan and writes nothing.
                    """,
                examples: [
                    CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --dry-run", "See the plan."),
                    CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --ticket T-118", "Undo it."),
                ],
                options: [reasonOption, ticketOption, dryRun],
                arguments: [ArgumentSpec("id", help: "The audit row to undo.")],
                handlerKey: "audit undo"),
        ]
    )

    static let entitled = CommandSpec(
        name: "entitled",
        abstract: "Say whether a user was entitled at a time: yes (exit 0) or no (exit 1), with the contract and why.",
        discussion: """
            Reconstructs each of the user's subscriptions at --at (default now) from the audit \
            trail, dating the engine's changes by Apple's signedDate and manual changes (corrections, \
            transfers) by when they were made: a refund signed later still counts as paid then; a \
            transfer made later still counts as the old owner's. Entitled means: the user held the \
            contract then, and a paid, not-refunded period covered that moment, or the contract \
            was in its billing grace period.
            """,
        examples: [
            CommandExample(
                "iapctl entitled --user u42 --at 2025-03-14T09:30:00Z", "Was u42 entitled when they complained?"),
            CommandExample("iapctl entitled --user u42 --product com.example.pro.monthly -o json", "Now, as JSON."),
        ],
        options: [
            userOption("The user (your account id).", required: true),
            OptionSpec("product", valueName: "product", help: "Only this product id."),
            OptionSpec(
                "at", valueName: "time",
                help: "The moment to answer for: ISO-8601, ms, now, or back from now (36h, 7d).", defaultValue: "now"),
        ],
        handlerKey: "entitled"
    )

    static let doctor = CommandSpec(
        name: "doctor",
        abstract: "Check the data's invariants; print each finding with the command that fixes it.",
        discussion: """
            Read-only: doctor never changes anything; review the FIX commands and run the ones \
            you agree with. Exit 0 when clean, 1 with findings. Checks:
            """ + "\n\n" + DoctorCommand.checks.map { "  \($0.name): \($0.about)" }.joined(separator: "\n"),
        examples: [
            CommandExample("iapctl doctor", "Check iapctl.db; findings as a table."),
            CommandExample("iapctl doctor -o json --environment Sandbox", "Check a Sandbox database, as JSON."),
        ],
        options: [
            OptionSpec(
                "environment", valueName: "env",
                help: "An environment the database accepts; rows of others are findings.", kind: .repeatable,
                allowedValues: environments, configKey: "environment", defaultValue: "Production",
                section: "Trust options")
        ],
        handlerKey: "doctor"
    )

    static let completion = CommandSpec(
        name: "completion",
        abstract: "Print a shell completion script.",
        discussion: """
            Load it in your shell's startup file:
              bash:  source <(iapctl completion bash)
              zsh:   iapctl completion zsh > "${fpath[1]}/_iapctl"
              fish:  iapctl completion fish > ~/.config/fish/completions/iapctl.fish
            """,
        examples: [
            CommandExample("iapctl completion bash > /etc/bash_completion.d/iapctl", "Install for bash."),
            CommandExample("iapctl completion fish | source", "Try it in the current fish session."),
        ],
        arguments: [ArgumentSpec("shell", help: "The shell.", allowedValues: shells)],
        handlerKey: "completion",
        inheritsOptions: false
    )

    static let help = CommandSpec(
        name: "help",
        abstract: "Show help for a command.",
        examples: [
            CommandExample("iapctl help orders update", "The same as 'iapctl orders update --help'.")
        ],
        arguments: [
            ArgumentSpec(
                "command", help: "The command path, e.g. 'orders list'.", isOptional: true, isRepeating: true,
                completion: .values([
                    "db", "orders", "contracts", "notify", "verify", "restore", "entitled", "audit", "doctor",
                    "apple", "completion",
                ]))
        ],
        handlerKey: "help",
        inheritsOptions: false
    )

    static let versionCommand = CommandSpec(
        name: "version",
        abstract: "Print the version (the same as iapctl --version).",
        examples: [CommandExample("iapctl version", "Prints e.g. 'iapctl 0.1.0'.")],
        handlerKey: "version",
        inheritsOptions: false
    )

    static let man = CommandSpec(
        name: "__man",
        abstract: "Write the man pages into a folder (used by scripts/generate).",
        arguments: [ArgumentSpec("directory", help: "The folder to write into.", completion: .directory)],
        handlerKey: "__man",
        inheritsOptions: false,
        isHidden: true
    )
}
