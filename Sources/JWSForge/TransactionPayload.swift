import IAPFoundation

/// An Apple `JWSTransactionDecodedPayload` (Apple's App Store Server API documentation), serialized in Apple's field order.
public struct TransactionPayload: Sendable, Equatable {
    public var transactionId: String
    public var originalTransactionId: String
    public var webOrderLineItemId: String?
    public var bundleId: String
    public var productId: String
    public var subscriptionGroupIdentifier: String?
    /// ms since the epoch.
    public var purchaseDate: Int64
    /// ms since the epoch.
    public var originalPurchaseDate: Int64
    /// ms since the epoch; nil for non-subscriptions.
    public var expiresDate: Int64?
    public var quantity: Int64 = 1
    public var type: String = "Auto-Renewable Subscription"
    /// The order number (a UUID string); omitted when nil.
    public var appAccountToken: String?
    public var inAppOwnershipType: String = "PURCHASED"
    /// ms since the epoch.
    public var signedDate: Int64
    /// 0 REFUNDED_FOR_OTHER_REASON, 1 REFUNDED_DUE_TO_ISSUE; omitted when nil.
    public var revocationReason: Int64?
    /// ms since the epoch; omitted when nil.
    public var revocationDate: Int64?
    public var environment: String
    /// PURCHASE or RENEWAL.
    public var transactionReason: String = "PURCHASE"
    public var storefront: String = "USA"
    public var storefrontId: String = "143441"
    /// Milliunits (9990 = 9.99).
    public var price: Int64 = 9990
    public var currency: String = "USD"
    public var appTransactionId: String?

    /// A subscription transaction; unspecified fields take Apple-typical defaults (USD 9.99, USA, PURCHASED).
    public init(
        transactionId: String, originalTransactionId: String, webOrderLineItemId: String? = nil,
        bundleId: String, productId: String, subscriptionGroupIdentifier: String? = "21000001",
        purchaseDate: Int64, originalPurchaseDate: Int64, expiresDate: Int64?,
        type: String = "Auto-Renewable Subscription", appAccountToken: String? = nil,
        inAppOwnershipType: String = "PURCHASED", signedDate: Int64, environment: String,
        transactionReason: String = "PURCHASE", storefront: String = "USA", storefrontId: String = "143441",
        currency: String = "USD", price: Int64 = 9990,
        revocationDate: Int64? = nil, revocationReason: Int64? = nil, appTransactionId: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.environment = environment
        self.transactionReason = transactionReason
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.currency = currency
        self.price = price
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.appTransactionId = appTransactionId
    }

    /// Compact JSON with Apple's field names and order; nil fields are omitted.
    public var json: String {
        var w = JSONObjectWriter()
        w.add("transactionId", transactionId)
        w.add("originalTransactionId", originalTransactionId)
        w.addIfPresent("webOrderLineItemId", webOrderLineItemId)
        w.add("bundleId", bundleId)
        w.add("productId", productId)
        w.addIfPresent("subscriptionGroupIdentifier", subscriptionGroupIdentifier)
        w.add("purchaseDate", purchaseDate)
        w.add("originalPurchaseDate", originalPurchaseDate)
        w.addIfPresent("expiresDate", expiresDate)
        w.add("quantity", quantity)
        w.add("type", type)
        w.addIfPresent("appAccountToken", appAccountToken)
        w.add("inAppOwnershipType", inAppOwnershipType)
        w.add("signedDate", signedDate)
        w.addIfPresent("revocationReason", revocationReason)
        w.addIfPresent("revocationDate", revocationDate)
        w.add("environment", environment)
        w.add("transactionReason", transactionReason)
        w.add("storefront", storefront)
        w.add("storefrontId", storefrontId)
        w.add("price", price)
        w.add("currency", currency)
        w.addIfPresent("appTransactionId", appTransactionId)
        return w.json
    }
}
