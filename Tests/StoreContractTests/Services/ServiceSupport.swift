import Foundation
import IAPFoundation
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// Events and an engine for the service tests: one subscription "1000" bought at `T.start`.
enum T {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_750_000_000_000
    /// The engine's clock (and the services' `now`): well after every event.
    static let now: Int64 = 1_800_000_000_000
    static let engine = SubscriptionEventEngine(now: { T.now }, newOrderNo: { UUID().uuidString.lowercased() })
    static let context = EngineContext(actor: "tester", command: "notify")

    /// A transaction of subscription `original`, period `n` (n = 0 is the first purchase).
    static func tx(_ id: String, original: String = "1000", token: String? = nil, period n: Int64 = 0) -> TransactionFacts {
        TransactionFacts(
            transactionId: id, originalTransactionId: original, productId: "pro.monthly", appAccountToken: token,
            purchaseDate: start + n * 30 * day, originalPurchaseDate: start, expiresDate: start + (n + 1) * 30 * day,
            type: ProductType(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox", price: 9990, currency: "USD",
            signedDate: start + n * 30 * day)
    }

    /// A notification of Apple's about `tx`, signed at `signed`.
    static func notification(
        _ type: String, _ subtype: String? = nil, uuid: String = UUID().uuidString, signed: Int64,
        tx: TransactionFacts, autoRenew: Int = 1
    ) -> SubscriptionEvent {
        SubscriptionEvent(
            source: .apple, notificationUUID: uuid, notificationType: NotificationType(rawValue: type),
            subtype: subtype.map(NotificationSubtype.init(rawValue:)), signedDate: signed,
            environment: "Sandbox", bundleId: "com.example", transaction: tx,
            renewal: RenewalFacts(
                originalTransactionId: tx.originalTransactionId, autoRenewStatus: autoRenew,
                autoRenewProductId: tx.productId, productId: tx.productId, signedDate: signed),
            raw: "jws-\(type)-\(uuid)")
    }

    /// A pending order `no` of `user`, and Apple's purchase of it (subscription 1000): an order paid
    /// and a contract created through the engine.
    @discardableResult
    static func purchase(_ store: any Store, no: String = "ord-1", user: String = "alice") throws -> Outcome {
        _ = try store.write {
            try $0.insertOrder(Order(no: no, userId: user, productId: "pro.monthly", createdAt: 1, updatedAt: 1))
        }
        return try engine.apply(
            notification("SUBSCRIBED", "INITIAL_BUY", signed: start, tx: tx("1000", token: no)), to: store,
            context: context)
    }

    /// A hand correction of contract 1000 by `support` (`contracts update`), committed.
    @discardableResult
    static func correctContract(_ store: any Store, _ edit: ContractEdit, at time: Int64 = T.now) throws -> [CorrectionResult] {
        let context = CorrectionContext(actor: "support", command: "contracts update", now: time)
        let request = CorrectionRequest<Contract>(
            line: nil, key: "1000", keyField: "", values: [.set(edit)], reason: "r", ticket: nil)
        return try store.write { try CorrectionService.apply([request], context: context, in: $0) }
    }
}
