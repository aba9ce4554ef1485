import AppStoreAPI
import IAPFoundation

extension RefundDesk {
    /// Apple's product-type rules for a Send Consumption Information request composed by hand
    /// (`apple consumption`), as ``answer(_:knowledge:choices:command:)`` applies them: no
    /// consumptionPercentage for an auto-renewable subscription; 0 (or none) when not delivered;
    /// GRANT_PRORATED for another product needs one above 0 and below 100000. What Apple would
    /// refuse is refused here (``Refusal``), before anything is sent.
    public static func check(
        transactionId tx: String, productType: ProductTypeName, deliveryStatus: String, consumptionPercentage: Int64?,
        refundPreference: String?
    ) throws(Refusal) {
        if productType == .autoRenewable {
            if consumptionPercentage != nil { throw .percentageForAutoRenewable(transactionId: tx) }
            return
        }
        if deliveryStatus != AppleChoices.DeliveryStatus.delivered.rawValue, let given = consumptionPercentage, given != 0 {
            throw .undeliveredPercentageNonZero(transactionId: tx, percentage: given, deliveryStatus: deliveryStatus)
        }
        if let given = consumptionPercentage, !WriteRequest.consumptionPercentage.contains(given) {
            throw .percentageOutOfRange(transactionId: tx, percentage: given)
        }
        if refundPreference == AppleChoices.RefundPreference.grantProrated.rawValue {
            guard let given = consumptionPercentage, given > 0, given < WriteRequest.consumptionPercentage.upperBound else {
                throw .proratedNeedsPercentage(transactionId: tx, percentage: consumptionPercentage)
            }
        }
    }
}
