/// A value of one of Apple's enumerations: a known case typed, any value Apple adds later kept as
/// sent (``unknown(_:)``) and shown unchanged.
public enum AppleValue<Known: RawRepresentable & CaseIterable & Sendable & Hashable>: Sendable, Hashable, RawRepresentable,
    CustomStringConvertible
where Known.RawValue: Sendable & Hashable {
    case known(Known)
    case unknown(Known.RawValue)

    public init(rawValue: Known.RawValue) {
        self = Known(rawValue: rawValue).map(Self.known) ?? .unknown(rawValue)
    }

    /// As Apple sends it.
    public var rawValue: Known.RawValue {
        switch self {
        case .known(let value): value.rawValue
        case .unknown(let raw): raw
        }
    }

    public var description: String { "\(rawValue)" }
}

extension AppleValue: Codable where Known.RawValue: Codable {
    /// Decodes the value as Apple sends it (a string or a number).
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Known.RawValue.self))
    }

    /// Encodes the value as Apple sent it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension AppleValue: ExpressibleByIntegerLiteral where Known.RawValue == Int32 {
    public init(integerLiteral value: Int32) { self.init(rawValue: value) }
}

/// `notificationType` of an App Store Server Notification V2.
public typealias NotificationType = AppleValue<NotificationTypeName>

/// The notification types Apple documents.
public enum NotificationTypeName: String, CaseIterable, Sendable {
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRenew = "DID_RENEW"
    case expired = "EXPIRED"
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case metadataUpdate = "METADATA_UPDATE"
    case migration = "MIGRATION"
    case offerRedeemed = "OFFER_REDEEMED"
    case oneTimeCharge = "ONE_TIME_CHARGE"
    case priceChange = "PRICE_CHANGE"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED"
    case renewalExtended = "RENEWAL_EXTENDED"
    case renewalExtension = "RENEWAL_EXTENSION"
    /// A parent or guardian withdrew consent for the user (`appData`, no transaction).
    case rescindConsent = "RESCIND_CONSENT"
    case revoke = "REVOKE"
    case subscribed = "SUBSCRIBED"
    case test = "TEST"
}

/// `subtype` of an App Store Server Notification V2.
public typealias NotificationSubtype = AppleValue<NotificationSubtypeName>

/// The notification subtypes Apple documents.
public enum NotificationSubtypeName: String, CaseIterable, Sendable {
    case accepted = "ACCEPTED"
    case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case billingRecovery = "BILLING_RECOVERY"
    case billingRetry = "BILLING_RETRY"
    case created = "CREATED"
    case downgrade = "DOWNGRADE"
    case failure = "FAILURE"
    case gracePeriod = "GRACE_PERIOD"
    case initialBuy = "INITIAL_BUY"
    case pending = "PENDING"
    case priceIncrease = "PRICE_INCREASE"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case resubscribe = "RESUBSCRIBE"
    case summary = "SUMMARY"
    case unreported = "UNREPORTED"
    case upgrade = "UPGRADE"
    case voluntary = "VOLUNTARY"
}

/// `inAppOwnershipType` of a transaction.
public typealias OwnershipType = AppleValue<OwnershipTypeName>

/// Who owns a purchase.
public enum OwnershipTypeName: String, CaseIterable, Sendable {
    case purchased = "PURCHASED"
    case familyShared = "FAMILY_SHARED"
}

/// `offerType` of a transaction or renewal info.
public typealias OfferType = AppleValue<OfferTypeName>

/// The offer types Apple documents.
public enum OfferTypeName: Int32, CaseIterable, Sendable {
    case introductory = 1
    case promotional = 2
    case offerCode = 3
    case winBack = 4
}

/// `type` of a transaction: the kind of product.
public typealias ProductType = AppleValue<ProductTypeName>

/// The product types Apple documents.
public enum ProductTypeName: String, CaseIterable, Sendable {
    case autoRenewable = "Auto-Renewable Subscription"
    case nonRenewing = "Non-Renewing Subscription"
    case consumable = "Consumable"
    case nonConsumable = "Non-Consumable"
}

/// `transactionReason` of a transaction.
public typealias TransactionReason = AppleValue<TransactionReasonName>

/// Why a transaction happened: a purchase the customer made, or an automatic renewal.
public enum TransactionReasonName: String, CaseIterable, Sendable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}

/// `revocationType` of a refunded or revoked transaction.
public typealias RevocationType = AppleValue<RevocationTypeName>

/// How a transaction was revoked: refunded in full or in part, or family sharing withdrawn.
public enum RevocationTypeName: String, CaseIterable, Sendable {
    case refundFull = "REFUND_FULL"
    case refundProrated = "REFUND_PRORATED"
    case familyRevoke = "FAMILY_REVOKE"
}
