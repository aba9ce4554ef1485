import AppStoreAPI

// The specification of `iapctl refunds list|answer|consents`: the refund-request desk.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
//
// A group of its own, not under `apple`: `list` and `consents` read only the database (no API key),
// like `doctor`; `answer` composes the request from the database and takes the `apple` options to
// send it. (`apple refunds` is Apple's refund history of a customer, read from Apple.)
extension CommandTree {
    static let refunds = CommandSpec(
        name: "refunds",
        abstract: "The refund-request desk: Apple's CONSUMPTION_REQUESTs, their deadlines, answers and outcomes.",
        discussion: """
            When a customer asks Apple for a refund, Apple sends CONSUMPTION_REQUEST and waits 12 hours \
            for your Consumption Information. 'notify' keeps each request in the ledger; 'refunds list' \
            shows them, oldest deadline first, with the answer sent (the audit row) and what Apple decided \
            later (REFUND or REFUND_DECLINED); 'refunds answer' composes the answer from the database and \
            sends it with --apply; 'doctor' warns of a request with less than 3 hours left. 'refunds \
            consents' lists the RESCIND_CONSENT notifications to act on.
            """,
        examples: [
            CommandExample("iapctl refunds list --open", "The requests still to answer, the most urgent first."),
            CommandExample(
                "iapctl refunds answer 2000000123456789", "Show the answer composed from the database (sends nothing)."),
        ],
        subcommands: [
            CommandSpec(
                name: "list",
                abstract: "List the refund requests (CONSUMPTION_REQUEST) received, oldest deadline first.",
                discussion: """
                    STATUS: open, due-soon (less than 3 hours left), answered (Apple accepted the Consumption \
                    Information: when, by whom, the audit row), missed (12 hours passed unanswered). OUTCOME: \
                    refunded or declined once Apple's REFUND or REFUND_DECLINED of the transaction arrived.
                    """,
                examples: [CommandExample("iapctl refunds list -o json", "Every request, as JSON.")],
                options: [RefundsSpec.open],
                handler: RefundsCommands.list),
            CommandSpec(
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
                    AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption, RefundsSpec.deliveryStatus,
                    RefundsSpec.consumptionPercentage, AppleWrites.refundPreferenceOption, RefundsSpec.reason,
                    ticketOption, RefundsSpec.apply,
                ] + AppleCommands.options,
                arguments: [AppleWrites.consumptionTransactionArgument],
                handler: RefundsCommands.answer),
            CommandSpec(
                name: "consents",
                abstract: "List the RESCIND_CONSENT notifications received (consent withdrawn), oldest first.",
                discussion: """
                    A parent or guardian withdrew consent for the app's user: end the user's sessions and \
                    delete the data kept under that consent. Apple identifies the app download \
                    (appTransactionId), not a transaction, so no order or user is changed.
                    """,
                examples: [
                    CommandExample("iapctl refunds consents -o json", "Every consent withdrawal kept, with its appTransactionId.")
                ],
                handler: RefundsCommands.consents),
        ]
    )
}

/// The options only `refunds` has; its handlers read them by these values.
enum RefundsSpec {
    /// `list --open`.
    static let open = OptionSpec.flag("open", help: "Only requests still to answer (open or due-soon).")

    /// `answer --delivery-status STATUS`.
    static let deliveryStatus = Option<AppleChoices.DeliveryStatus?>(
        "delivery-status", valueName: "status",
        help: "Whether the item was delivered and works; required when the database has no paid order for it.",
        allowedValues: OptionSpec.choices(AppleChoices.DeliveryStatus.self),
        defaultDescription: "DELIVERED when the order was paid")

    /// `answer --consumption-percentage MILLI`.
    static let consumptionPercentage = Option<ConsumptionPercentage?>(
        "consumption-percentage", valueName: "milli",
        help: "How much was consumed, in thousandths of a percent (0–100000).",
        defaultDescription: "the share of the paid period passed when Apple asked; none for one-time purchases")

    /// `answer --reason TEXT`.
    static let reason = Option<String?>(
        "reason", valueName: "text", help: "Why: recorded in the audit trail with the answer.",
        defaultDescription: "refund request NOTIFICATION_UUID")

    /// `answer --apply`.
    static let apply = CommandTree.applyOption.with(
        help: "Send the request to Apple and record its answer; without it, print the request and send nothing.")
}
