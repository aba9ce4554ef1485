import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// `iapctl apple extend`: Extend a Subscription Renewal Date, of one subscription or (`--all-active`) of
/// every active subscriber of a product — audited (``AppleWrites``).
enum AppleExtend {
    /// `extend [ORIGINAL]`.
    static let extendOriginalArgument = Argument<String?>(
        "original", help: "The originalTransactionId (leave out with --all-active).")

    /// `extend --days N`.
    static let daysOption = Option<ExtensionDays>(
        "days", valueName: "n", help: "Days to extend by (1–90).", validation: .positiveInteger)

    /// `extend --reason-code CODE`.
    static let reasonCodeOption = Option<Int64>(
        "reason-code", valueName: "code",
        help: "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.",
        allowedValues: OptionSpec.choices(AppleChoices.ExtendReasonCode.self))

    /// `extend --all-active`.
    static let allActiveOption = OptionSpec.flag(
        "all-active", help: "Every active subscriber of --product (mass extension).")

    /// `extend --product ID`.
    static let productOption = Option<String?>("product", valueName: "id", help: "With --all-active: the product id.")

    /// `extend --storefront CODE`, repeatable.
    static let storefrontOption = Option<[String]>(
        "storefront", valueName: "code", help: "With --all-active: only these storefronts (ISO 3166-1 alpha-3).")

    static let command = CommandSpec(
        name: "extend",
        abstract: "Extend a subscription's renewal date (or every active subscriber's of a product) — audited.",
        discussion: """
            Extend a Subscription Renewal Date for ORIG (an originalTransactionId), or with --all-active \
            --product P, Extend Subscription Renewal Dates for All Active Subscribers (Apple answers at once \
            and works in the background: check it with 'apple extend-status P REQUEST_ID'). Apple allows \
            1–90 days and at most two extensions per subscription a year.
            """,
        examples: [
            CommandExample(
                "iapctl apple extend 2000000100000001 --days 7 --reason-code 3 --reason 'outage 2025-06-01' --ticket INC-9",
                "A week for one subscriber after an outage."),
            CommandExample(
                "iapctl apple extend --all-active --product com.example.pro.monthly --days 3 --reason-code 3 --reason 'outage' --dry-run",
                "Show the mass extension request without sending it."),
        ],
        options: [
            daysOption, reasonCodeOption, allActiveOption, productOption, storefrontOption, AppleWrites.requestIdOption,
        ] + AppleWrites.writeOptions,
        arguments: [extendOriginalArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let days = invocation[daysOption].days
        let code = invocation[reasonCodeOption]
        _ = try AppleWrites.reasonAndTicket(invocation)
        let write: AppleWrite
        let original = invocation[extendOriginalArgument]
        if invocation.flag(allActiveOption) {
            guard original == nil else { throw CLIError.usage("--all-active takes no ORIGINAL") }
            guard let product = invocation[productOption] else { throw CLIError.usage("--all-active needs --product") }
            write = AppleWrite.massExtend(
                product: product, days: days, reasonCode: code, storefronts: invocation[storefrontOption],
                requestIdentifier: AppleWrites.givenRequestIdentifier(invocation))
        } else {
            guard let original else {
                throw CLIError.usage("give the ORIGINAL transaction id, or --all-active --product P")
            }
            if invocation[productOption] != nil || !invocation[storefrontOption].isEmpty {
                throw CLIError.usage("--product and --storefront go with --all-active")
            }
            write = AppleWrite.extend(
                original: original, days: days, reasonCode: code, requestIdentifier: AppleWrites.givenRequestIdentifier(invocation))
        }
        return try AppleWrites.send(write, invocation) { answer in
            if invocation.flag(allActiveOption) {
                invocation.note(
                    "Apple accepted the mass extension; check it with 'iapctl apple extend-status "
                        + "\(invocation[productOption] ?? "") \(answer?["requestIdentifier"]?.stringValue ?? "")'")
                return .success
            }
            guard WriteAnswer.extended(answer) else {
                invocation.warn("Apple did not extend the subscription (success is not true); see its answer")
                return .failure
            }
            return .success
        }
    }
}
