import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

/// Why a subscription ended, or why it may not renew, in words: read from the newest signed renewal
/// info Apple sent (expirationIntent, isInBillingRetryPeriod, gracePeriodExpiresDate,
/// priceIncreaseStatus, autoRenewStatus, autoRenewProductId, the offer fields), the notifications'
/// type and subtype, and the contract's row. Derived on every read, never stored; a field Apple did
/// not send (or that was kept before iapctl kept it) is not guessed: the sentence is left out.
public struct RenewalRisk: Sendable, Equatable {
    /// The kinds `contracts list --risk` filters on.
    public enum Kind: String, Sendable, CaseIterable {
        /// Apple could not charge and is retrying (no access outside a grace period).
        case billingRetry = "billing-retry"
        /// Apple could not charge and keeps access during the billing grace period.
        case grace
        /// A price increase that needs the customer's consent has not been consented to.
        case priceConsent = "price-consent"
        /// The customer turned auto-renew off: the subscription ends at its expiry.
        case autoRenewOff = "auto-renew-off"
    }

    /// The kinds that apply (in ``Kind``'s order).
    public var kinds: [Kind] = []
    /// Why it ended, when it ended (`expired`, `revoked`): one sentence.
    public var ended: String?
    /// Each reason it may not renew, or what changes at the next renewal, one sentence each.
    public var notes: [String] = []
    /// The newest renewal info's signedDate (nil: Apple sent none the database kept).
    public var renewalInfoSignedDate: Int64?
    /// Apple's raw values the sentences come from (JSON keys as Apple names them, snake_case).
    public var expirationIntent: Int?
    public var priceIncreaseStatus: Int?
    public var gracePeriodExpiresDate: Int64?
    public var billingRetry: Bool?
    public var nextProductId: String?
    public var renewalPrice: Int64?
    public var currency: String?
    public var offerType: Int?
    public var offerIdentifier: String?

    /// Every sentence: why it ended first, then the notes.
    public var sentences: [String] { (ended.map { [$0] } ?? []) + notes }

    /// One line for a table cell: the sentences joined, or `none known`.
    public var summary: String { sentences.isEmpty ? "none known" : sentences.joined(separator: "; ") }

    /// How long Apple retries a failed renewal, from the end of the period (Apple's documentation:
    /// "up to 60 days").
    public static let billingRetryWindow: Int64 = 60 * 86_400_000

    /// The risk of `contract` from its kept `facts`, at `now`.
    public static func of(_ contract: Contract, facts: [Fact], now: Int64) -> RenewalRisk {
        let set = FactSet(facts)
        let renewal = newest(set.renewals)
        let note = newest(set.notifications)
        var risk = RenewalRisk()
        let r = renewal?.value
        risk.renewalInfoSignedDate = renewal?.signedDate
        risk.expirationIntent = r?.expirationIntent
        risk.priceIncreaseStatus = r?.priceIncreaseStatus
        risk.gracePeriodExpiresDate = r?.gracePeriodExpiresDate
        risk.billingRetry = r?.isInBillingRetryPeriod
        risk.renewalPrice = r?.renewalPrice
        risk.currency = r?.currency
        risk.offerType = r?.offerType
        risk.offerIdentifier = r?.offerIdentifier
        let expires = contract.expiresDate.map(Timestamp.iso8601) ?? "its expiry"
        let ended = contract.status == .expired || contract.status == .revoked

        if contract.status == .revoked {
            risk.ended = "ended: Apple refunded or revoked the current period"
        } else if contract.status == .expired {
            let intent = r?.expirationIntent.flatMap(Self.intentWords)
            let subtype = note?.value.notificationType == .known(.expired) ? note?.value.subtype.map(\.rawValue) : nil
            if let intent {
                risk.ended = "ended at \(expires): \(intent) (expirationIntent \(r?.expirationIntent ?? 0))"
            } else if let subtype, let words = Self.expiredSubtypeWords[subtype] {
                risk.ended = "ended at \(expires): \(words) (EXPIRED/\(subtype))"
            } else {
                risk.ended = "ended at \(expires): Apple's renewal info does not say why"
            }
        }
        guard !ended else { return risk }

        let inGrace = contract.status == .gracePeriod || (r?.gracePeriodExpiresDate.map { $0 > now } ?? false)
        let retrying = contract.status == .billingRetry || contract.status == .gracePeriod || r?.isInBillingRetryPeriod == true
        if retrying {
            let retryUntil = contract.expiresDate.map { Timestamp.iso8601($0 + billingRetryWindow) }
            if inGrace {
                risk.kinds.append(.grace)
                let graceEnd = r?.gracePeriodExpiresDate.map(Timestamp.iso8601)
                risk.notes.append(
                    "billing error: Apple could not charge at \(expires); grace period"
                        + (graceEnd.map { " until \($0)" } ?? "") + " (access kept), then billing retry"
                        + (retryUntil.map { " up to 60 days from the expiry, until at most \($0)" } ?? ""))
            } else {
                risk.kinds.append(.billingRetry)
                risk.notes.append(
                    "billing error: Apple could not charge at \(expires) and is retrying (no access meanwhile)"
                        + (retryUntil.map { " up to 60 days from the expiry, until at most \($0)" } ?? ""))
            }
        }
        if r?.priceIncreaseStatus == 0 {
            risk.kinds.append(.priceConsent)
            let told = set.notifications.filter { $0.value.notificationType == .known(.priceIncrease) }
                .map(\.signedDate).max()
            let at = r?.renewalDate.map(Timestamp.iso8601) ?? expires
            risk.notes.append(
                "price increase not consented"
                    + (told.map { " (Apple told the customer \(Timestamp.iso8601($0)))" } ?? "")
                    + ": the subscription expires at \(at) unless the customer accepts"
                    + (price(r).map { " the new price \($0)" } ?? ""))
        }
        if !contract.autoRenew || r?.autoRenewStatus == 0 {
            risk.kinds.append(.autoRenewOff)
            risk.notes.append("auto-renew off: the customer cancelled; access ends at \(expires) (voluntary)")
        }
        let next = contract.nextProductId ?? r?.autoRenewProductId
        if let next, next != contract.productId {
            risk.nextProductId = next
            risk.notes.append("product change at the next renewal (\(expires)): renews into \(next)")
        }
        if r?.offerType != nil || r?.offerIdentifier != nil {
            let kind = r?.offerType.flatMap { Self.offerWords[$0] } ?? "an offer"
            risk.notes.append(
                "offer in use at the next renewal: \(kind)" + (r?.offerIdentifier.map { " \($0)" } ?? "")
                    + (r?.offerPeriod.map { ", period \($0)" } ?? ""))
        }
        return risk
    }

    /// Apple's `expirationIntent` in words.
    static func intentWords(_ intent: Int) -> String? {
        switch intent {
        case 1: return "the customer cancelled (voluntary)"
        case 2: return "billing error: Apple could not charge"
        case 3: return "the customer did not consent to a price increase"
        case 4: return "the product was not for sale at renewal"
        case 5: return "another reason Apple does not name"
        default: return nil
        }
    }

    /// The subtypes of an EXPIRED notification in words.
    static let expiredSubtypeWords: [String: String] = [
        "VOLUNTARY": "the customer cancelled (voluntary)",
        "BILLING_RETRY": "billing error: Apple's billing retry ended without a charge",
        "PRICE_INCREASE": "the customer did not consent to a price increase",
        "PRODUCT_NOT_FOR_SALE": "the product was not for sale at renewal",
    ]

    /// Apple's `offerType`.
    static let offerWords: [Int: String] = [
        1: "introductory offer", 2: "promotional offer", 3: "offer code", 4: "win-back offer",
    ]

    /// `9.99 USD` from the renewal info's price and currency.
    static func price(_ r: RenewalFacts?) -> String? {
        guard let milli = r?.renewalPrice else { return nil }
        let magnitude = milli.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        if fraction.hasSuffix("0") { fraction.removeLast() }
        return (milli < 0 ? "-" : "") + String(magnitude / 1000) + "." + fraction + (r?.currency.map { " \($0)" } ?? "")
    }

    private static func newest<Value>(_ versions: [Versioned<Value>]) -> Versioned<Value>? {
        versions.reduce(nil) { best, next in
            guard let best else { return next }
            return next.isNewer(than: best) ? next : best
        }
    }

    /// The risk of each of `contracts`, read in the caller's transaction.
    public static func of(_ contracts: [Contract], now: Int64, in session: any StoreSession) throws -> [RenewalRisk] {
        try contracts.map { try of($0, facts: session.facts(originalTransactionId: $0.contractId), now: now) }
    }
}
