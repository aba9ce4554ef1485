import DerivationTestSupport
import Foundation
import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionDerivation
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
    static let original = SubscriptionHistory.original
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
            for (index, step) in SubscriptionHistory.random(&rng).enumerated() {
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
    static func take(_ step: SubscriptionHistory.Step, on side: Side) throws -> Outcome? {
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
            let event = SubscriptionHistory.apple(
                k == 0 ? "SUBSCRIBED" : "DID_RENEW", signed: SubscriptionHistory.period(k).purchaseDate! - 3_600_000,
                tx: SubscriptionHistory.period(k), status: 1)
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
        var extended = SubscriptionHistory.period(0)
        extended.expiresDate = SubscriptionHistory.t0 + 60 * SubscriptionHistory.day
        let steps = [
            SubscriptionHistory.apple(
                "SUBSCRIBED", "INITIAL_BUY", signed: SubscriptionHistory.t0, tx: SubscriptionHistory.period(0), status: 1),
            SubscriptionHistory.apple(
                "RENEWAL_EXTENDED", signed: SubscriptionHistory.t0 + 20 * SubscriptionHistory.day, tx: extended, status: 1),
            SubscriptionHistory.apple(
                "DID_RENEW", signed: SubscriptionHistory.t0 + 30 * SubscriptionHistory.day, tx: SubscriptionHistory.period(1), status: 1),
            SubscriptionHistory.apple(
                "DID_FAIL_TO_RENEW", signed: SubscriptionHistory.t0 + 35 * SubscriptionHistory.day, tx: SubscriptionHistory.period(1),
                status: 3),
            SubscriptionHistory.client(extended, signed: SubscriptionHistory.t0 + 40 * SubscriptionHistory.day),
            // (Without a transaction: one would be a newer version of the current period, a newer payment.)
            SubscriptionHistory.apple(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: SubscriptionHistory.t0 + 41 * SubscriptionHistory.day, tx: nil,
                status: nil, autoRenew: 0),
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
                SubscriptionHistory.apple(
                    k == 0 ? "SUBSCRIBED" : "DID_RENEW", signed: SubscriptionHistory.period(k).purchaseDate!,
                    tx: SubscriptionHistory.period(k), status: 1))
        }
        func snapshot() throws -> String? { try side.store.read { try $0.contractSnapshot(contractId: Self.original) } }
        #expect(try snapshot() != nil)
        // An order row rewritten by hand.
        try side.store.write { s in
            var order = try #require(try s.order(tradeNo: SubscriptionHistory.period(0).transactionId))
            order.price = 1
            try s.updateOrder(order)
        }
        #expect(try snapshot() == nil)
        _ = try side.apply(
            SubscriptionHistory.apple(
                "DID_RENEW", signed: SubscriptionHistory.period(3).purchaseDate!, tx: SubscriptionHistory.period(3), status: 1))
        #expect(try snapshot() != nil)
        // The contract corrected by hand (an override).
        try Self.setByHand(.expired, in: side)
        #expect(try snapshot() == nil)
        // A snapshot of another format is not used: the full path writes the current one.
        try side.store.write { try $0.saveContractSnapshot(contractId: Self.original, "iapctl-snapshot 0\n1") }
        let decided = side.decided.next()
        _ = try side.apply(
            SubscriptionHistory.apple(
                "DID_RENEW", signed: SubscriptionHistory.period(4).purchaseDate!, tx: SubscriptionHistory.period(4), status: 1))
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

    static func setByHand(_ status: ContractStatus, in side: Side) throws {
        guard try side.store.read({ try $0.contract(contractId: original) }) != nil else { return }
        let context = CorrectionContext(actor: "support", command: "contracts update", now: now)
        let request = CorrectionRequest<Contract>(
            line: nil, key: original, keyField: "", values: [.set(.status(status))], reason: "test", ticket: nil)
        _ = try side.store.write { try CorrectionService.apply([request], context: context, in: $0) }
    }
}
