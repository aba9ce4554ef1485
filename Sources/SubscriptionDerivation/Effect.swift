import IAPFoundation
import SubscriptionModel

/// What an event means for a subscription, derived from its notification type and subtype.
package enum Effect: Equatable {
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
    /// TEST, CONSUMPTION_REQUEST, PRICE_INCREASE, REFUND_DECLINED, RENEWAL_EXTENSION, RESCIND_CONSENT, and types
    /// this build does not know: recorded, nothing to change (money facts excepted).
    case informational

    /// The effect of a notification type/subtype pair; `nil` type means a client or restore submission.
    package init(type: NotificationType?, subtype: NotificationSubtype?) {
        guard let type else {
            self = .submission
            return
        }
        guard case .known(let known) = type else {
            self = .informational
            return
        }
        switch known {
        case .subscribed: self = .purchase
        case .didRenew: self = .renewal
        case .didChangeRenewalStatus:
            switch subtype {
            case .known(.autoRenewDisabled)?: self = .autoRenew(false)
            case .known(.autoRenewEnabled)?: self = .autoRenew(true)
            default: self = .informational
            }
        case .didFailToRenew: self = .failToRenew(grace: subtype == .known(.gracePeriod))
        case .expired, .gracePeriodExpired: self = .expired
        case .refund: self = .refund
        case .revoke: self = .revoke
        case .refundReversed: self = .refundReversed
        case .didChangeRenewalPref: self = .renewalPreference
        case .offerRedeemed, .renewalExtended: self = .expiryUpdate
        case .oneTimeCharge: self = .oneTimeCharge
        case .consumptionRequest, .externalPurchaseToken, .metadataUpdate, .migration, .priceChange, .priceIncrease,
            .refundDeclined, .renewalExtension, .rescindConsent, .test:
            self = .informational
        }
    }

    /// Whether the event changes the contract's state (and so is subject to the ordering guard).
    package var changesState: Bool {
        switch self {
        case .informational, .oneTimeCharge: return false
        default: return true
        }
    }

    /// Whether a transaction already recorded makes this event a duplicate.
    package var isPayment: Bool {
        switch self {
        case .purchase, .renewal, .submission, .oneTimeCharge: return true
        default: return false
        }
    }
}
