/// The enumerated values of the App Store Server API's requests, as Apple spells them; the `apple`
/// commands' option specs take their `allowedValues` (and so help, completions and man pages) from these.
public enum AppleChoices {
    /// `extendReasonCode` of Extend a Subscription Renewal Date.
    public enum ExtendReasonCode: String, CaseIterable, Sendable {
        case undeclared = "0"
        case customerSatisfaction = "1"
        case other = "2"
        case serviceIssueOrOutage = "3"
    }

    /// `deliveryStatus` of Send Consumption Information.
    public enum DeliveryStatus: String, CaseIterable, Sendable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// `refundPreference` of Send Consumption Information.
    public enum RefundPreference: String, CaseIterable, Sendable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// `productType` of Get Transaction History.
    public enum ProductType: String, CaseIterable, Sendable {
        case autoRenewable = "AUTO_RENEWABLE"
        case nonRenewable = "NON_RENEWABLE"
        case consumable = "CONSUMABLE"
        case nonConsumable = "NON_CONSUMABLE"
    }

    /// `sort` of Get Transaction History (by modification date).
    public enum SortOrder: String, CaseIterable, Sendable {
        case ascending, descending
    }

    /// `status` of Get All Subscription Statuses.
    public enum SubscriptionStatus: String, CaseIterable, Sendable {
        case active = "1"
        case expired = "2"
        case billingRetry = "3"
        case gracePeriod = "4"
        case revoked = "5"

        /// The status as output names it.
        public var name: String {
            switch self {
            case .active: "active"
            case .expired: "expired"
            case .billingRetry: "billing_retry"
            case .gracePeriod: "grace_period"
            case .revoked: "revoked"
            }
        }
    }
}
