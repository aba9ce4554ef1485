/// A decoded `signedTransactionInfo` (JWSTransactionDecodedPayload): all 33 fields Apple defines.
public struct TransactionPayload: Sendable, Equatable {
    /// The subscription/contract key.
    public var originalTransactionId: String?
    /// This purchase.
    public var transactionId: String?
    /// Per-period purchase id.
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    /// ms since epoch.
    public var purchaseDate: Int64?
    /// ms since epoch.
    public var originalPurchaseDate: Int64?
    /// ms since epoch (subscriptions).
    public var expiresDate: Int64?
    public var quantity: Int32?
    /// "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription" (raw).
    public var type: ProductType?
    /// UUID the app set at purchase; `""` is read as nil.
    public var appAccountToken: String?
    /// FAMILY_SHARED, PURCHASED (raw).
    public var inAppOwnershipType: OwnershipType?
    public var signedDate: Int64?
    /// 0 REFUNDED_FOR_OTHER_REASON, 1 REFUNDED_DUE_TO_ISSUE (raw).
    public var revocationReason: Int32?
    public var revocationDate: Int64?
    public var isUpgraded: Bool?
    /// 1 INTRODUCTORY, 2 PROMOTIONAL, 3 OFFER_CODE, 4 WIN_BACK (raw).
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var environment: String?
    /// ISO 3166-1 alpha-3.
    public var storefront: String?
    public var storefrontId: String?
    /// PURCHASE, RENEWAL.
    public var transactionReason: TransactionReason?
    /// ISO 4217.
    public var currency: String?
    /// Milliunits (10990 = 10.99).
    public var price: Int64?
    public var offerDiscountType: String?
    public var appTransactionId: String?
    public var offerPeriod: String?
    /// REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE.
    public var revocationType: RevocationType?
    /// Milliunits of percent (50000 = 50 %).
    public var revocationPercentage: Int32?
    /// Advanced Commerce API details, kept as JSON.
    public var advancedCommerceInfo: JSONValue?
    public var billingPlanType: String?
    public var commitmentInfo: TransactionCommitmentInfo?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    /// Builds the model from a decoded payload; a known field of the wrong JSON type throws ``VerificationFailure/Code/invalidPayload``.
    public init(json: JSONValue) throws(VerificationFailure) {
        let r = try PayloadFields(json, path: "")
        originalTransactionId = try r.string("originalTransactionId")
        transactionId = try r.string("transactionId")
        webOrderLineItemId = try r.string("webOrderLineItemId")
        bundleId = try r.string("bundleId")
        productId = try r.string("productId")
        subscriptionGroupIdentifier = try r.string("subscriptionGroupIdentifier")
        purchaseDate = try r.date("purchaseDate")
        originalPurchaseDate = try r.date("originalPurchaseDate")
        expiresDate = try r.date("expiresDate")
        quantity = try r.int32("quantity")
        type = try r.string("type").map(ProductType.init(rawValue:))
        appAccountToken = try r.token("appAccountToken")
        inAppOwnershipType = try r.string("inAppOwnershipType").map(OwnershipType.init(rawValue:))
        signedDate = try r.date("signedDate")
        revocationReason = try r.int32("revocationReason")
        revocationDate = try r.date("revocationDate")
        isUpgraded = try r.bool("isUpgraded")
        offerType = try r.int32("offerType").map(OfferType.init(rawValue:))
        offerIdentifier = try r.string("offerIdentifier")
        environment = try r.string("environment")
        storefront = try r.string("storefront")
        storefrontId = try r.string("storefrontId")
        transactionReason = try r.string("transactionReason").map(TransactionReason.init(rawValue:))
        currency = try r.string("currency")
        price = try r.int64("price")
        offerDiscountType = try r.string("offerDiscountType")
        appTransactionId = try r.string("appTransactionId")
        offerPeriod = try r.string("offerPeriod")
        revocationType = try r.string("revocationType").map(RevocationType.init(rawValue:))
        revocationPercentage = try r.int32("revocationPercentage")
        advancedCommerceInfo = try r.rawObject("advancedCommerceInfo")
        billingPlanType = try r.string("billingPlanType")
        commitmentInfo = try r.object("commitmentInfo").map { (o) throws(VerificationFailure) in try TransactionCommitmentInfo(fields: o) }
        self.json = json
    }

}

/// A transaction's `commitmentInfo` (Advanced Commerce commitments).
public struct TransactionCommitmentInfo: Sendable, Equatable {
    public var billingPeriodNumber: Int32?
    public var commitmentExpiresDate: Int64?
    /// Milliunits.
    public var commitmentPrice: Int64?
    public var totalBillingPeriods: Int32?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        billingPeriodNumber = try r.int32("billingPeriodNumber")
        commitmentExpiresDate = try r.date("commitmentExpiresDate")
        commitmentPrice = try r.int64("commitmentPrice")
        totalBillingPeriods = try r.int32("totalBillingPeriods")
        self.json = .object(r.members)
    }

}
