// The specification of `iapctl orders create|list|show|update`: orders, one per payment.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
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
                    OrdersSpec.product, OrdersSpec.no,
                    fromOption(
                        "Create one order per NDJSON line {\"user\", \"product\"[, \"no\"]} (or CSV row with a "
                            + "header user,product[,no]) of this file; all or nothing."),
                ],
                handler: OrdersCommands.create),
            CommandSpec(
                name: "list",
                abstract: "List orders, newest first.",
                examples: [
                    CommandExample("iapctl orders list --status paid --limit 20", "The 20 newest paid orders."),
                    CommandExample("iapctl orders list --user u42 -o csv > u42.csv", "A user's orders as CSV."),
                ],
                options: [
                    userOption("Only this user's orders."),
                    OrdersSpec.status, OrdersSpec.product.with(help: "Only orders of this product id."),
                    limitOption, asOfOption,
                ],
                handler: OrdersCommands.list),
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
                arguments: [OrdersSpec.key],
                handler: OrdersShow.run),
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
                    OrdersSpec.status.with(help: "The new status."), userOption("Move the order to this user."),
                    OrdersSpec.product.with(help: "The corrected product id."), expiresOption, OrdersSpec.tradeNo,
                    OrdersSpec.originNo, OrdersSpec.clearOverride,
                    reasonOption, ticketOption,
                    fromOption("Apply the corrections of this NDJSON or CSV file (all or nothing)."),
                    dryRun,
                ],
                arguments: [OrdersSpec.updateKey],
                handler: OrdersCommands.update),
        ]
    )
}

/// The options and arguments only `orders` commands have; their handlers read them by these values.
enum OrdersSpec {
    /// `--product ID` (`orders list` and `orders update` word it their own way).
    static let product = OptionSpec("product", valueName: "product", help: "The App Store product id.")

    /// `orders create --no NO`.
    static let no = OptionSpec(
        "no", valueName: "no", help: "Use this order number instead of a new UUID (to import existing orders).")

    /// `--status STATUS` (`orders update` words it its own way).
    static let status = OptionSpec(
        "status", valueName: "status", help: "Only orders in this status.", allowedValues: CommandTree.orderStatuses)

    /// `orders update --trade-no ID`.
    static let tradeNo = OptionSpec("trade-no", valueName: "id", help: "The Apple transactionId; '' clears it.")

    /// `orders update --origin-no ID`.
    static let originNo = OptionSpec(
        "origin-no", valueName: "id", help: "The Apple originalTransactionId; '' clears it.")

    /// `orders update KEY --clear-override FIELD`, repeatable.
    static let clearOverride = OptionSpec(
        "clear-override", valueName: "field",
        help: "Lift the hand override of this field and re-derive it from Apple's facts (repeatable).",
        kind: .repeatable, allowedValues: CommandTree.orderDerivedFields)

    /// `orders show KEY`.
    static let key = ArgumentSpec("key", help: "Order number, transactionId or originalTransactionId.")

    /// `orders update [KEY]`.
    static let updateKey = ArgumentSpec(
        "key", help: "Order number or transactionId (leave out with --from).", isOptional: true)
}
