import SubscriptionEngine
import SubscriptionModel

// `iapctl orders`: orders, one per payment. Each subcommand's spec, options and handler are in
// its own file beside this one (Create.swift, List.swift, Show.swift, Update.swift).
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
        subcommands: [OrdersCreate.command, OrdersList.command, OrdersShow.command, OrdersUpdate.command]
    )
}

/// The options several `orders` commands share; each command words them its own way.
enum OrderOptions {
    /// `--product ID`.
    static let product = Option<String?>("product", valueName: "product", help: "The App Store product id.")

    /// `--status STATUS`.
    static let status = Option<OrderStatus?>(
        "status", valueName: "status", help: "Only orders in this status.", allowedValues: CommandTree.orderStatuses)
}
