import AppStoreAPI
import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

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
            + "Send it only with the customer's consent (--customer-consented). When the database's signed facts "
            + "give the transaction's product type, Apple's rules for it are checked before anything is sent, as "
            + "'refunds answer' checks them (no --consumption-percentage for an auto-renewable subscription; 0 when "
            + "not delivered; GRANT_PRORATED needs one above 0 and below 100000): what Apple would refuse stops "
            + "with exit 65, naming the rule. An unknown product type is said in a warning and the request is sent as given.",
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
        // A blank --reason is refused before the database is read.
        _ = try AppleWrites.reasonAndTicket(invocation)
        let percentage = invocation[consumptionPercentageOption]?.milli
        try checkProductRules(
            invocation, transaction: tx, deliveryStatus: invocation[deliveryStatusOption], percentage: percentage,
            refundPreference: invocation[AppleWrites.refundPreferenceOption])
        let write = AppleWrite.consumption(
            transaction: tx, sampleContentProvided: invocation.flag(AppleWrites.sampleContentProvidedOption),
            deliveryStatus: invocation[deliveryStatusOption],
            consumptionPercentage: percentage,
            refundPreference: invocation[AppleWrites.refundPreferenceOption])
        return try AppleWrites.send(write, invocation) { _ in
            invocation.note("Apple accepted the consumption information for \(tx)")
            return .success
        }
    }

    /// Apple's product-type rules (``RefundDesk/check(transactionId:productType:deliveryStatus:consumptionPercentage:refundPreference:)``)
    /// when the database knows the transaction's product type; a warning when it does not.
    static func checkProductRules(
        _ invocation: Invocation, transaction tx: String, deliveryStatus: String, percentage: Int64?, refundPreference: String?
    ) throws {
        let known: ProductTypeName?
        if let store = try? DbOpen.existing(invocation, readOnly: true) {
            known = try store.read { try StoredProductType.of(transactionId: tx, in: $0) }
        } else {
            known = nil
        }
        guard let productType = known else {
            invocation.warn(
                "the database does not know the product type of transaction \(tx): Apple's rules for it "
                    + "(consumptionPercentage, GRANT_PRORATED) are not checked before sending")
            return
        }
        try RefundDesk.check(
            transactionId: tx, productType: productType, deliveryStatus: deliveryStatus, consumptionPercentage: percentage,
            refundPreference: refundPreference)
    }
}
