import Foundation
import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel
import Testing

// The engine's specification, one Apple lifecycle per case: the items Apple (or the app) sends,
// the rows they must give, and one line of why from Apple's documentation ("App Store Server
// Notifications V2": notificationType, subtype, data.status; "JWSTransactionDecodedPayload";
// "JWSRenewalInfoDecodedPayload"). Every case is also delivered with each adjacent pair swapped
// and in reverse, and must give the same tables (Apple does not promise delivery order).

let alice = "a1000000-0000-4000-8000-000000000001"
let aliceSecond = "a1000000-0000-4000-8000-000000000002"
let bobOrder = "b2000000-0000-4000-8000-000000000001"
let hour: Int64 = 3_600_000

/// A period of a subscription: purchased at `start`, ending `days` later.
func period(
    _ id: String, original: String = "1000", token: String? = alice, product: String = "pro.monthly", start: Int64,
    days: Int64 = 30, revokedAt: Int64? = nil, upgraded: Bool? = nil, owner: String? = nil, revocationType: String? = nil
) -> TransactionFacts {
    TransactionFacts(
        transactionId: id, originalTransactionId: original, productId: product, appAccountToken: token,
        purchaseDate: start, originalPurchaseDate: t0, expiresDate: start + days * day, revocationDate: revokedAt,
        revocationReason: revokedAt == nil ? nil : 1, type: ProductType(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox",
        price: 9990, currency: "USD", signedDate: start, isUpgraded: upgraded,
        revocationType: revocationType.map(RevocationType.init(rawValue:)),
        inAppOwnershipType: OwnershipType(rawValue: owner ?? "PURCHASED"))
}

/// An App Store Server Notification V2 with its `data.status` and renewal info.
func apple(
    _ type: String, _ subtype: String? = nil, at signed: Int64, _ tx: TransactionFacts?, status: Int? = nil,
    autoRenew: Int? = 1, next: String? = nil, grace: Int64? = nil
) -> SubscriptionEvent {
    let uuid = "\(type)-\(subtype ?? "")-\(signed)-\(tx?.transactionId ?? "")"
    return SubscriptionEvent(
        source: .apple, notificationUUID: uuid, notificationType: NotificationType(rawValue: type),
        subtype: subtype.map(NotificationSubtype.init(rawValue:)), signedDate: signed,
        environment: "Sandbox", bundleId: "com.example", transaction: tx,
        renewal: autoRenew.map {
            RenewalFacts(
                originalTransactionId: tx?.originalTransactionId, autoRenewStatus: $0,
                autoRenewProductId: next ?? tx?.productId, productId: tx?.productId, gracePeriodExpiresDate: grace,
                signedDate: signed)
        }, raw: "jws-\(uuid)", status: status)
}

/// The app's submission (`verify --apply`) of a transaction Apple signed at `signed`.
func submitted(_ tx: TransactionFacts, signed: Int64, source: EventSource = .client) -> SubscriptionEvent {
    var fresh = tx
    fresh.signedDate = signed
    return SubscriptionEvent(
        source: source, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: fresh,
        raw: "jws-\(source)-\(tx.transactionId)-\(signed)")
}

/// An answer of Apple's App Store Server API that iapctl fetched itself (Apple pulled), each payload
/// signed at `signed`: a transaction of Get Transaction History, or — with `status` — one subscription
/// of Get All Subscription Statuses (its latest transaction, renewal info and `status`).
func pulled(
    _ tx: TransactionFacts, signed: Int64, status: Int? = nil, autoRenew: Int? = nil, grace: Int64? = nil
) -> SubscriptionEvent {
    var fresh = tx
    fresh.signedDate = signed
    return SubscriptionEvent(
        source: .appleAPI, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: fresh,
        renewal: autoRenew.map {
            RenewalFacts(
                originalTransactionId: tx.originalTransactionId, autoRenewStatus: $0, autoRenewProductId: tx.productId,
                productId: tx.productId, gracePeriodExpiresDate: grace, signedDate: signed)
        }, raw: "jws-api-\(tx.transactionId)-\(signed)-\(status ?? 0)", status: status)
}

let firstPeriod = period("1000", start: t0)
let secondPeriod = period("1001", start: t0 + 30 * day)
let buy = apple("SUBSCRIBED", "INITIAL_BUY", at: t0, firstPeriod, status: 1)
let renew = apple("DID_RENEW", at: t0 + 30 * day + hour, secondPeriod, status: 1)

/// One lifecycle and what it must leave.
struct Scenario: CustomTestStringConvertible, Sendable {
    let name: String
    /// Why, from Apple's documentation.
    let why: String
    let events: [SubscriptionEvent]
    /// `status product expires auto_renew next` of contract 1000 (nil: no contract).
    let contract: String?
    /// transactionId → order status.
    let orders: [String: OrderStatus]
    /// Entitled right after the last item was signed.
    let entitled: Bool

    var testDescription: String { name }
}

func row(_ status: ContractStatus, _ expires: Int64, product: String = "pro.monthly", autoRenew: Bool = true, next: String? = nil)
    -> String
{
    "\(status.rawValue) \(product) \(expires) \(autoRenew) \(next ?? "-")"
}

let scenarios: [Scenario] = [
    Scenario(
        name: "SUBSCRIBED/INITIAL_BUY",
        why: "INITIAL_BUY: the customer subscribed for the first time; data.status 1 = active",
        events: [buy], contract: row(.active, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "DID_RENEW",
        why: "DID_RENEW: the subscription renewed; the new transaction's expiresDate is the new end",
        events: [buy, renew], contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED",
        why: "AUTO_RENEW_DISABLED: auto-renew off; the customer keeps access until expiresDate (canceled)",
        events: [buy, apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t0 + 5 * day, firstPeriod, status: 1, autoRenew: 0)],
        contract: row(.canceled, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "AUTO_RENEW_DISABLED then AUTO_RENEW_ENABLED",
        why: "AUTO_RENEW_ENABLED: auto-renew back on; status stays Apple's (1 active)",
        events: [
            buy, apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t0 + 5 * day, firstPeriod, status: 1, autoRenew: 0),
            apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", at: t0 + 6 * day, firstPeriod, status: 1, autoRenew: 1),
        ],
        contract: row(.active, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "grace period then recovery (DID_FAIL_TO_RENEW/GRACE_PERIOD, DID_RENEW/BILLING_RECOVERY)",
        why: "GRACE_PERIOD: billing failed, the customer keeps access (status 4); BILLING_RECOVERY: renewed after a failure",
        events: [
            buy,
            apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: t0 + 36 * day),
            apple("DID_RENEW", "BILLING_RECOVERY", at: t0 + 33 * day + hour, period("1001", start: t0 + 33 * day), status: 1),
        ],
        contract: row(.active, t0 + 63 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "grace period (still entitled)",
        why: "DID_FAIL_TO_RENEW/GRACE_PERIOD: data.status 4, billing grace period: the customer keeps access",
        events: [
            buy, apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: t0 + 36 * day),
        ],
        contract: row(.gracePeriod, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "GRACE_PERIOD_EXPIRED",
        why: "GRACE_PERIOD_EXPIRED: the grace period ended without renewing; Apple keeps retrying (status 3 billing retry)",
        events: [
            buy, apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: t0 + 36 * day),
            apple("GRACE_PERIOD_EXPIRED", at: t0 + 36 * day, firstPeriod, status: 3),
        ],
        contract: row(.billingRetry, t0 + 30 * day), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "billing retry then expiry (DID_FAIL_TO_RENEW, EXPIRED/BILLING_RETRY)",
        why: "DID_FAIL_TO_RENEW without subtype: billing retry, no access (status 3); EXPIRED/BILLING_RETRY: retry ended (status 2)",
        events: [
            buy, apple("DID_FAIL_TO_RENEW", at: t0 + 30 * day + hour, firstPeriod, status: 3),
            apple("EXPIRED", "BILLING_RETRY", at: t0 + 90 * day, firstPeriod, status: 2, autoRenew: 0),
        ],
        contract: row(.expired, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "AUTO_RENEW_ENABLED during billing retry",
        why: "data.status at the newest signedDate wins: a toggle during billing retry carries status 3",
        events: [
            buy, apple("DID_FAIL_TO_RENEW", at: t0 + 30 * day + hour, firstPeriod, status: 3, autoRenew: 0),
            apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", at: t0 + 31 * day, firstPeriod, status: 3, autoRenew: 1),
        ],
        contract: row(.billingRetry, t0 + 30 * day), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "EXPIRED/VOLUNTARY",
        why: "EXPIRED/VOLUNTARY: expired after the customer turned auto-renew off (status 2)",
        events: [
            buy, apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t0 + 5 * day, firstPeriod, status: 1, autoRenew: 0),
            apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
        ],
        contract: row(.expired, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "EXPIRED/PRICE_INCREASE and PRODUCT_NOT_FOR_SALE",
        why: "EXPIRED with any subtype: the subscription expired (status 2)",
        events: [
            buy, apple("EXPIRED", "PRICE_INCREASE", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
            apple("EXPIRED", "PRODUCT_NOT_FOR_SALE", at: t0 + 30 * day + 1, firstPeriod, status: 2, autoRenew: 0),
        ],
        contract: row(.expired, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "upgrade (DID_CHANGE_RENEWAL_PREF/UPGRADE)",
        why: "UPGRADE takes effect immediately: the new transaction's product and expiresDate; the old one isUpgraded",
        events: [
            apple("SUBSCRIBED", "INITIAL_BUY", at: t0, period("1000", product: "basic.yearly", start: t0, days: 365), status: 1),
            apple(
                "DID_CHANGE_RENEWAL_PREF", "UPGRADE", at: t0 + 10 * day, period("1001", product: "pro.monthly", start: t0 + 10 * day),
                status: 1),
            submitted(period("1000", product: "basic.yearly", start: t0, days: 365, upgraded: true), signed: t0 + 10 * day + 1),
        ],
        contract: row(.active, t0 + 40 * day, product: "pro.monthly"), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "downgrade (DID_CHANGE_RENEWAL_PREF/DOWNGRADE) then the renewal into it",
        why: "DOWNGRADE takes effect at the next renewal: autoRenewProductId is the next product until DID_RENEW",
        events: [
            buy, apple("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", at: t0 + 5 * day, firstPeriod, status: 1, next: "basic.monthly"),
        ],
        contract: row(.active, t0 + 30 * day, next: "basic.monthly"), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "downgrade, then DID_RENEW into the lower product",
        why: "the renewal's transaction carries the new product; next_product_id is cleared",
        events: [
            buy, apple("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", at: t0 + 5 * day, firstPeriod, status: 1, next: "basic.monthly"),
            apple("DID_RENEW", at: t0 + 30 * day + hour, period("1001", product: "basic.monthly", start: t0 + 30 * day), status: 1),
        ],
        contract: row(.active, t0 + 60 * day, product: "basic.monthly"), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "crossgrade (DID_CHANGE_RENEWAL_PREF without subtype)",
        why: "a crossgrade to a product of the same level takes effect at the next renewal",
        events: [buy, apple("DID_CHANGE_RENEWAL_PREF", at: t0 + 5 * day, firstPeriod, status: 1, next: "pro.monthly.family")],
        contract: row(.active, t0 + 30 * day, next: "pro.monthly.family"), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "OFFER_REDEEMED/RESUBSCRIBE after expiry",
        why: "OFFER_REDEEMED: the customer redeemed an offer; a resubscription is a new paid period (status 1)",
        events: [
            buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
            apple("OFFER_REDEEMED", "RESUBSCRIBE", at: t0 + 40 * day, period("1001", start: t0 + 40 * day), status: 1),
        ],
        contract: row(.active, t0 + 70 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "REFUND of the current period",
        why: "REFUND: the transaction has a revocationDate; the current period's refund revokes access (status 5)",
        events: [
            buy, renew,
            apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5),
        ],
        contract: row(.revoked, t0 + 60 * day), orders: ["1000": .paid, "1001": .refunded], entitled: false),
    Scenario(
        name: "REFUND then REFUND_REVERSED",
        why: "REFUND_REVERSED: a newer signed version of the same transaction without revocationDate reinstates it",
        events: [
            buy, renew,
            apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5),
            apple("REFUND_REVERSED", at: t0 + 40 * day, secondPeriod, status: 1),
        ],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "REFUND of an older period",
        why: "refunding an old period revokes that transaction only; the current period is untouched (status 1)",
        events: [
            buy, renew,
            apple("REFUND", at: t0 + 40 * day, period("1000", start: t0, revokedAt: t0 + 40 * day), status: 1),
        ],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .refunded, "1001": .paid], entitled: true),
    Scenario(
        name: "REVOKE (Family Sharing)",
        why: "REVOKE: the purchaser stopped sharing; the family member's transaction is revoked (status 5)",
        events: [
            apple("SUBSCRIBED", "INITIAL_BUY", at: t0, period("1000", start: t0, owner: "FAMILY_SHARED"), status: 1),
            apple(
                "REVOKE", at: t0 + 10 * day,
                period("1000", start: t0, revokedAt: t0 + 10 * day, owner: "FAMILY_SHARED", revocationType: "FAMILY_REVOKE"),
                status: 5),
        ],
        contract: row(.revoked, t0 + 30 * day), orders: ["1000": .revoked], entitled: false),
    Scenario(
        name: "RENEWAL_EXTENDED",
        why: "RENEWAL_EXTENDED: Apple extended the period; the transaction's newer version carries the later expiresDate",
        events: [buy, apple("RENEWAL_EXTENDED", at: t0 + 20 * day, period("1000", start: t0, days: 40), status: 1)],
        contract: row(.active, t0 + 40 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "resubscribe with the same originalTransactionId",
        why: "SUBSCRIBED/RESUBSCRIBE: the customer resubscribed within the same group (status 1)",
        events: [
            buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
            apple("SUBSCRIBED", "RESUBSCRIBE", at: t0 + 60 * day, period("1002", token: nil, start: t0 + 60 * day), status: 1),
        ],
        contract: row(.active, t0 + 90 * day), orders: ["1000": .paid, "1002": .paid], entitled: true),
    Scenario(
        name: "a new purchase after AUTO_RENEW_DISABLED",
        why: "a later paid period with auto-renew on again is active (status 1)",
        events: [
            buy, apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t0 + 5 * day, firstPeriod, status: 1, autoRenew: 0),
            apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
            apple("SUBSCRIBED", "RESUBSCRIBE", at: t0 + 50 * day, period("1002", start: t0 + 50 * day), status: 1),
        ],
        contract: row(.active, t0 + 80 * day), orders: ["1000": .paid, "1002": .paid], entitled: true),
    Scenario(
        name: "OFFER_REDEEMED/INITIAL_BUY",
        why: "OFFER_REDEEMED/INITIAL_BUY: the customer subscribed for the first time with an offer code (status 1)",
        events: [apple("OFFER_REDEEMED", "INITIAL_BUY", at: t0, firstPeriod, status: 1)],
        contract: row(.active, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "OFFER_REDEEMED/UPGRADE",
        why: "OFFER_REDEEMED/UPGRADE: an offer to a higher level takes effect immediately",
        events: [
            buy,
            apple(
                "OFFER_REDEEMED", "UPGRADE", at: t0 + 10 * day, period("1001", product: "pro.plus.monthly", start: t0 + 10 * day),
                status: 1),
        ],
        contract: row(.active, t0 + 40 * day, product: "pro.plus.monthly"), orders: ["1000": .paid, "1001": .paid],
        entitled: true),
    Scenario(
        name: "OFFER_REDEEMED/DOWNGRADE",
        why: "OFFER_REDEEMED/DOWNGRADE: an offer to a lower level applies at the next renewal",
        events: [buy, apple("OFFER_REDEEMED", "DOWNGRADE", at: t0 + 10 * day, firstPeriod, status: 1, next: "basic.monthly")],
        contract: row(.active, t0 + 30 * day, next: "basic.monthly"), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "RENEWAL_EXTENSION/FAILURE",
        why: "RENEWAL_EXTENSION/FAILURE: Apple could not extend this subscription's renewal date; nothing changes",
        events: [buy, apple("RENEWAL_EXTENSION", "FAILURE", at: t0 + 10 * day, firstPeriod, status: 1)],
        contract: row(.active, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "resubscribe with a new originalTransactionId",
        why: "a purchase in the same group after expiry may start a new subscription (new originalTransactionId)",
        events: [
            buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0),
            apple(
                "SUBSCRIBED", "RESUBSCRIBE", at: t0 + 60 * day,
                period("2000", original: "2000", token: aliceSecond, start: t0 + 60 * day), status: 1),
        ],
        contract: row(.expired, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid, "2000": .paid], entitled: false),
    Scenario(
        name: "informational types change nothing",
        why: "CONSUMPTION_REQUEST, PRICE_INCREASE, REFUND_DECLINED, METADATA_UPDATE, MIGRATION, PRICE_CHANGE carry no new state",
        events: [
            buy, apple("CONSUMPTION_REQUEST", at: t0 + 2 * day, firstPeriod, status: 1),
            apple("PRICE_INCREASE", "PENDING", at: t0 + 3 * day, firstPeriod, status: 1),
            apple("PRICE_INCREASE", "ACCEPTED", at: t0 + 4 * day, firstPeriod, status: 1),
            apple("REFUND_DECLINED", at: t0 + 5 * day, firstPeriod, status: 1),
            apple("METADATA_UPDATE", at: t0 + 6 * day, firstPeriod, status: 1),
            apple("MIGRATION", at: t0 + 7 * day, firstPeriod, status: 1),
            apple("PRICE_CHANGE", at: t0 + 8 * day, firstPeriod, status: 1),
        ],
        contract: row(.active, t0 + 30 * day), orders: ["1000": .paid], entitled: true),

    // Every source of truth: Apple pushed, Apple pulled, the app, a restore.
    Scenario(
        name: "DID_RENEW signed ahead of its period",
        why: "Apple signs DID_RENEW before the new period's purchaseDate; until it starts, the paid period before it runs",
        events: [buy, apple("DID_RENEW", at: t0 + 30 * day - hour, secondPeriod, status: 1)],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "grace period recovered, sent by the app",
        why: "a period recovered within the grace period starts at the original renewal date, before the "
            + "DID_FAIL_TO_RENEW that started grace, but Apple signed it after: it ends grace whoever sent it",
        events: [
            buy,
            apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: t0 + 36 * day),
            submitted(secondPeriod, signed: t0 + 33 * day),
        ],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "grace period recovered, found by a restore",
        why: "the same recovered period through a restore: dated by when Apple signed it",
        events: [
            buy,
            apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: t0 + 36 * day),
            submitted(secondPeriod, signed: t0 + 33 * day, source: .restore),
        ],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "missed REFUND_REVERSED, corrected from Apple's API",
        why: "Get Transaction History is Apple's word: the refunded period, now signed without revocationDate, is paid again",
        events: [
            buy, renew,
            apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5),
            pulled(secondPeriod, signed: t0 + 50 * day),
        ],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "missed REFUND, found in Apple's API",
        why: "Get Transaction History signs the period with its revocationDate: refunded, the subscription revoked",
        events: [buy, renew, pulled(period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), signed: t0 + 40 * day)],
        contract: row(.revoked, t0 + 60 * day), orders: ["1000": .paid, "1001": .refunded], entitled: false),
    Scenario(
        name: "missed renewal, found in Apple's API",
        why: "Get All Subscription Statuses: the latest transaction is a period the database never saw; status 1",
        events: [buy, pulled(secondPeriod, signed: t0 + 30 * day + 2 * hour, status: 1, autoRenew: 1)],
        contract: row(.active, t0 + 60 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "missed expiry, told by Apple's API",
        why: "Get All Subscription Statuses: status 2 expired, auto-renew off",
        events: [buy, pulled(firstPeriod, signed: t0 + 31 * day, status: 2, autoRenew: 0)],
        contract: row(.expired, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "billing retry, told by Apple's API",
        why: "Get All Subscription Statuses: status 3, Apple is retrying the charge; no access",
        events: [buy, pulled(firstPeriod, signed: t0 + 31 * day, status: 3, autoRenew: 1)],
        contract: row(.billingRetry, t0 + 30 * day), orders: ["1000": .paid], entitled: false),
    Scenario(
        name: "grace period, told by Apple's API",
        why: "Get All Subscription Statuses: status 4, billing grace period, gracePeriodExpiresDate in the renewal info",
        events: [buy, pulled(firstPeriod, signed: t0 + 30 * day + 2 * hour, status: 4, autoRenew: 1, grace: t0 + 36 * day)],
        contract: row(.gracePeriod, t0 + 30 * day), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "auto-renew off, told by Apple's API",
        why: "Get All Subscription Statuses: status 1, renewal info autoRenewStatus 0: canceled, entitled until expiry",
        events: [buy, pulled(firstPeriod, signed: t0 + 5 * day, status: 1, autoRenew: 0)],
        contract: row(.canceled, t0 + 30 * day, autoRenew: false), orders: ["1000": .paid], entitled: true),
    Scenario(
        name: "an older status from Apple's API never outweighs a newer notification",
        why: "billing retry answered at day 31, then DID_RENEW/BILLING_RECOVERY signed at day 33: the newest statement wins",
        events: [
            buy, pulled(firstPeriod, signed: t0 + 31 * day, status: 3, autoRenew: 1),
            apple("DID_RENEW", "BILLING_RECOVERY", at: t0 + 33 * day + hour, period("1001", start: t0 + 33 * day), status: 1),
        ],
        contract: row(.active, t0 + 63 * day), orders: ["1000": .paid, "1001": .paid], entitled: true),
    Scenario(
        name: "every source at once: pushed, pulled, the app, a restore",
        why: "the same subscription told by each source; the rows follow the newest signed statement",
        events: [
            buy, submitted(firstPeriod, signed: t0 + 2 * day), renew,
            submitted(secondPeriod, signed: t0 + 31 * day, source: .restore),
            pulled(secondPeriod, signed: t0 + 40 * day, status: 1, autoRenew: 0),
        ],
        contract: row(.canceled, t0 + 60 * day, autoRenew: false), orders: ["1000": .paid, "1001": .paid], entitled: true),
]

@Suite("Specification: Apple's lifecycles, in any order")
struct SpecificationTests {
    func harness(_ backend: Backend) throws -> Harness {
        let h = try Harness(backend: backend)
        try h.createOrder(no: alice, user: "alice")
        try h.createOrder(no: aliceSecond, user: "alice")
        try h.createOrder(no: bobOrder, user: "bob")
        return h
    }

    func run(_ events: [SubscriptionEvent], on backend: Backend) throws -> Harness {
        let h = try harness(backend)
        for e in events { try h.apply(e) }
        return h
    }

    func contractRow(_ h: Harness) throws -> String? {
        try h.contract("1000").map { c in
            "\(c.status.rawValue) \(c.productId) \(c.expiresDate ?? -1) \(c.autoRenew) \(c.nextProductId ?? "-")"
        }
    }

    @Test(arguments: scenarios, Backend.available)
    func lifecycleGivesTheDocumentedRows(_ s: Scenario, backend: Backend) throws {
        let h = try run(s.events, on: backend)
        #expect(try contractRow(h) == s.contract, "\(s.why)")
        for (id, status) in s.orders {
            #expect(try h.order(tradeNo: id)?.status == status, "order \(id): \(s.why)")
        }
        #expect(try h.orders().filter { $0.tradeNo != nil }.count == s.orders.count)
        #expect(try h.contract("1000")?.userId == "alice")
        let last = s.events.compactMap(\.signedDate).max()!
        #expect(try h.entitlement("1000", at: last + 1).entitled == s.entitled, "\(s.why)")
    }

    @Test(arguments: scenarios, Backend.available)
    func everyAdjacentSwapAndTheReverseGiveTheSameTables(_ s: Scenario, backend: Backend) throws {
        let reference = try run(s.events, on: backend).snapshot(withFacts: true)
        var orders: [[SubscriptionEvent]] = [s.events.reversed()]
        for i in 0..<(s.events.count - 1) {
            var swapped = s.events
            swapped.swapAt(i, i + 1)
            orders.append(swapped)
        }
        for events in orders {
            #expect(
                try run(events, on: backend).snapshot(withFacts: true) == reference,
                "\(events.map { $0.notificationType?.rawValue ?? "client" })")
        }
    }

    @Test(arguments: scenarios, Backend.available)
    func replayingEverythingAgainChangesNothing(_ s: Scenario, backend: Backend) throws {
        let h = try run(s.events, on: backend)
        let before = try h.snapshot(withFacts: true)
        for e in s.events.reversed() {
            let again = try h.apply(e)
            #expect(again.verdict == .duplicate)
            #expect(again.changes.isEmpty)
        }
        #expect(try h.snapshot(withFacts: true) == before)
    }

    // MARK: the client path and restore (property 3)

    @Test(
        arguments: [
            ("expired", [buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0)]),
            ("billing retry", [buy, apple("DID_FAIL_TO_RENEW", at: t0 + 30 * day + hour, firstPeriod, status: 3)]),
            (
                "canceled",
                [buy, apple("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: t0 + 5 * day, firstPeriod, status: 1, autoRenew: 0)]
            ),
            (
                "refunded",
                [buy, apple("REFUND", at: t0 + 5 * day, period("1000", start: t0, revokedAt: t0 + 5 * day), status: 5)]
            ),
        ] as [(String, [SubscriptionEvent])])
    func anOldFreshlySignedTransactionFromTheAppOrARestoreNeverReopens(_ state: String, _ events: [SubscriptionEvent]) throws {
        for backend in Backend.available {
            try oldSubmissionNeverReopens(state, events, on: backend)
        }
    }

    func oldSubmissionNeverReopens(_ state: String, _ events: [SubscriptionEvent], on backend: Backend) throws {
        for source in [EventSource.client, .restore] {
            let h = try run(events, on: backend)
            let before = try h.snapshot()
            let out = try h.apply(submitted(firstPeriod, signed: t0 + 100 * day, source: source))
            #expect(out.changes.isEmpty, "\(state) via \(source): \(out.detail)")
            #expect(try h.snapshot() == before, "\(state) via \(source)")
            #expect(try h.entitlement("1000", at: t0 + 100 * day + 1).entitled == false)
            #expect(try h.order(tradeNo: "1000")?.status == (state == "refunded" ? .refunded : .paid))
        }
    }

    @Test(arguments: Backend.available)
    func theAppsSubmissionOfANewPeriodMakesTheContractActiveBeforeApplesNotification(backend: Backend) throws {
        let h = try run([buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0)], on: backend)
        let resubscribed = period("1002", start: t0 + 50 * day)
        let out = try h.apply(submitted(resubscribed, signed: t0 + 50 * day + 1))
        #expect(out.verdict == .applied)
        #expect(try h.contract("1000")?.status == .canceled)  // Apple's last renewal info still says auto-renew off
        #expect(try h.entitlement("1000", at: t0 + 51 * day).entitled)
    }

    // MARK: property 6: refunds in any order

    @Test(arguments: Backend.available)
    func aLateRenewalOfARefundedPeriodDoesNotReopenIt(backend: Backend) throws {
        let refund = apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5)
        let h = try run([buy, refund, renew], on: backend)
        #expect(try h.contract("1000")?.status == .revoked)
        #expect(try h.order(tradeNo: "1001")?.status == .refunded)
    }

    @Test(arguments: Backend.available)
    func refundReversedBeforeTheOlderRefundStaysReversed(backend: Backend) throws {
        let refund = apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5)
        let reversed = apple("REFUND_REVERSED", at: t0 + 40 * day, secondPeriod, status: 1)
        let h = try run([buy, renew, reversed, refund], on: backend)
        #expect(try h.order(tradeNo: "1001")?.status == .paid)
        #expect(try h.contract("1000")?.status == .active)
    }

    @Test(arguments: Backend.available)
    func theAppCannotLiftARefund(backend: Backend) throws {
        let refund = apple("REFUND", at: t0 + 35 * day, period("1001", start: t0 + 30 * day, revokedAt: t0 + 35 * day), status: 5)
        let h = try run([buy, renew, refund], on: backend)
        try h.apply(submitted(secondPeriod, signed: t0 + 50 * day))
        #expect(try h.order(tradeNo: "1001")?.status == .refunded)
        #expect(try h.contract("1000")?.status == .revoked)
    }

    // MARK: property 8: one owner per contract

    @Test(arguments: Backend.available)
    func aTransactionNamingAnotherUsersOrderIsAConflictAndChangesNothing(backend: Backend) throws {
        let h = try run([buy], on: backend)
        let before = try h.snapshot()
        let hijack = apple("SUBSCRIBED", "RESUBSCRIBE", at: t0 + 40 * day, period("1002", token: bobOrder, start: t0 + 40 * day), status: 1)
        let out = try h.apply(hijack)
        #expect(out.verdict == .conflict)
        #expect(out.changes.isEmpty)
        #expect(out.detail.contains("bob") && out.detail.contains("alice"))
        // The command it suggests names the order's user as one shell word.
        #expect(out.detail.contains("`iapctl restore --user bob --policy transfer`"))
        #expect(try h.snapshot() == before)
        #expect(try h.order(bobOrder)?.status == .pending)
        #expect(try h.ledger().contains { $0.verdict == .conflict && $0.raw == hijack.raw })
    }

    // MARK: property 2: an unmatched item arriving again is not stored twice

    @Test(arguments: Backend.available)
    func anUnmatchedItemArrivingAgainIsNotStoredTwice(backend: Backend) throws {
        let h = try Harness(backend: backend)
        let orphan = submitted(period("1000", token: nil, start: t0), signed: t0 + 1)
        #expect(try h.apply(orphan).verdict == .unmatched)
        let again = try h.apply(orphan)
        #expect(again.verdict == .unmatched)
        #expect(again.detail.contains("not stored twice"))
        #expect(try h.ledger().count == 1)
        #expect(try h.store.read { try $0.unmatchedLedger(limit: nil) }.count == 1)
    }

    @Test(arguments: Backend.available)
    func anUnmatchedNotificationDeliveredAgainIsNotStoredTwice(backend: Backend) throws {
        let h = try Harness(backend: backend)
        let orphan = apple("DID_RENEW", at: t0 + 30 * day, period("1001", token: nil, start: t0 + 30 * day), status: 1)
        for _ in 0..<3 { #expect(try h.apply(orphan).verdict == .unmatched) }
        #expect(try h.ledger().count == 1)
        #expect(try h.store.read { try $0.facts(originalTransactionId: "1000") }.count == 3)
    }

    @Test(arguments: Backend.available)
    func factsOfAnUnmatchedItemCountOnceItsOwnerIsKnown(backend: Backend) throws {
        // The renewal arrives before the purchase that names alice's order: in the end both are hers.
        let h = try harness(backend)
        #expect(
            try h.apply(apple("DID_RENEW", at: t0 + 30 * day + hour, period("1001", token: nil, start: t0 + 30 * day), status: 1)).verdict
                == .unmatched)
        #expect(try h.apply(buy).verdict == .applied)
        #expect(try h.order(tradeNo: "1001")?.userId == "alice")
        #expect(try h.contract("1000")?.expiresDate == t0 + 60 * day)
    }

    // MARK: renewals echo the first order's token, in any order

    @Test(arguments: Backend.available)
    func theFirstPurchaseClaimsTheTokenOrderWhicheverArrivesFirst(backend: Backend) throws {
        let h = try run([renew, buy], on: backend)
        #expect(try h.order(alice)?.tradeNo == "1000")
        #expect(try h.order(tradeNo: "1001")?.no.hasPrefix("renewal-") == true)
        #expect(try h.snapshot(withFacts: true) == run([buy, renew], on: backend).snapshot(withFacts: true))
    }

    // MARK: property 7: the grace period ends on Apple's date

    @Test(arguments: Backend.available)
    func theGracePeriodEntitlesUntilItsEndThenBillingRetry(backend: Backend) throws {
        let graceEnds = t0 + 36 * day
        let h = try run(
            [buy, apple("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: t0 + 30 * day + hour, firstPeriod, status: 4, grace: graceEnds)],
            on: backend)
        #expect(try h.contract("1000")?.status == .gracePeriod)
        let during = try h.entitlement("1000", at: graceEnds - 1)
        #expect(during.entitled && during.status == "grace_period", "\(during.reason)")
        let after = try h.entitlement("1000", at: graceEnds + 1)
        #expect(!after.entitled && after.status == "billing_retry", "\(after.reason)")
        #expect(after.reason.contains(Date(timeIntervalSince1970: Double(graceEnds) / 1000).formatted(.iso8601)))
    }

    // MARK: entitled reasons carry the fact's own date

    @Test(arguments: Backend.available)
    func entitledReasonsNameTheFactsDateNotTheQueryTime(backend: Backend) throws {
        let h = try run([buy, apple("EXPIRED", "VOLUNTARY", at: t0 + 30 * day, firstPeriod, status: 2, autoRenew: 0)], on: backend)
        let query = t0 + 77 * day
        let answer = try h.entitlement("1000", at: query)
        #expect(!answer.entitled)
        let ended = Date(timeIntervalSince1970: Double(t0 + 30 * day) / 1000).formatted(.iso8601)
        let asked = Date(timeIntervalSince1970: Double(query) / 1000).formatted(.iso8601)
        #expect(answer.reason.contains(ended), "\(answer.reason)")
        #expect(!answer.reason.contains(asked), "\(answer.reason)")
    }
}
