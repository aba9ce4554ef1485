import IAPFoundation
import StoreTestSupport
import SubscriptionDerivation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Random histories of one subscription (original transaction ``original``), shared by the
/// derivation's rule tests (`RuleKeepsTests`, which cut them) and the engine's agreement tests
/// (`SnapshotAgreementTests`, which apply them to both stores). Each part of the snapshot's prune
/// rule (``SubscriptionSnapshot/make``) is told apart by some history here:
/// - periods that overlap (a renewal bought before the previous period ends, a period extended), so
///   an older period re-signed late within its period (a restore, Apple's API answering) is the
///   newest payment while a newer one is current, and payment evidence orders differently from
///   purchase dates;
/// - dates on a half-day grid, so evidence times, notifications and renewal infos tie;
/// - revocations (most of periods that are not current) and their reversal, upgrades;
/// - orders the app creates for tokens that later periods carry (tokens naming orders);
/// - statements (failures, expiries, toggles, API statuses) signed between two periods' evidence times.
public enum SubscriptionHistory {
    /// One step of a history: an event, or what else happens to the rows between events.
    public enum Step: Sendable {
        case event(SubscriptionEvent)
        /// The contract's status set by hand.
        case override(ContractStatus)
        /// The subscription's rows derived again from its facts.
        case rederive
        /// The app creates the order a token names before the purchase that carries it.
        case appOrder(String)
    }

    /// The subscription's original transaction id.
    public static let original = "1000"
    public static let day: Int64 = 86_400_000
    public static let t0: Int64 = 1_700_000_000_000

    public static let halfDay: Int64 = 43_200_000

    /// 5–40 steps, with every kind of statement, some delivered late or twice.
    public static func random(_ rng: inout SplitMix) -> [Step] {
        var steps: [Step] = []
        var periods = 1
        var clock = t0
        var product = "pro.monthly"
        var known: [TransactionFacts] = [period(0)]
        var delivered: [SubscriptionEvent] = []
        var late: [SubscriptionEvent] = []
        var tokens: [String] = ["tok-a"]
        func push(_ event: SubscriptionEvent) {
            // Out of order: sometimes held back and delivered a few steps later.
            if Int.random(in: 0..<6, using: &rng) == 0 {
                late.append(event)
            } else {
                steps.append(.event(event))
                delivered.append(event)
            }
        }
        func halfDays(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &rng) * halfDay }
        /// One of the newest periods, mostly not the newest.
        func recent() -> Int {
            let count = known.count
            guard count > 1, Int.random(in: 0..<4, using: &rng) != 0 else { return Int.random(in: 0..<count, using: &rng) }
            return count - 1 - Int.random(in: 1...min(3, count - 1), using: &rng)
        }
        push(apple("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: period(0), status: 1))
        for _ in 0..<Int.random(in: 5...40, using: &rng) {
            clock += halfDays(0...6)
            let current = known.last!
            switch Int.random(in: 0..<30, using: &rng) {
            case 0..<9:
                // A renewal, sometimes bought before the previous period ends (overlapping it).
                // Its token: one the app made an order for (before any purchase carried it), one
                // naming no order, or none.
                // tok-b and tok-c also before the app creates their orders (then the payment keeps its own row).
                let pool: [String?] = tokens + ["tok-a", "tok-x", "tok-b", "tok-c", nil]
                var tx = period(periods, product: product, token: pool.randomElement(using: &rng)!)
                let previousEnd = current.expiresDate ?? tx.purchaseDate!
                let overlap = Bool.random(using: &rng) ? halfDays(1...20) : 0
                tx.purchaseDate = max(current.purchaseDate! + halfDay, previousEnd - overlap)
                tx.expiresDate = tx.purchaseDate! + 30 * day
                tx.signedDate = tx.purchaseDate
                clock = max(clock, tx.purchaseDate! - halfDays(0...2))
                periods += 1
                known.append(tx)
                let client = Int.random(in: 0..<6, using: &rng) == 0
                push(client ? Self.client(tx, signed: clock) : apple("DID_RENEW", signed: clock, tx: tx, status: 1))
            case 9:
                let on = Int.random(in: 0...1, using: &rng)
                push(
                    apple(
                        "DID_CHANGE_RENEWAL_STATUS", on == 1 ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED", signed: clock,
                        tx: Bool.random(using: &rng) ? current : nil,
                        status: 1, autoRenew: on))
            case 10:
                let grace = Bool.random(using: &rng)
                push(
                    apple(
                        "DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, signed: clock, tx: current, status: grace ? 4 : 3,
                        grace: grace ? clock + 6 * day : nil))
            case 11:
                push(
                    apple(
                        ["EXPIRED", "GRACE_PERIOD_EXPIRED"].randomElement(using: &rng)!, signed: clock, tx: current, status: 2, autoRenew: 0
                    ))
            case 12, 13:
                // A refund or revocation, mostly of a period that is not the current one.
                let index = recent()
                var tx = known[index]
                let family = Bool.random(using: &rng)
                tx.revocationDate = clock
                tx.revocationReason = 0
                if family { tx.revocationType = .init(rawValue: "FAMILY_REVOKE") }
                known[index] = tx
                push(apple(family ? "REVOKE" : "REFUND", signed: clock, tx: tx, status: [1, 2, 5].randomElement(using: &rng)!))
            case 14:
                guard let index = known.firstIndex(where: { $0.revocationDate != nil }) else { continue }
                var tx = known[index]
                tx.revocationDate = nil
                tx.revocationReason = nil
                tx.revocationType = nil
                known[index] = tx
                push(apple("REFUND_REVERSED", signed: clock, tx: tx, status: 1))
            case 15:
                // An upgrade: a new period of the other product now; the old one marked upgraded.
                product = product == "pro.monthly" ? "pro.yearly" : "pro.monthly"
                var tx = period(periods, product: product)
                tx.purchaseDate = max(clock, current.purchaseDate! + halfDay)
                tx.expiresDate = tx.purchaseDate! + 30 * day
                periods += 1
                var old = current
                old.isUpgraded = true
                known[known.count - 1] = old
                known.append(tx)
                push(apple("DID_CHANGE_RENEWAL_PREF", "UPGRADE", signed: clock, tx: tx, status: 1))
                push(Self.client(old, signed: clock))
            case 16:
                // The app submits a known period again (verify), or from its receipt.
                var tx = known.randomElement(using: &rng)!
                tx.isFromReceipt = Int.random(in: 0..<3, using: &rng) == 0
                push(Self.client(tx, signed: Bool.random(using: &rng) ? clock : tx.signedDate!))
            case 17:
                // Apple's API answering the subscription's status.
                push(
                    SubscriptionEvent(
                        source: .appleAPI, signedDate: clock, environment: "Sandbox", bundleId: "com.example", transaction: current,
                        raw: "api-\(clock)", status: [1, 2, 3, 4].randomElement(using: &rng)!))
            case 18:
                // Delivered twice: the same notification again, or the same facts under a new UUID.
                guard var again = delivered.randomElement(using: &rng) else { continue }
                if Bool.random(using: &rng), again.notificationUUID != nil { again.notificationUUID = UUID().uuidString }
                steps.append(.event(again))
            case 19:
                steps.append(.override([.expired, .revoked, .active].randomElement(using: &rng)!))
            case 20:
                steps.append(.rederive)
            case 21:
                // The current period extended (RENEWAL_EXTENDED, or a longer period the app re-submits
                // later): an older period can then be the newest payment while a newer one is current.
                var tx = current
                tx.expiresDate = (tx.expiresDate ?? clock) + halfDays(1...60)
                known[known.count - 1] = tx
                push(
                    Bool.random(using: &rng) ? apple("RENEWAL_EXTENDED", signed: clock, tx: tx, status: 1) : Self.client(tx, signed: clock))
            case 22, 23, 24:
                // An older period re-signed late within its period (a restore, Apple's API answer): its
                // payment evidence can then be newer than a newer period's, or tie with it. Sometimes
                // after a failure signed once the newer period began, and before a toggle that says no
                // status (the toggle then rewrites the contract from what the facts say).
                let index = Bool.random(using: &rng) ? max(0, known.count - 2) : recent()
                let tx = known[index]
                guard let purchased = tx.purchaseDate, let expires = tx.expiresDate else { continue }
                let signed = max(purchased, expires - halfDays(0...6))
                if index + 1 < known.count, let newer = known[index + 1].purchaseDate, Int.random(in: 0..<3, using: &rng) != 0 {
                    push(apple("DID_FAIL_TO_RENEW", signed: max(newer, signed - halfDays(0...4)), tx: current, status: 3))
                }
                if Bool.random(using: &rng) {
                    push(Self.client(tx, signed: signed))
                } else {
                    var answered = tx
                    answered.signedDate = signed
                    push(
                        SubscriptionEvent(
                            source: .appleAPI, signedDate: signed, environment: "Sandbox", bundleId: "com.example",
                            transaction: answered, raw: "api-\(tx.transactionId)-\(signed)", status: [1, 2, 3].randomElement(using: &rng)!))
                }
                if Int.random(in: 0..<3, using: &rng) != 0 {
                    let on = Int.random(in: 0...1, using: &rng)
                    push(
                        apple(
                            "DID_CHANGE_RENEWAL_STATUS", on == 1 ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED",
                            signed: max(signed, clock) + halfDays(0...2), tx: nil, status: nil, autoRenew: on))
                }
            case 25, 26:
                // A statement signed between two periods' payment evidence (delivered late).
                let around = known[recent()].purchaseDate ?? clock
                let signed = around + halfDays(-2...4)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: push(apple("DID_FAIL_TO_RENEW", signed: signed, tx: current, status: 3))
                case 1:
                    push(
                        apple("EXPIRED", "VOLUNTARY", signed: signed, tx: Bool.random(using: &rng) ? current : nil, status: 2, autoRenew: 0)
                    )
                case 2:
                    let on = Int.random(in: 0...1, using: &rng)
                    push(
                        apple(
                            "DID_CHANGE_RENEWAL_STATUS", on == 1 ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED", signed: signed, tx: nil,
                            status: nil, autoRenew: on))
                default:
                    push(
                        SubscriptionEvent(
                            source: .appleAPI, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: current,
                            raw: "api-between-\(signed)", status: [1, 2, 3, 4].randomElement(using: &rng)!))
                }
            case 27:
                // The app creates the order a purchase's token names: before any period carries it, or
                // after one got a row of its own (that payment stays on its row; the order stays the app's).
                guard let token = ["tok-b", "tok-c"].filter({ !tokens.contains($0) }).randomElement(using: &rng) else { continue }
                tokens.append(token)
                steps.append(.appOrder(token))
            default:
                push(apple("CONSUMPTION_REQUEST", signed: clock, tx: current, status: nil, autoRenew: nil))
            }
            if !late.isEmpty, Int.random(in: 0..<3, using: &rng) == 0 {
                let event = late.removeFirst()
                steps.append(.event(event))
                delivered.append(event)
            }
        }
        for event in late { steps.append(.event(event)) }
        return steps
    }

    /// Period `k` of the subscription: 30 days from `t0 + k × 30 days`, signed when it begins.
    public static func period(_ k: Int, product: String = "pro.monthly", token: String? = "tok-a") -> TransactionFacts {
        TransactionFacts(
            transactionId: k == 0 ? original : "\(20_000 + k)", originalTransactionId: original, productId: product,
            appAccountToken: token, purchaseDate: t0 + Int64(k) * 30 * day, originalPurchaseDate: t0,
            expiresDate: t0 + Int64(k + 1) * 30 * day, type: ProductType(rawValue: "Auto-Renewable Subscription"),
            environment: "Sandbox", price: 9_990, currency: "USD", signedDate: t0 + Int64(k) * 30 * day)
    }

    /// A notification from Apple with its transaction and (unless `autoRenew` is nil) renewal info.
    public static func apple(
        _ type: String, _ subtype: String? = nil, signed: Int64, tx: TransactionFacts?, status: Int?, autoRenew: Int? = 1,
        grace: Int64? = nil, uuid: String = UUID().uuidString
    ) -> SubscriptionEvent {
        SubscriptionEvent(
            source: .apple, notificationUUID: uuid, notificationType: NotificationType(rawValue: type),
            subtype: subtype.map(NotificationSubtype.init(rawValue:)), signedDate: signed, environment: "Sandbox",
            bundleId: "com.example", transaction: tx,
            renewal: autoRenew.map {
                RenewalFacts(
                    originalTransactionId: original, autoRenewStatus: $0, autoRenewProductId: tx?.productId,
                    productId: tx?.productId, gracePeriodExpiresDate: grace, signedDate: signed)
            },
            raw: "jws-\(type)-\(uuid)", status: status)
    }

    /// The app submitting a transaction, signed at `signed`.
    public static func client(_ tx: TransactionFacts, signed: Int64) -> SubscriptionEvent {
        var tx = tx
        tx.signedDate = signed
        return SubscriptionEvent(
            source: .client, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: tx,
            raw: "jws-client-\(tx.transactionId)-\(signed)")
    }
}
