import Foundation
import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionEngine

/// The per-subscription snapshot (issue 25): an event that only adds facts is decided from the
/// facts the snapshot keeps. Applied event by event to two stores — one engine with the snapshot's
/// path, one deriving every event from every fact — every outcome (verdict, detail, changes, orders
/// touched) and every row must be the same, whatever the history: renewals, refunds, revocations
/// and their reversal, upgrades, auto-renew toggles, grace, receipts, API statuses, out-of-order and
/// duplicate deliveries, hand overrides and re-derivations in between.
@Suite("Engine: the snapshot's path agrees with the full derivation")
struct SnapshotAgreementTests {
    static let original = "1000"
    static let now: Int64 = 1_800_000_000_000

    /// One store and engine.
    final class Side {
        let store: any Store
        let engine: SubscriptionEventEngine
        let cleanup: () -> Void
        let decided = Counter()
        let context = EngineContext(actor: "tester", command: "notify")

        init(_ backend: TestBackend, snapshots: Bool) throws {
            (store, cleanup) = try freshStore(backend, label: "snap")
            let counter = Counter()
            let decided = self.decided
            engine = SubscriptionEventEngine(
                now: { SnapshotAgreementTests.now }, newOrderNo: { "renewal-\(counter.next())" }, usesSnapshots: snapshots,
                snapshotDecided: { _ = decided.next() })
        }

        deinit { cleanup() }

        func apply(_ event: SubscriptionEvent) throws -> Outcome { try engine.apply(event, to: store, context: context) }

        /// The order alice's app created before her first purchase (its number is the token Apple echoes).
        func createAlicesOrder() throws {
            _ = try store.write {
                try $0.insertOrder(Order(no: "tok-a", userId: "alice", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
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
                switch step {
                case .event(let event):
                    events += 1
                    let a = try fast.apply(event)
                    let b = try full.apply(event)
                    #expect(a.verdict == b.verdict, "seed \(seed) step \(index): \(event.notificationType?.rawValue ?? "client")")
                    #expect(a.detail == b.detail, "seed \(seed) step \(index)")
                    #expect(a.changes == b.changes, "seed \(seed) step \(index)")
                    #expect(a.orderNos == b.orderNos, "seed \(seed) step \(index)")
                case .override(let status):
                    for side in [fast, full] { try Self.setByHand(status, in: side) }
                case .rederive:
                    for side in [fast, full] {
                        _ = try side.store.write {
                            try side.engine.rederive(originalTransactionId: Self.original, in: $0, context: side.context, reason: "test")
                        }
                    }
                }
                #expect(try fast.rows() == full.rows(), "seed \(seed) after step \(index)")
            }
            fastDecisions += fast.decided.next() - 1
            #expect(full.decided.next() == 1, "the reference engine never takes the snapshot's path")
        }
        // The agreement says something only if the snapshot's path decided most events.
        #expect(fastDecisions * 3 > events, "\(fastDecisions) of \(events) events decided from a snapshot")
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
            readFloor: 5, transactions: ["1", "2"], notificationBound: nil, refundNotices: [3, 4], renewalBound: 7,
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

    /// 5–40 steps: mostly renewals, with every other kind of statement, some delivered late or twice.
    static func history(_ rng: inout SplitMix) -> [Step] {
        var steps: [Step] = []
        var periods = 1
        var clock = t0
        var product = "pro.monthly"
        var known: [TransactionFacts] = [period(0)]
        var delivered: [SubscriptionEvent] = []
        var late: [SubscriptionEvent] = []
        func push(_ event: SubscriptionEvent) {
            // Out of order: sometimes held back and delivered a few steps later.
            if Int.random(in: 0..<6, using: &rng) == 0 {
                late.append(event)
            } else {
                steps.append(.event(event))
                delivered.append(event)
            }
        }
        push(apple("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: period(0), status: 1))
        for _ in 0..<Int.random(in: 5...40, using: &rng) {
            clock += Int64.random(in: 0...(4 * day), using: &rng)
            let current = known.last!
            switch Int.random(in: 0..<21, using: &rng) {
            case 0..<8:
                let token = Int.random(in: 0..<8, using: &rng) == 0 ? nil : "tok-a"
                let tx = period(periods, product: product, token: token)
                clock = max(clock, tx.purchaseDate! - Int64.random(in: 0...day, using: &rng))
                periods += 1
                known.append(tx)
                let client = Int.random(in: 0..<6, using: &rng) == 0
                push(client ? Self.client(tx, signed: clock) : apple("DID_RENEW", signed: clock, tx: tx, status: 1))
            case 8:
                let on = Int.random(in: 0...1, using: &rng)
                push(
                    apple(
                        "DID_CHANGE_RENEWAL_STATUS", on == 1 ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED", signed: clock,
                        tx: Bool.random(using: &rng) ? current : nil,
                        status: 1, autoRenew: on))
            case 9:
                let grace = Bool.random(using: &rng)
                push(
                    apple(
                        "DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, signed: clock, tx: current, status: grace ? 4 : 3,
                        grace: grace ? clock + 6 * day : nil))
            case 10:
                push(
                    apple(
                        ["EXPIRED", "GRACE_PERIOD_EXPIRED"].randomElement(using: &rng)!, signed: clock, tx: current, status: 2, autoRenew: 0
                    ))
            case 11:
                var tx = known.randomElement(using: &rng)!
                let family = Bool.random(using: &rng)
                tx.revocationDate = clock
                tx.revocationReason = 0
                if family { tx.revocationType = .init(rawValue: "FAMILY_REVOKE") }
                known[known.firstIndex { $0.transactionId == tx.transactionId }!] = tx
                push(apple(family ? "REVOKE" : "REFUND", signed: clock, tx: tx, status: [1, 2, 5].randomElement(using: &rng)!))
            case 12:
                guard let index = known.firstIndex(where: { $0.revocationDate != nil }) else { continue }
                var tx = known[index]
                tx.revocationDate = nil
                tx.revocationReason = nil
                tx.revocationType = nil
                known[index] = tx
                push(apple("REFUND_REVERSED", signed: clock, tx: tx, status: 1))
            case 13:
                // An upgrade: a new period of the other product now; the old one marked upgraded.
                product = product == "pro.monthly" ? "pro.yearly" : "pro.monthly"
                var tx = period(periods, product: product)
                tx.purchaseDate = clock
                periods += 1
                var old = current
                old.isUpgraded = true
                known.append(tx)
                push(apple("DID_CHANGE_RENEWAL_PREF", "UPGRADE", signed: clock, tx: tx, status: 1))
                push(Self.client(old, signed: clock))
            case 14:
                // The app submits a known period again (verify), or from its receipt.
                var tx = known.randomElement(using: &rng)!
                tx.isFromReceipt = Int.random(in: 0..<3, using: &rng) == 0
                push(Self.client(tx, signed: Bool.random(using: &rng) ? clock : tx.signedDate!))
            case 15:
                // Apple's API answering the subscription's status.
                push(
                    SubscriptionEvent(
                        source: .appleAPI, signedDate: clock, environment: "Sandbox", bundleId: "com.example", transaction: current,
                        raw: "api-\(clock)", status: [1, 2, 3, 4].randomElement(using: &rng)!))
            case 16:
                // Delivered twice: the same notification again, or the same facts under a new UUID.
                guard var again = delivered.randomElement(using: &rng) else { continue }
                if Bool.random(using: &rng), again.notificationUUID != nil { again.notificationUUID = UUID().uuidString }
                steps.append(.event(again))
            case 17:
                steps.append(.override([.expired, .revoked, .active].randomElement(using: &rng)!))
            case 18:
                steps.append(.rederive)
            case 19:
                // The current period extended (RENEWAL_EXTENDED, or a longer period the app re-submits
                // later): an older period can then be the newest payment while a newer one is current.
                var tx = current
                tx.expiresDate = (tx.expiresDate ?? clock) + Int64.random(in: 1...60, using: &rng) * day
                known[known.count - 1] = tx
                push(
                    Bool.random(using: &rng) ? apple("RENEWAL_EXTENDED", signed: clock, tx: tx, status: 1) : Self.client(tx, signed: clock))
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

    static func client(_ tx: TransactionFacts, signed: Int64) -> SubscriptionEvent {
        var tx = tx
        tx.signedDate = signed
        return SubscriptionEvent(
            source: .client, signedDate: signed, environment: "Sandbox", bundleId: "com.example", transaction: tx,
            raw: "jws-client-\(tx.transactionId)-\(signed)")
    }
}
