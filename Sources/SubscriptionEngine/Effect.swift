/// What an event means for a subscription, derived from its notification type and subtype.
enum Effect: Equatable {
    /// SUBSCRIBED (INITIAL_BUY, RESUBSCRIBE) or a client/restore submission of a new purchase.
    case purchase
    /// DID_RENEW (incl. BILLING_RECOVERY).
    case renewal
    /// A client or restore submission: purchase or renewal, decided by what the database knows.
    case submission
    /// DID_CHANGE_RENEWAL_STATUS: AUTO_RENEW_ENABLED (true) / AUTO_RENEW_DISABLED (false).
    case autoRenew(Bool)
    /// DID_FAIL_TO_RENEW: with subtype GRACE_PERIOD (true) or without (billing retry).
    case failToRenew(grace: Bool)
    /// EXPIRED (any subtype), GRACE_PERIOD_EXPIRED.
    case expired
    /// REFUND.
    case refund
    /// REVOKE (Family Sharing revoked).
    case revoke
    /// REFUND_REVERSED.
    case refundReversed
    /// DID_CHANGE_RENEWAL_PREF: the next product changes.
    case renewalPreference
    /// OFFER_REDEEMED, RENEWAL_EXTENDED: expiry may move.
    case expiryUpdate
    /// ONE_TIME_CHARGE: a one-time purchase is paid (no contract).
    case oneTimeCharge
    /// TEST, CONSUMPTION_REQUEST, PRICE_INCREASE, REFUND_DECLINED, RENEWAL_EXTENSION, and types
    /// this build does not know: recorded, nothing to change (money facts excepted).
    case informational

    /// The effect of a notification type/subtype pair; `nil` type means a client or restore submission.
    init(type: String?, subtype: String?) {
        guard let type else {
            self = .submission
            return
        }
        switch type {
        case "SUBSCRIBED": self = .purchase
        case "DID_RENEW": self = .renewal
        case "DID_CHANGE_RENEWAL_STATUS":
            switch subtype {
            case "AUTO_RENEW_DISABLED": self = .autoRenew(false)
            case "AUTO_RENEW_ENABLED": self = .autoRenew(true)
            default: self = .informational
            }
        case "DID_FAIL_TO_RENEW": self = .failToRenew(grace: subtype == "GRACE_PERIOD")
        case "EXPIRED", "GRACE_PERIOD_EXPIRED": self = .expired
        case "REFUND": self = .refund
        case "REVOKE": self = .revoke
        case "REFUND_REVERSED": self = .refundReversed
        case "DID_CHANGE_RENEWAL_PREF": self = .renewalPreference
        case "OFFER_REDEEMED", "RENEWAL_EXTENDED": self = .expiryUpdate
        case "ONE_TIME_CHARGE": self = .oneTimeCharge
        default: self = .informational
        }
    }

    /// Whether the event changes the contract's state (and so is subject to the ordering guard).
    var changesState: Bool {
        switch self {
        case .informational, .oneTimeCharge: return false
        default: return true
        }
    }

    /// Whether a transaction already recorded makes this event a duplicate.
    var isPayment: Bool {
        switch self {
        case .purchase, .renewal, .submission, .oneTimeCharge: return true
        default: return false
        }
    }
}
