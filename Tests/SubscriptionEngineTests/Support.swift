import Foundation
import IAPFoundation
import SQLiteStore
import StoreTestSupport
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The backends the engine's properties are shown on: SQLite always, MySQL/MariaDB when
/// `IAPCTL_TEST_MYSQL_URL` is set (scripts/test starts a private server).
typealias Backend = TestBackend

/// A fresh database, an engine with a fixed clock and predictable order numbers.
final class Harness {
    let store: any Store
    let engine: SubscriptionEventEngine
    let context = EngineContext(actor: "tester", command: "notify")
    private let cleanup: () -> Void

    deinit { cleanup() }

    init(backend: Backend = .sqlite) throws {
        (store, cleanup) = try freshStore(backend, label: "e")
        let counter = Counter()
        engine = SubscriptionEventEngine(now: { 1_800_000_000_000 }, newOrderNo: { "renewal-\(counter.next())" })
    }

    @discardableResult
    func createOrder(no: String, user: String, product: String = "pro.monthly") throws -> Order {
        try store.write { try $0.insertOrder(Order(no: no, userId: user, productId: product, createdAt: 1, updatedAt: 1)) }
    }

    @discardableResult
    func apply(_ event: SubscriptionEvent, dryRun: Bool = false) throws -> Outcome {
        try engine.apply(event, to: store, context: context, dryRun: dryRun)
    }

    func order(_ no: String) throws -> Order? { try store.read { try $0.order(no: no) } }
    func order(tradeNo: String) throws -> Order? { try store.read { try $0.order(tradeNo: tradeNo) } }
    func contract(_ id: String) throws -> Contract? { try store.read { try $0.contract(contractId: id) } }
    func orders() throws -> [Order] { try store.read { try $0.orders(matching: OrderFilter()) } }
    func contracts() throws -> [Contract] { try store.read { try $0.contracts(matching: ContractFilter()) } }

    /// Orders and contracts without surrogate ids, generated order numbers or timestamps:
    /// what "the same tables" means when comparing two replays.
    /// With `withFacts`, the engine's kept facts too (property 1 is about every table).
    func snapshot(withFacts: Bool = false) throws -> [String] {
        let orders = try orders().map { o -> String in
            let no = o.no.hasPrefix("renewal-") ? "<generated>" : o.no
            return
                "order \(no) \(o.userId) \(o.productId) \(o.status) \(o.tradeNo ?? "-") \(o.originNo ?? "-") \(o.purchaseDate ?? -1) \(o.expiresDate ?? -1)"
        }
        let contracts = try contracts().map {
            "contract \($0.contractId) \($0.userId) \($0.productId) \($0.status) \($0.autoRenew) \($0.expiresDate ?? -1) \($0.nextProductId ?? "-")"
        }
        guard withFacts else { return (orders + contracts).sorted() }
        let lastEvents = try self.contracts().map { "contract \($0.contractId) last_event_date \($0.lastEventDate ?? -1)" }
        var originals: Set<String> = ["1000", "2000", "2000001024993299"]
        for c in try self.contracts() { originals.insert(c.contractId) }
        var facts: [String] = []
        for original in originals {
            let kept: [Fact] = try store.read { try $0.facts(originalTransactionId: original) }
            for f in kept {
                let line: String = "fact \(f.kind.rawValue) \(f.key) \(f.signedDate) \(f.source.rawValue) \(f.identity)"
                facts.append(line)
            }
        }
        return (orders + contracts + lastEvents + facts).sorted()
    }

    /// `entitled --at`: the derivation of the facts signed by `time`.
    func entitlement(_ contractId: String, at time: Int64) throws -> EntitlementAsOf.Answer {
        try store.read { s in
            let contract = try #require(try s.contract(contractId: contractId))
            return EntitlementAsOf.evaluate(
                contract: contract, orders: try s.orders(originNo: contractId), events: [], audit: [],
                facts: try s.facts(originalTransactionId: contractId), at: time)
        }
    }

    func ledger() throws -> [LedgerEntry] {
        try store.read {
            try $0.ledger(transactionIds: [], originalTransactionIds: ["1000", "2000001024993299", "9999"], appAccountTokens: [])
        }
    }
}

/// A fresh, migrated store of `backend` (SQLite in memory), and how to dispose of it.
func freshStore(_ backend: Backend, label: String) throws -> (store: any Store, cleanup: () -> Void) {
    switch backend {
    case .sqlite:
        let store = try SQLiteStore(path: ":memory:", create: true)
        _ = try store.migrate()
        return (store, {})
    case .mysql, .postgres:
        return try backend.makeStore(label: label)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

let day: Int64 = 86_400_000
let t0: Int64 = 1_750_000_000_000

/// A subscription transaction of original 1000 with period `n` (n = 0 is the first purchase).
func tx(
    _ id: String, original: String = "1000", token: String? = nil, product: String = "pro.monthly",
    period n: Int64 = 0, revoked: Bool = false
) -> TransactionFacts {
    TransactionFacts(
        transactionId: id, originalTransactionId: original, productId: product, appAccountToken: token,
        purchaseDate: t0 + n * 30 * day, originalPurchaseDate: t0, expiresDate: t0 + (n + 1) * 30 * day,
        revocationDate: revoked ? t0 + n * 30 * day + day : nil, revocationReason: revoked ? 0 : nil,
        type: ProductType(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox", price: 9990, currency: "USD",
        signedDate: t0 + n * 30 * day)
}

func notification(
    _ type: String, _ subtype: String? = nil, uuid: String = UUID().uuidString, signed: Int64,
    tx: TransactionFacts?, autoRenew: Int? = 1, nextProduct: String? = nil
) -> SubscriptionEvent {
    SubscriptionEvent(
        source: .apple, notificationUUID: uuid, notificationType: NotificationType(rawValue: type),
        subtype: subtype.map(NotificationSubtype.init(rawValue:)), signedDate: signed,
        environment: "Sandbox", bundleId: "com.example",
        transaction: tx,
        renewal: autoRenew.map {
            RenewalFacts(
                originalTransactionId: tx?.originalTransactionId, autoRenewStatus: $0,
                autoRenewProductId: nextProduct ?? tx?.productId, productId: tx?.productId, signedDate: signed)
        },
        raw: "jws-\(type)-\(uuid)")
}

func client(_ tx: TransactionFacts, source: EventSource = .client) -> SubscriptionEvent {
    SubscriptionEvent(
        source: source, signedDate: tx.signedDate, environment: "Sandbox", bundleId: "com.example",
        transaction: tx, raw: "jws-client-\(tx.transactionId)")
}
