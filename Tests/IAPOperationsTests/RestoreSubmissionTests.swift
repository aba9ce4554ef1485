import AppStoreJWS
import AppStoreReceipt
import AppleFlows
import ClientSubmissions
import Foundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `restore`'s operation in process on every backend: a device's restored transactions verified,
/// then looked up (nothing written) or, with `--apply`, each made true in its own transaction,
/// every item in the ledger with its verdict, refused ones too.
@Suite("Restore submission (restore [--apply])")
struct RestoreSubmissionTests {
    /// The input of user-0's device: its own purchase, user-1's, one nobody knows, a forgery.
    struct Device {
        let restorable: String
        let ownedByOther: String
        let unknown: String
        let forged: String

        init(_ world: World) throws {
            restorable = try ClientVerificationTests.signed(world, "1000", original: "orig-0", token: World.token(0))
            ownedByOther = try ClientVerificationTests.signed(world, "2000", original: "orig-1", token: World.token(1))
            // Another product: the product fallback finds no pending order of user-0's for it.
            unknown = try world.pki.sign(
                payload: world.transaction("3000", original: "orig-3", product: "com.example.ops.yearly").json)
            forged = try ClientVerificationTests.signed(
                world, "4000", original: "orig-4", token: World.token(0), by: try TestPKI.make())
        }

        var lines: [String] { [restorable, ownedByOther, unknown, forged] }
    }

    /// Every row of every line, in delivery order.
    static func run(
        _ world: World, _ lines: [String], apply: RestoreSubmission.Apply?, user: String = "user-0",
        verifiers: ClientVerifiers? = nil
    ) throws -> [(line: Int, row: RestoreSubmission.Row)] {
        let restore = RestoreSubmission(user: user, apply: apply, store: world.store, context: world.context)
        let verifiers = verifiers ?? ClientVerificationTests.jwsOnly(world)
        var rows: [(line: Int, row: RestoreSubmission.Row)] = []
        for (index, line) in lines.enumerated() {
            try restore.restore(ClientVerificationTests.item(index + 1, line), verifiers: verifiers) { rows.append((index + 1, $0)) }
        }
        return rows
    }

    @Test(arguments: Backend.available)
    func applyMakesEachItemTrueAndKeepsEveryOneInTheLedger(_ backend: Backend) throws {
        let world = try World(backend)
        let device = try Device(world)
        let rows = try Self.run(world, device.lines, apply: RestoreSubmission.Apply())
        #expect(rows.map(\.line) == [1, 2, 3, 4])
        #expect(rows.map(\.row.verdict) == [.restored, .ownedByOther, .unknown, .rejected])
        #expect(rows.map(\.row.outcome) == [.success, .conflict, .notFound, .unverified])
        guard case .restored(let tx, let result) = rows[0].row else {
            Issue.record("line 1 not restored: \(rows[0].row)")
            return
        }
        #expect(tx.transactionId == "1000" && result.owner == "user-0" && result.engineOutcome?.verdict == .applied)
        guard case .refusedJWS(let failure, _) = rows[3].row else {
            Issue.record("line 4 not refused: \(rows[3].row)")
            return
        }
        #expect(rows[3].row.refusal == failure.message)

        // Restorable: applied through the engine for user-0.
        #expect(try world.order(0)?.status == .paid)
        #expect(try world.contract("orig-0")?.userId == "user-0")
        #expect(try world.ledger(original: "orig-0").map(\.verdict) == [.applied])
        // Owned by another user: kept with its owner (--policy keep), in the ledger as a conflict.
        #expect(try world.order(1)?.status == .pending)
        #expect(try world.contract("orig-1") == nil)
        let other = try world.ledger(original: "orig-1")
        #expect(other.map(\.verdict) == [.conflict] && other.first?.source == .restore && other.first?.raw == device.ownedByOther)
        // Unknown: nothing matched, in the ledger as unmatched.
        let unknown = try world.ledger(original: "orig-3")
        #expect(unknown.map(\.verdict) == [.unmatched] && unknown.first?.raw == device.unknown)
        #expect(try world.contract("orig-3") == nil)
        // Forged: kept as rejected, source restore, with no ids.
        let rejected = try RejectedItemsTests.ledger(world).filter { $0.verdict == .rejected }
        #expect(rejected.count == 1)
        #expect(rejected.first?.raw == device.forged && rejected.first?.source == .restore)
        #expect(rejected.first?.detail == failure.message && rejected.first?.transactionId == nil)
    }

    @Test(arguments: Backend.available)
    func withoutApplyOrInADryRunNothingIsWritten(_ backend: Backend) throws {
        let world = try World(backend)
        let device = try Device(world)
        let before = try world.counts
        let lookups = try Self.run(world, device.lines, apply: nil)
        #expect(lookups.map(\.row.verdict) == [.restorable, .ownedByOther, .unknown, .rejected])
        #expect(try world.counts == before)
        let dry = try Self.run(world, device.lines, apply: RestoreSubmission.Apply(dryRun: true))
        #expect(dry.map(\.row.verdict) == [.restorable, .ownedByOther, .unknown, .rejected])
        #expect(try world.counts == before)
        #expect(try world.order(0)?.status == .pending)
        #expect(try world.contract("orig-0") == nil)
    }

    @Test(arguments: Backend.available)
    func aNotificationOrAnUnreadableLineIsRefused(_ backend: Backend) throws {
        let world = try World(backend)
        let notification = try world.lifecycle(0)[0]
        let restore = RestoreSubmission(user: "user-0", apply: RestoreSubmission.Apply(), store: world.store, context: world.context)
        var rows: [RestoreSubmission.Row] = []
        let unreadable = WebhookBody.Item(line: 1, result: .failure(VerificationFailure(.invalidJWTFormat, "line is not valid UTF-8")))
        try restore.restore(unreadable, verifiers: ClientVerificationTests.jwsOnly(world)) { rows.append($0) }
        try restore.restore(ClientVerificationTests.item(2, notification), verifiers: ClientVerificationTests.jwsOnly(world)) {
            rows.append($0)
        }
        guard rows.count == 2, case .unreadable = rows[0], case .refusedJWS(_, let report) = rows[1] else {
            Issue.record("not refused: \(rows)")
            return
        }
        #expect(report.kind == .notification)
        #expect(rows.map(\.outcome) == [.invalid, ItemOutcome(try #require(report.failure))])
        // Only the notification's bytes are kept.
        let kept = try RejectedItemsTests.ledger(world)
        #expect(kept.map(\.raw) == [notification] && kept.first?.source == .restore)
        #expect(try world.order(0)?.status == .pending)
    }

    /// A store with alice's pending order `pending` for `product`, the sample receipt (9 entries of
    /// one subscription) and the verifiers that accept it.
    static func receiptWorld(_ backend: Backend, pending: String, product: String) throws
        -> (World, String, ClientVerifiers)
    {
        let world = try World(backend, orders: 0)
        _ = try world.store.write { try $0.insertOrder(Order(no: pending, userId: "alice", productId: product)) }
        return (world, try ClientVerificationTests.receipt(), try ClientVerificationTests.receiptsOnly())
    }

    @Test(arguments: Backend.available)
    func aReceiptsEntriesAreRestoredOneByOne(_ backend: Backend) throws {
        let (world, base64, verifiers) = try Self.receiptWorld(
            backend, pending: "receipt-order", product: "com.revenuecat.monthly_4.99.1_week_intro")

        // Look-up: the product fallback finds alice's pending order; the annual entry matches nothing.
        let lookups = try Self.run(world, [base64], apply: nil, user: "alice", verifiers: verifiers)
        #expect(lookups.count == 9 && lookups.allSatisfy { $0.line == 1 })
        #expect(lookups.filter { $0.row.verdict == .unknown }.count == 1)
        #expect(try world.counts.ledger == 0)

        let applied = try Self.run(world, [base64], apply: RestoreSubmission.Apply(), user: "alice", verifiers: verifiers)
        // Committed: each says what was done.
        #expect(applied.map(\.row.verdict) == Array(repeating: .restored, count: 9))
        #expect(try world.order(no: "receipt-order")?.status == .paid)
        #expect(try world.contract(ClientVerificationTests.receiptOriginal)?.userId == "alice")
        // Every entry in the ledger, the receipt kept once.
        let ledger = try world.ledger(original: ClientVerificationTests.receiptOriginal)
        #expect(ledger.count == 9 && ledger.filter { $0.raw == base64 }.count == 1)
        #expect(ledger.allSatisfy { $0.source == .restore })
    }

    /// Only a later entry of the receipt's subscription (the annual product it moved to) matches a
    /// pending order: one `--apply` run still links every entry of the subscription (they were
    /// `unknown`, kept as unmatched, until a second run), and its dry run predicts exactly that.
    @Test(arguments: Backend.available)
    func oneRunLinksEveryEntryOfASubscriptionWhenALaterEntryMatches(_ backend: Backend) throws {
        let annual = "com.revenuecat.annual_39.99.2_week_intro"
        let (world, base64, verifiers) = try Self.receiptWorld(backend, pending: "annual-order", product: annual)
        let original = ClientVerificationTests.receiptOriginal

        // The look-up says so for the entries nothing matches on their own.
        let lookups = try Self.run(world, [base64], apply: nil, user: "alice", verifiers: verifiers)
        let unknown = lookups.compactMap { row -> RestoreResult? in
            guard case .restored(_, let result) = row.row, result.verdict == .unknown else { return nil }
            return result
        }
        #expect(unknown.count == 8)
        #expect(unknown.allSatisfy { $0.detail.contains("transaction 1000000696553650 of the same subscription matched") })

        let before = try world.counts
        let dry = try Self.run(
            world, [base64], apply: RestoreSubmission.Apply(dryRun: true), user: "alice", verifiers: verifiers)
        #expect(dry.map(\.row.verdict) == Array(repeating: .restorable, count: 9))
        #expect(try world.counts == before)

        let applied = try Self.run(world, [base64], apply: RestoreSubmission.Apply(), user: "alice", verifiers: verifiers)
        // Committed: each says what was done.
        #expect(applied.map(\.row.verdict) == Array(repeating: .restored, count: 9))
        #expect(applied.map(\.row.outcome) == Array(repeating: .success, count: 9))
        // Delivered in the receipt's order (oldest purchase first), the annual entry matched by product.
        let rows = applied.compactMap { row -> (TransactionFacts, RestoreResult)? in
            guard case .restored(let tx, let result) = row.row else { return nil }
            return (tx, result)
        }
        #expect(rows.filter { $0.1.basis == .product }.map(\.0.productId) == [annual])
        #expect(rows.allSatisfy { $0.1.contractId == original && $0.1.owner == "alice" })
        #expect(try world.order(no: "annual-order")?.status == .paid)
        #expect(try world.contract(original)?.userId == "alice")
        let orders = try world.store.read { try $0.orders(originNo: original) }
        #expect(orders.count == 9 && orders.allSatisfy { $0.userId == "alice" && $0.status == .paid })
        // Nothing left unmatched; the receipt kept once.
        let ledger = try world.ledger(original: original)
        #expect(ledger.count == 9 && ledger.allSatisfy { $0.verdict == .applied })
        #expect(ledger.filter { $0.raw == base64 }.count == 1)
        #expect(try world.counts.unmatched == 0)
    }
}

extension World {
    func order(no: String) throws -> Order? { try store.read { try $0.order(no: no) } }
}
