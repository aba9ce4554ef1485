import Foundation
import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// The per-subscription snapshot: an event that only adds facts is decided from the facts the
/// snapshot keeps. Applied event by event to two stores — one keeping its snapshots, one whose
/// snapshot is dropped before every event so that it derives from every fact — every outcome (verdict, detail, changes, orders
/// touched) and every row must be the same, whatever the history: renewals, refunds, revocations
/// and their reversal, upgrades, auto-renew toggles, grace, receipts, API statuses, out-of-order and
/// duplicate deliveries, hand overrides and re-derivations in between.
@Suite("Engine: the snapshot's path agrees with the full derivation")
struct SnapshotAgreementTests {
    static let original = "1000"
    static let now: Int64 = 1_800_000_000_000

    /// One store and engine. With `snapshots` off it is the reference: the snapshot each event
    /// stores is dropped before the next, so every event is decided from every fact (the full derivation).
    final class Side {
        let store: any Store
        let engine: SubscriptionEventEngine
        let cleanup: () -> Void
        let snapshots: Bool
        /// Counts (from 1) the events the engine decided from the subscription's snapshot.
        let decided = Counter()
        let context = EngineContext(actor: "tester", command: "notify")

        init(_ backend: TestBackend, snapshots: Bool) throws {
            (store, cleanup) = try freshStore(backend, label: "snap")
            self.snapshots = snapshots
            let counter = Counter()
            engine = SubscriptionEventEngine(now: { SnapshotAgreementTests.now }, newOrderNo: { "renewal-\(counter.next())" })
        }

        deinit { cleanup() }

        func apply(_ event: SubscriptionEvent) throws -> Outcome {
            if let original = event.facts.first?.originalTransactionId {
                if !snapshots {
                    try store.write { try $0.saveContractSnapshot(contractId: original, nil) }
                } else if try decidesFromSnapshot(event, original) {
                    _ = decided.next()
                }
            }
            return try engine.apply(event, to: store, context: context)
        }

        /// Whether the engine decides `event` from the subscription's snapshot: the state it
        /// chooses (reading only) is the snapshot's.
        func decidesFromSnapshot(_ event: SubscriptionEvent, _ original: String) throws -> Bool {
            try store.read { session in
                var run = EngineRun(
                    event: event, session: session, context: self.context, now: SnapshotAgreementTests.now, newOrderNo: { "" })
                let hasContract = try session.contract(contractId: original) != nil
                return try run.decisionState(original, facts: event.facts, hasContract: hasContract).snapshot != nil
            }
        }

        /// The order alice's app created before her first purchase (its number is the token Apple echoes).
        func createAlicesOrder() throws { try createOrder("tok-a") }

        /// An order of alice's app, numbered by the token a later purchase carries.
        func createOrder(_ token: String) throws {
            _ = try store.write {
                try $0.insertOrder(Order(no: token, userId: "alice", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
            }
        }

        /// Every order and contract, every column (ids and timestamps too: both stores see the same steps).
        func rows() throws -> [String] {
            try store.read { s in
                try s.orders(matching: OrderFilter()).map { "order \($0.id) \($0.columnValues)" }
                    + s.contracts(matching: ContractFilter()).map { "contract \($0.id) \($0.columnValues)" }
            }
        }
    }

    // MARK: random histories

    @Test(arguments: TestBackend.available)
    func randomHistoriesGiveTheSameOutcomesAndRows(backend: TestBackend) throws {
        var fastDecisions = 0
        var events = 0
        for seed in 0..<(backend == .sqlite ? 120 : 20) as Range<UInt64> {
            let (fast, full) = (try Side(backend, snapshots: true), try Side(backend, snapshots: false))
            var rng = SplitMix(seed: seed)
            for side in [fast, full] { try side.createAlicesOrder() }
            for (index, step) in Self.history(&rng).enumerated() {
                // An error is named with its seed and step (either side's: an engine that throws on a history is wrong too).
                let (fastResult, fullResult) = (Result { try Self.take(step, on: fast) }, Result { try Self.take(step, on: full) })
                guard case .success(let a) = fastResult, case .success(let b) = fullResult else {
                    Issue.record("seed \(seed) step \(index) \(step): fast \(fastResult), full \(fullResult)")
                    break
                }
                if let a, let b, case .event(let event) = step {
                    events += 1
                    #expect(a.verdict == b.verdict, "seed \(seed) step \(index): \(event.notificationType?.rawValue ?? "client")")
                    #expect(a.detail == b.detail, "seed \(seed) step \(index)")
                    #expect(a.changes == b.changes, "seed \(seed) step \(index)")
                    #expect(a.orderNos == b.orderNos, "seed \(seed) step \(index)")
                }
                #expect(try fast.rows() == full.rows(), "seed \(seed) after step \(index)")
            }
            fastDecisions += fast.decided.next() - 1
        }
        // The agreement says something only if the snapshot's path decided most events.
        #expect(fastDecisions * 3 > events, "\(fastDecisions) of \(events) events decided from a snapshot")
    }

    /// One step of a history on one side: an event's outcome, nil for the other steps.
    static func take(_ step: Step, on side: Side) throws -> Outcome? {
        switch step {
        case .event(let event): return try side.apply(event)
        case .override(let status): try setByHand(status, in: side)
        case .appOrder(let token): try side.createOrder(token)
        case .rederive:
            _ = try side.store.write {
                try side.engine.rederive(originalTransactionId: original, in: $0, context: side.context, reason: "test")
            }
        }
        return nil
    }

    /// Apple's genuine Sandbox lifecycle (RealLifecycleTests' files): the same outcomes and rows.
    @Test(arguments: TestBackend.available)
    func theGenuineAppleLifecycleGivesTheSameOutcomesAndRows(backend: TestBackend) throws {
        let (fast, full) = (try Side(backend, snapshots: true), try Side(backend, snapshots: false))
        let events = try RealLifecycleTests.events()
        // Linked to carol by support, as `restore --apply` does (RealLifecycleTests.harness).
        for side in [fast, full] {
            _ = try side.store.write { s in
                try s.insertContract(
                    Contract(
                        contractId: RealLifecycleTests.original, userId: "carol", productId: "com.getsession.org.pro_sub",
                        status: .active, createdAt: 1, updatedAt: 1))
            }
        }
        try Self.expectAgreement(events, fast, full)
        #expect(fast.decided.next() > 1, "some of Apple's notifications were decided from a snapshot")
    }

    /// A long plain history: every renewal after the first is decided from the snapshot, which keeps
    /// a bounded number of facts (it does not grow with the history).
    @Test func aLongHistoryIsDecidedFromABoundedSnapshot() throws {
        let (fast, full) = (try Side(.sqlite, snapshots: true), try Side(.sqlite, snapshots: false))
        var sizes: [Int] = []
        for side in [fast, full] { try side.createAlicesOrder() }
        for k in 0..<40 {
            let event = Self.apple(
                k == 0 ? "SUBSCRIBED" : "DID_RENEW", signed: Self.period(k).purchaseDate! - 3_600_000, tx: Self.period(k), status: 1)
            let a = try fast.apply(event)
            let b = try full.apply(event)
            #expect(a == b, "period \(k)")
            let text = try fast.store.read { try $0.contractSnapshot(contractId: Self.original) }
            let snapshot = try #require(text.flatMap(SubscriptionSnapshot.init(text:)), "period \(k)")
            sizes.append(snapshot.transactions.count)
        }
        #expect(try fast.rows() == full.rows())
        #expect(fast.decided.next() - 1 == 39)
        #expect(sizes.max()! <= 2, "kept transactions: \(sizes)")
    }

    /// An older period that is not current can be the newest payment (its period extended, then
    /// re-submitted after the next one began): the snapshot must keep it, or a later toggle would let
    /// an older DID_FAIL_TO_RENEW decide the status.
    @Test(arguments: TestBackend.available)
    func anOlderPeriodThatIsTheNewestPaymentStaysKept(backend: TestBackend) throws {
        let (fast, full) = (try Side(backend, snapshots: true), try Side(backend, snapshots: false))
        var extended = Self.period(0)
        extended.expiresDate = Self.t0 + 60 * Self.day
        let steps = [
            Self.apple("SUBSCRIBED", "INITIAL_BUY", signed: Self.t0, tx: Self.period(0), status: 1),
            Self.apple("RENEWAL_EXTENDED", signed: Self.t0 + 20 * Self.day, tx: extended, status: 1),
            Self.apple("DID_RENEW", signed: Self.t0 + 30 * Self.day, tx: Self.period(1), status: 1),
            Self.apple("DID_FAIL_TO_RENEW", signed: Self.t0 + 35 * Self.day, tx: Self.period(1), status: 3),
            Self.client(extended, signed: Self.t0 + 40 * Self.day),
            // (Without a transaction: one would be a newer version of the current period, a newer payment.)
            Self.apple(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: Self.t0 + 41 * Self.day, tx: nil, status: nil, autoRenew: 0),
        ]
        for side in [fast, full] { try side.createAlicesOrder() }
        try Self.expectAgreement(steps, fast, full)
        #expect(fast.decided.next() > 1, "the toggle was decided from the snapshot")
        #expect(try full.store.read { try $0.contract(contractId: Self.original) }?.status == .canceled)
    }

    /// Any other writer of the subscription's rows clears its snapshot (a hand correction, an
    /// override lifted, an order row rewritten), so the next event takes the full path.
    @Test(arguments: TestBackend.available)
    func otherWritersClearTheSnapshot(backend: TestBackend) throws {
        let side = try Side(backend, snapshots: true)
        try side.createAlicesOrder()
        for k in 0..<3 {
            _ = try side.apply(
                Self.apple(k == 0 ? "SUBSCRIBED" : "DID_RENEW", signed: Self.period(k).purchaseDate!, tx: Self.period(k), status: 1))
        }
        func snapshot() throws -> String? { try side.store.read { try $0.contractSnapshot(contractId: Self.original) } }
        #expect(try snapshot() != nil)
        // An order row rewritten by hand.
        try side.store.write { s in
            var order = try #require(try s.order(tradeNo: Self.period(0).transactionId))
            order.price = 1
            try s.updateOrder(order)
        }
        #expect(try snapshot() == nil)
        _ = try side.apply(Self.apple("DID_RENEW", signed: Self.period(3).purchaseDate!, tx: Self.period(3), status: 1))
        #expect(try snapshot() != nil)
        // The contract corrected by hand (an override).
        try Self.setByHand(.expired, in: side)
        #expect(try snapshot() == nil)
        // A snapshot of another format is not used: the full path writes the current one.
        try side.store.write { try $0.saveContractSnapshot(contractId: Self.original, "iapctl-snapshot 0\n1") }
        let decided = side.decided.next()
        _ = try side.apply(Self.apple("DID_RENEW", signed: Self.period(4).purchaseDate!, tx: Self.period(4), status: 1))
        #expect(side.decided.next() == decided + 1, "not decided from the snapshot")
        #expect(try snapshot().flatMap(SubscriptionSnapshot.init(text:)) != nil)
    }

    /// The text a snapshot is stored as reads back to the same snapshot.
    @Test func theStoredTextReadsBack() throws {
        let snapshot = SubscriptionSnapshot(
            readFloor: 5, kept: KeptFacts(transactions: ["1", "2"], notificationsSince: nil, notificationsAt: [3, 4], renewalsSince: 7),
            newestEventDate: 9, newestStoredDate: nil, prunedTokens: ["tok-a"],
            prunedLast: .init(purchaseDate: 1, transactionId: "0"))
        #expect(SubscriptionSnapshot(text: try #require(snapshot.text)) == snapshot)
        #expect(SubscriptionSnapshot(text: "iapctl-snapshot 0\n5") == nil)
    }

    /// Each event applied to both sides: the same outcome, then the same rows.
    static func expectAgreement(_ events: [SubscriptionEvent], _ fast: Side, _ full: Side) throws {
        for (index, event) in events.enumerated() {
            let a = try fast.apply(event)
            let b = try full.apply(event)
            #expect(a.verdict == b.verdict && a.detail == b.detail && a.changes == b.changes, "event \(index)")
            #expect(try fast.rows() == full.rows(), "after event \(index)")
        }
    }

    // MARK: building histories

    enum Step {
        case event(SubscriptionEvent)
        case override(ContractStatus)
        case rederive
        /// The app creates the order a token names before the purchase that carries it.
        case appOrder(String)
    }

    static let day: Int64 = 86_400_000
    static let t0: Int64 = 1_700_000_000_000

    static func period(_ k: Int, product: String = "pro.monthly", token: String? = "tok-a") -> TransactionFacts {
        TransactionFacts(
            transactionId: k == 0 ? original : "\(20_000 + k)", originalTransactionId: original, productId: product,
            appAccountToken: token, purchaseDate: t0 + Int64(k) * 30 * day, originalPurchaseDate: t0,
            expiresDate: t0 + Int64(k + 1) * 30 * day, type: ProductType(rawValue: "Auto-Renewable Subscription"),
            environment: "Sandbox", price: 9_990, currency: "USD", signedDate: t0 + Int64(k) * 30 * day)
    }

    static func apple(
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

    static func setByHand(_ status: ContractStatus, in side: Side) throws {
        guard try side.store.read({ try $0.contract(contractId: original) }) != nil else { return }
        let context = CorrectionContext(actor: "support", command: "contracts update", now: now)
        let request = CorrectionRequest<Contract>(
            line: nil, key: original, keyField: "", values: [.set(.status(status))], reason: "test", ticket: nil)
        _ = try side.store.write { try CorrectionService.apply([request], context: context, in: $0) }
    }

    static func client(_ tx: TransactionFacts, signed: Int64) -> SubscriptionEvent {
        var tx = tx
        tx.signedDate = signed
        return SubscriptionEvent(
            source: .client, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: tx,
            raw: "jws-client-\(tx.transactionId)-\(signed)")
    }
}
