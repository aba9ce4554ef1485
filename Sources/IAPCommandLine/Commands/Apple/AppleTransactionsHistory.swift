import AppStoreAPI
import AppStoreJWS

/// `iapctl apple transactions history TRANSACTION`: Get Transaction History, all pages, filtered.
enum AppleTransactionsHistory {
    /// `--product ID`, repeatable.
    static let productOption = Option<[String]>(
        "product", valueName: "id", help: "Only this product id.")

    /// `--product-type TYPE`, repeatable.
    static let productTypeOption = Option<[String]>(
        "product-type", valueName: "type", help: "Only this product type.", allowedValues: OptionSpec.choices(AppleChoices.ProductType.self)
    )

    /// `--since TIME`.
    static let sinceOption = Option<PointInTime?>(
        "since", valueName: "time", help: "Only purchases at or after: ISO-8601, ms, or back from now (36h, 7d).")

    /// `--until TIME`.
    static let untilOption = Option<PointInTime?>(
        "until", valueName: "time", help: "Only purchases before: ISO-8601, ms, or back from now.")

    /// `--sort ORDER`.
    static let sortOption = Option<String>(
        "sort", valueName: "order", help: "By modification date.",
        allowedValues: OptionSpec.choices(AppleChoices.SortOrder.self), defaultValue: "ascending")

    /// `--subscription-group ID`, repeatable.
    static let subscriptionGroupOption = Option<[String]>(
        "subscription-group", valueName: "id", help: "Only this subscription group (subscriptionGroupIdentifier).")

    /// `--ownership TYPE`.
    static let ownershipOption = Option<String?>(
        "ownership", valueName: "type", help: "Only purchases the customer made, or only those shared by family.",
        allowedValues: OptionSpec.choices(OwnershipTypeName.self))

    /// `--revoked`.
    static let revokedOption = OptionSpec.flag("revoked", help: "Only revoked (refunded) transactions.")

    /// `--not-revoked`.
    static let notRevokedOption = OptionSpec.flag("not-revoked", help: "Only transactions not revoked.")

    static let command = CommandSpec(
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
        arguments: [AppleCommands.transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        var query = TransactionHistoryQuery(
            products: invocation[productOption], productTypes: invocation[productTypeOption], sort: invocation[sortOption],
            subscriptionGroups: invocation[subscriptionGroupOption], ownership: invocation[ownershipOption])
        let now = Timestamp.now()
        if let start = invocation[sinceOption] { query.start = start.at(now) }
        if let end = invocation[untilOption] { query.end = end.at(now) }
        if invocation.flag(revokedOption) && invocation.flag(notRevokedOption) {
            throw CLIError.usage("--revoked and --not-revoked exclude each other")
        }
        if invocation.flag(revokedOption) { query.revoked = true }
        if invocation.flag(notRevokedOption) { query.revoked = false }
        let call = Endpoint.transactionHistory(invocation[AppleCommands.transactionArgument].text, query: query.items)
        return try AppleCommands.walk(session, call, what: "transaction history")
    }
}
