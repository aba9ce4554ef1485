import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl orders update`: hand correction of one order (KEY = no or trade_no) or of a `--from`
/// batch; audited, all or nothing (`RowCorrection`).
enum OrdersUpdate {
    static let status = OrderOptions.status.with(help: "The new status.")
    static let user = CommandTree.userOption("Move the order to this user.")
    static let product = OrderOptions.product.with(help: "The corrected product id.")

    /// `--trade-no ID`.
    static let tradeNo = Option<String?>("trade-no", valueName: "id", help: "The Apple transactionId; '' clears it.")

    /// `--origin-no ID`.
    static let originNo = Option<String?>(
        "origin-no", valueName: "id", help: "The Apple originalTransactionId; '' clears it.")

    /// `--clear-override FIELD`, repeatable.
    static let clearOverride = CommandTree.clearOverrideOption(CommandTree.orderDerivedFields)

    static let from = CommandTree.fromOption("Apply the corrections of this NDJSON or CSV file (all or nothing).")

    /// `[KEY]`.
    static let key = Argument<String?>(
        "key", help: "Order number or transactionId (leave out with --from).", completion: .lookup("orders"))

    /// The options that set a field, and the field each sets.
    static let fields = [
        FieldOption(status, "status"), FieldOption(user, "user_id"), FieldOption(product, "product_id"),
        FieldOption(CommandTree.expiresOption, "expires_date"), FieldOption(tradeNo, "trade_no"),
        FieldOption(originNo, "origin_no"),
    ]

    static let command = CommandSpec(
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

            A change of a field Apple's facts decide (status, product_id, expires_date) is an \
            override: it holds when later facts are derived again, until it is removed (`iapctl \
            audit undo ID` of the change, or --clear-override FIELD, which re-derives the field \
            from the facts) or until Apple signs a newer version of the order's transaction \
            after the override was made. `orders show` lists the overrides in force beside what \
            the facts say. user_id, trade_no and origin_no are not derived: changing them is a \
            plain correction.
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
            status, user, product, CommandTree.expiresOption, tradeNo, originNo, clearOverride, CommandTree.batchReasonOption,
            CommandTree.ticketOption, from, CommandTree.dryRun,
        ],
        arguments: [key],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try RowCorrection.run(
            invocation, as: Order.self, command: "orders update", key: invocation[key], keyName: key.spec.name,
            fields: fields, from: (from.spec, invocation[from]), clearOverride: clearOverride)
    }
}
