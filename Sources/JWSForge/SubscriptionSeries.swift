/// A deterministic stream of notifications for benchmarks: N initial purchases, then R renewal rounds.
///
/// Subscription `i` (0-based) has transaction counter `k = i` for its INITIAL_BUY and `k = N·r + i` for renewal
/// `r` (1…R); `transactionId = firstTransactionId + k`, `originalTransactionId` = its INITIAL_BUY's id,
/// `notificationUUID = <seed as 8 hex>-0000-4000-8000-<k as 12 hex>`. Subscription `i` starts at
/// `start + i·spacing`; each renewal moves purchase and expiry forward by `period`.
public struct SubscriptionSeries: Sendable {
    /// Number of subscriptions (one per order token).
    public var orders: Int
    /// Renewal rounds after the initial purchase.
    public var renewals: Int
    /// `appAccountToken` of subscription `i` (must have at least `orders` entries).
    public var tokens: [String]
    public var productId = "com.example.iapctl.monthly"
    /// First subscription start, ms since the epoch (default 2025-01-01T00:00:00Z).
    public var start: Int64 = 1_735_689_600_000
    /// Milliseconds between consecutive subscriptions' starts.
    public var spacing: Int64 = 1000
    /// Subscription period in ms (default 30 days).
    public var period: Int64 = 30 * 86_400_000
    /// Transaction id of counter 0.
    public var firstTransactionId: Int64 = 2_000_000_000_000_000
    /// Goes into the first UUID group so two runs with different seeds never share notificationUUIDs.
    public var seed: UInt32 = 0
    public var price: Int64 = 9990
    public var currency = "USD"

    /// A series of `orders` subscriptions with `renewals` renewals each.
    public init(orders: Int, renewals: Int, tokens: [String]) {
        self.orders = orders
        self.renewals = renewals
        self.tokens = tokens
    }

    /// Total notifications: `orders × (1 + renewals)`.
    public var count: Int { orders * (1 + renewals) }

    /// Signs each notification in order (all initial buys, then renewal round 1 for every subscription, …)
    /// and hands its compact JWS to `emit`.
    public func generate(with builder: PayloadBuilder, emit: (String) throws -> Void) throws {
        guard orders >= 0, renewals >= 0 else { throw ForgeError("orders and renewals must not be negative") }
        guard tokens.count >= orders else {
            throw ForgeError("need \(orders) order tokens, got \(tokens.count)")
        }
        for round in 0...renewals {
            for i in 0..<orders {
                try emit(try notification(index: i, round: round, builder: builder))
            }
        }
    }

    /// The notification for subscription `index` in renewal `round` (0 = initial purchase).
    public func notification(index i: Int, round: Int, builder: PayloadBuilder) throws -> String {
        let k = Int64(orders) * Int64(round) + Int64(i)
        let originalId = String(firstTransactionId + Int64(i))
        let originalPurchase = start + Int64(i) * spacing
        let purchase = originalPurchase + Int64(round) * period
        let expires = purchase + period
        let signedDate = purchase + 5_000
        let transaction = TransactionPayload(
            transactionId: String(firstTransactionId + k), originalTransactionId: originalId,
            webOrderLineItemId: String(firstTransactionId + 1_000_000_000_000_000 + k),
            bundleId: builder.bundleId, productId: productId, purchaseDate: purchase,
            originalPurchaseDate: originalPurchase, expiresDate: expires, appAccountToken: tokens[i],
            signedDate: signedDate, environment: builder.environment,
            transactionReason: round == 0 ? "PURCHASE" : "RENEWAL", currency: currency, price: price)
        let renewal = RenewalInfoPayload(
            originalTransactionId: originalId, autoRenewProductId: productId, productId: productId,
            renewalPrice: price, currency: currency, signedDate: signedDate, environment: builder.environment,
            recentSubscriptionStartDate: originalPurchase, renewalDate: expires, appAccountToken: tokens[i])
        return try builder.notification(
            type: round == 0 ? "SUBSCRIBED" : "DID_RENEW", subtype: round == 0 ? "INITIAL_BUY" : nil,
            uuid: SubscriptionSeries.uuid(seed: seed, counter: k), signedDate: signedDate,
            transaction: transaction, renewal: renewal)
    }

    /// `<seed 8 hex>-0000-4000-8000-<counter 12 hex>`: a valid (version 4 layout) deterministic UUID.
    public static func uuid(seed: UInt32, counter: Int64) -> String {
        func hex(_ value: UInt64, _ width: Int) -> String {
            let s = String(value, radix: 16)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return hex(UInt64(seed), 8) + "-0000-4000-8000-" + hex(UInt64(counter) & 0xFFFF_FFFF_FFFF, 12)
    }
}
