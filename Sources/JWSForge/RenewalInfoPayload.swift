import IAPFoundation

/// An Apple `JWSRenewalInfoDecodedPayload` (Apple's App Store Server API documentation), serialized in Apple's field order.
public struct RenewalInfoPayload: Sendable, Equatable {
    public var originalTransactionId: String
    public var autoRenewProductId: String
    public var productId: String
    /// 1 ON, 0 OFF.
    public var autoRenewStatus: Int64
    /// 1 CUSTOMER_CANCELLED, 2 BILLING_ERROR, …; omitted when nil.
    public var expirationIntent: Int64?
    /// Omitted when nil.
    public var isInBillingRetryPeriod: Bool?
    /// Milliunits; omitted when nil.
    public var renewalPrice: Int64?
    public var currency: String?
    /// ms since the epoch.
    public var signedDate: Int64
    public var environment: String
    /// ms since the epoch; omitted when nil.
    public var recentSubscriptionStartDate: Int64?
    /// ms since the epoch; omitted when nil.
    public var renewalDate: Int64?
    /// ms since the epoch; omitted when nil.
    public var gracePeriodExpiresDate: Int64?
    /// The order number (UUID string); omitted when nil.
    public var appAccountToken: String?
    /// 0 not yet consented to a price increase, 1 consented (or told of one needing none); omitted when nil.
    public var priceIncreaseStatus: Int64? = nil
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back; omitted when nil.
    public var offerType: Int64? = nil
    public var offerIdentifier: String? = nil

    /// Renewal info; unspecified optional fields are omitted.
    public init(
        originalTransactionId: String, autoRenewProductId: String, productId: String, autoRenewStatus: Int64 = 1,
        expirationIntent: Int64? = nil, isInBillingRetryPeriod: Bool? = nil, renewalPrice: Int64? = 9990,
        currency: String? = "USD", signedDate: Int64, environment: String, recentSubscriptionStartDate: Int64? = nil,
        renewalDate: Int64?, gracePeriodExpiresDate: Int64? = nil, appAccountToken: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.appAccountToken = appAccountToken
    }

    /// Compact JSON with Apple's field names and order; nil fields are omitted.
    public var json: String {
        var w = JSONObjectWriter()
        w.addIfPresent("expirationIntent", expirationIntent)
        w.add("originalTransactionId", originalTransactionId)
        w.add("autoRenewProductId", autoRenewProductId)
        w.add("productId", productId)
        w.add("autoRenewStatus", autoRenewStatus)
        w.addIfPresent("isInBillingRetryPeriod", isInBillingRetryPeriod)
        w.addIfPresent("renewalPrice", renewalPrice)
        w.addIfPresent("currency", currency)
        w.add("signedDate", signedDate)
        w.add("environment", environment)
        w.addIfPresent("recentSubscriptionStartDate", recentSubscriptionStartDate)
        w.addIfPresent("renewalDate", renewalDate)
        w.addIfPresent("gracePeriodExpiresDate", gracePeriodExpiresDate)
        w.addIfPresent("appAccountToken", appAccountToken)
        w.addIfPresent("priceIncreaseStatus", priceIncreaseStatus)
        w.addIfPresent("offerType", offerType)
        w.addIfPresent("offerIdentifier", offerIdentifier)
        return w.json
    }
}
