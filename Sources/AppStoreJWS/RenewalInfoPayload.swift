/// A decoded `signedRenewalInfo` (JWSRenewalInfoDecodedPayload): every field Apple defines.
public struct RenewalInfoPayload: Sendable, Equatable {
    /// 1 CUSTOMER_CANCELLED … 5 OTHER (raw).
    public var expirationIntent: Int32?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 0 OFF, 1 ON.
    public var autoRenewStatus: Int32?
    public var isInBillingRetryPeriod: Bool?
    /// 0 not responded, 1 consented (raw).
    public var priceIncreaseStatus: Int32?
    public var gracePeriodExpiresDate: Int64?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var signedDate: Int64?
    public var environment: String?
    public var recentSubscriptionStartDate: Int64?
    public var renewalDate: Int64?
    public var currency: String?
    /// Milliunits.
    public var renewalPrice: Int64?
    public var offerDiscountType: String?
    public var eligibleWinBackOfferIds: [String]?
    /// `""` is read as nil.
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var offerPeriod: String?
    /// Advanced Commerce API details, kept as JSON.
    public var advancedCommerceInfo: JSONValue?
    public var commitmentInfo: RenewalCommitmentInfo?
    public var renewalBillingPlanType: String?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    /// Builds the model from a decoded payload; a known field of the wrong JSON type throws ``VerificationFailure/Code/invalidPayload``.
    public init(json: JSONValue) throws(VerificationFailure) {
        let r = try PayloadFields(json, path: "")
        expirationIntent = try r.int32("expirationIntent")
        originalTransactionId = try r.string("originalTransactionId")
        autoRenewProductId = try r.string("autoRenewProductId")
        productId = try r.string("productId")
        autoRenewStatus = try r.int32("autoRenewStatus")
        isInBillingRetryPeriod = try r.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try r.int32("priceIncreaseStatus")
        gracePeriodExpiresDate = try r.date("gracePeriodExpiresDate")
        offerType = try r.int32("offerType").map(OfferType.init(rawValue:))
        offerIdentifier = try r.string("offerIdentifier")
        signedDate = try r.date("signedDate")
        environment = try r.string("environment")
        recentSubscriptionStartDate = try r.date("recentSubscriptionStartDate")
        renewalDate = try r.date("renewalDate")
        currency = try r.string("currency")
        renewalPrice = try r.int64("renewalPrice")
        offerDiscountType = try r.string("offerDiscountType")
        eligibleWinBackOfferIds = try r.stringArray("eligibleWinBackOfferIds")
        appAccountToken = try r.token("appAccountToken")
        appTransactionId = try r.string("appTransactionId")
        offerPeriod = try r.string("offerPeriod")
        advancedCommerceInfo = try r.rawObject("advancedCommerceInfo")
        commitmentInfo = try r.object("commitmentInfo").map { (o) throws(VerificationFailure) in try RenewalCommitmentInfo(fields: o) }
        renewalBillingPlanType = try r.string("renewalBillingPlanType")
        self.json = json
    }

}

/// A renewal info's `commitmentInfo`.
public struct RenewalCommitmentInfo: Sendable, Equatable {
    public var commitmentAutoRenewProductId: String?
    public var commitmentAutoRenewStatus: Int32?
    public var commitmentRenewalBillingPlanType: String?
    public var commitmentRenewalDate: Int64?
    public var commitmentRenewalPrice: Int64?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        commitmentAutoRenewProductId = try r.string("commitmentAutoRenewProductId")
        commitmentAutoRenewStatus = try r.int32("commitmentAutoRenewStatus")
        commitmentRenewalBillingPlanType = try r.string("commitmentRenewalBillingPlanType")
        commitmentRenewalDate = try r.date("commitmentRenewalDate")
        commitmentRenewalPrice = try r.int64("commitmentRenewalPrice")
        self.json = .object(r.members)
    }

}
