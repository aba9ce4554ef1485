import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// `iapctl apple consumption TRANSACTION`: Send Consumption Information — audited (``AppleWrites``).
enum AppleConsumption {
    /// `consumption --delivery-status STATUS`.
    static let deliveryStatusOption = Option<String>(
        "delivery-status", valueName: "status", help: "Whether the item was delivered and works.",
        allowedValues: OptionSpec.choices(AppleChoices.DeliveryStatus.self))

    /// `consumption --consumption-percentage MILLI`.
    static let consumptionPercentageOption = Option<ConsumptionPercentage?>(
        "consumption-percentage", valueName: "milli",
        help: "How much was consumed, in thousandths of a percent (0–100000).")

    static let command = CommandSpec(
        name: "consumption",
        abstract: "Send Consumption Information for a refund request (CONSUMPTION_REQUEST) — audited.",
        discussion: "Apple asks for it in a CONSUMPTION_REQUEST notification and needs it within 12 hours. "
            + "Send it only with the customer's consent (--customer-consented).",
        examples: [
            CommandExample(
                "iapctl apple consumption 2000000123456789 --customer-consented --delivery-status DELIVERED --consumption-percentage 25000 --refund-preference DECLINE --reason 'ticket T-5'",
                "A quarter consumed, delivered: prefer declining the refund.")
        ],
        options: [
            AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption, deliveryStatusOption, consumptionPercentageOption,
            AppleWrites.refundPreferenceOption,
        ] + AppleWrites.writeOptions,
        arguments: [AppleWrites.consumptionTransactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try WriteRequest.requireConsent(invocation.flag(AppleWrites.customerConsentedOption))
        let tx = invocation[AppleWrites.consumptionTransactionArgument]
        let write = AppleWrite.consumption(
            transaction: tx, sampleContentProvided: invocation.flag(AppleWrites.sampleContentProvidedOption),
            deliveryStatus: invocation[deliveryStatusOption],
            consumptionPercentage: invocation[consumptionPercentageOption]?.milli,
            refundPreference: invocation[AppleWrites.refundPreferenceOption])
        return try AppleWrites.send(write, invocation) { _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
    }
}
