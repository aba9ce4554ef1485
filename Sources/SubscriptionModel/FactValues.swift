import IAPFoundation

/// The values a fact's body holds: a transaction, a renewal info, or what a notification (or an API
/// status answer) said. Stored as canonical JSON (``FactBody``), the one form of `iap_facts.body`.

/// The fields of a signed transaction the engine uses.
public struct TransactionFacts: Sendable, Equatable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    /// The order number the app passed; nil or empty when absent.
    public var appAccountToken: String?
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var revocationDate: Int64?
    public var revocationReason: Int?
    /// Apple's `type`: "Auto-Renewable Subscription", "Non-Consumable", …
    public var type: ProductType?
    public var environment: String?
    public var price: Int64?
    public var currency: String?
    public var signedDate: Int64?
    public var transactionReason: TransactionReason?
    public var isUpgraded: Bool?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`.
    public var revocationType: RevocationType?
    /// Thousandths of a percent refunded (prorated refunds).
    public var revocationPercentage: Int?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: OwnershipType?
    public var offerType: Int?
    public var offerIdentifier: String?
    /// ISO-8601 duration of the offer.
    public var offerPeriod: String?
    public var appTransactionId: String?
    /// True when these facts come from an in-app entry of a StoreKit 1 app receipt: a lower-authority
    /// client submission that proves what was paid when the receipt was signed. The engine records
    /// its payment and extends expiry dates, but never revokes, expires or reopens anything on it.
    public var isFromReceipt = false

    public init(
        transactionId: String, originalTransactionId: String, productId: String,
        appAccountToken: String? = nil, purchaseDate: Int64? = nil, originalPurchaseDate: Int64? = nil,
        expiresDate: Int64? = nil, revocationDate: Int64? = nil, revocationReason: Int? = nil,
        type: ProductType? = nil, environment: String? = nil, price: Int64? = nil, currency: String? = nil,
        signedDate: Int64? = nil, transactionReason: TransactionReason? = nil, isUpgraded: Bool? = nil,
        revocationType: RevocationType? = nil, revocationPercentage: Int? = nil, inAppOwnershipType: OwnershipType? = nil,
        offerType: Int? = nil, offerIdentifier: String? = nil, offerPeriod: String? = nil,
        appTransactionId: String? = nil
    ) {
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.inAppOwnershipType = inAppOwnershipType
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerPeriod = offerPeriod
        self.appTransactionId = appTransactionId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.appAccountToken = appAccountToken
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.type = type
        self.environment = environment
        self.price = price
        self.currency = currency
        self.signedDate = signedDate
        self.transactionReason = transactionReason
        self.isUpgraded = isUpgraded
    }

    /// True for auto-renewable subscriptions (the only kind with a member contract). A receipt entry
    /// does not state its type: it is a subscription period when it has an expiry date.
    public var isAutoRenewable: Bool {
        if let type { return type == .known(.autoRenewable) }
        return !isFromReceipt || expiresDate != nil
    }
}

/// The fields of a signed renewal info the engine uses.
public struct RenewalFacts: Sendable, Equatable {
    public var originalTransactionId: String?
    /// 0 off, 1 on.
    public var autoRenewStatus: Int?
    public var autoRenewProductId: String?
    public var productId: String?
    public var gracePeriodExpiresDate: Int64?
    public var isInBillingRetryPeriod: Bool?
    public var expirationIntent: Int?
    public var signedDate: Int64?
    public var renewalDate: Int64?
    public var offerType: Int?
    public var offerIdentifier: String?
    public var offerPeriod: String?
    /// 0: the customer has not (yet) consented to a price increase that needs consent; 1: consented,
    /// or told of one that needs none. Absent: no price increase (or kept before iapctl kept it).
    public var priceIncreaseStatus: Int?
    /// The price of the next renewal, in milliunits of `currency` (Apple's unit).
    public var renewalPrice: Int64?
    public var currency: String?

    public init(
        originalTransactionId: String? = nil, autoRenewStatus: Int? = nil, autoRenewProductId: String? = nil,
        productId: String? = nil, gracePeriodExpiresDate: Int64? = nil, isInBillingRetryPeriod: Bool? = nil,
        expirationIntent: Int? = nil, signedDate: Int64? = nil, renewalDate: Int64? = nil, offerType: Int? = nil,
        offerIdentifier: String? = nil, offerPeriod: String? = nil, priceIncreaseStatus: Int? = nil,
        renewalPrice: Int64? = nil, currency: String? = nil
    ) {
        self.priceIncreaseStatus = priceIncreaseStatus
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.renewalDate = renewalDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerPeriod = offerPeriod
        self.originalTransactionId = originalTransactionId
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.expirationIntent = expirationIntent
        self.signedDate = signedDate
    }
}

/// What Apple said about a subscription, beyond its payloads: one notification (its type, subtype
/// and `data.status`), or — with no type — the `status` of one subscription in a Get All Subscription
/// Statuses answer iapctl fetched itself.
public struct NotificationFact: Sendable, Equatable {
    /// nil for a status Apple's API answered (no notification).
    public var notificationType: NotificationType?
    public var subtype: NotificationSubtype?
    /// `data.status` (or the API's `status`): 1 active, 2 expired, 3 billing retry, 4 billing grace
    /// period, 5 revoked.
    public var status: Int?
    /// The transaction the notification carried (the one a REFUND or REVOKE is about), or the
    /// subscription's latest transaction in a status answer.
    public var transactionId: String?

    public init(
        notificationType: NotificationType?, subtype: NotificationSubtype? = nil, status: Int? = nil,
        transactionId: String? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.status = status
        self.transactionId = transactionId
    }

    /// `DID_RENEW`, `EXPIRED/VOLUNTARY`; `subscription status` for an API answer.
    public var name: String {
        guard let notificationType else { return "subscription status" }
        return subtype.map { "\(notificationType)/\($0)" } ?? notificationType.rawValue
    }
}
