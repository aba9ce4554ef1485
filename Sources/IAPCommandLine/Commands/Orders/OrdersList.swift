import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl orders list`: orders newest first, or as they were at `--as-of`.
enum OrdersList {
    static let user = CommandTree.userOption("Only this user's orders.")
    static let product = OrderOptions.product.with(help: "Only orders of this product id.")

    static let command = CommandSpec(
        name: "list",
        abstract: "List orders, newest first.",
        discussion: """
            In JSON, NDJSON and CSV, price is Apple's integer in thousandths of the currency \
            unit (9990 is 9.99) and price_decimal the same amount as a decimal (9.99), beside \
            currency.
            """,
        examples: [
            CommandExample("iapctl orders list --status paid --limit 20", "The 20 newest paid orders."),
            CommandExample("iapctl orders list --user u42 -o csv > u42.csv", "A user's orders as CSV."),
        ],
        options: [user, OrderOptions.status, product, CommandTree.limitOption, CommandTree.asOfOption],
        handler: run)

    /// `orders list`, or with `--as-of` the orders (of `--user`) as they were then.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let time = invocation[CommandTree.asOfOption]?.at(Timestamp.now()) else { return try listNow(invocation) }
        let user = invocation[user]
        let status = invocation[OrderOptions.status]
        let product = invocation[product]
        let limit = invocation[CommandTree.limitOption]?.count
        let orders = try DbOpen.read(invocation) { session in
            try EntitlementQuery.orders(user: user, status: status, product: product, at: time, in: session)
        }
        let (shown, page) = TerminalPage.cut(
            limit.map { Array(orders.prefix($0)) } ?? orders, noun: "orders", invocation: invocation)
        invocation.emit(
            shown.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.orderColumns : RowRendering.allOrderColumns)
        invocation.note("as of \(Timestamp.iso8601(time)): \(shown.count) order\(shown.count == 1 ? "" : "s")")
        if let page { invocation.note(page) }
        return .success
    }

    /// Orders newest first, filtered.
    static func listNow(_ invocation: Invocation) throws -> ExitCode {
        let filter = OrderFilter(
            userId: invocation[user], status: invocation[OrderOptions.status], productId: invocation[product],
            limit: invocation[CommandTree.limitOption]?.count)
        let (orders, page) = TerminalPage.cut(
            try DbOpen.read(invocation) { try $0.orders(matching: filter) }, noun: "orders", invocation: invocation)
        invocation.emit(
            orders.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.orderColumns : RowRendering.allOrderColumns)
        if orders.isEmpty, invocation.output == .table { invocation.note("no orders") }
        if let page { invocation.note(page) }
        return .success
    }
}
