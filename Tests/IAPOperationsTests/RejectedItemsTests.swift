import AppStoreJWS
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

/// Every JWS received is in the ledger with its verdict, rejected ones too
/// when their bytes can be read; kept once per distinct bytes, never a fact or a row change.
@Suite("Rejected items are kept in the ledger")
struct RejectedItemsTests {
    /// Every ledger row, oldest first (ids from 1; MySQL may skip ids a rollback used).
    static func ledger(_ world: World) throws -> [LedgerEntry] {
        let count = try world.counts.ledger
        return try world.store.read { session in
            var rows: [LedgerEntry] = []
            var id: Int64 = 1
            while rows.count < count, id < Int64(count) + 1000 {
                if let row = try session.ledgerEntry(id: id) { rows.append(row) }
                id += 1
            }
            return rows
        }
    }

    /// A notification for order 0 signed by a CA nobody trusts: it fails verification.
    static func forged(_ world: World, uuid: String = "forged") throws -> String {
        let stranger = PayloadBuilder(pki: try TestPKI.make(), bundleId: World.bundleId, environment: "Sandbox")
        return try stranger.notification(
            type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid, signedDate: World.t0 + 6_000,
            transaction: world.transaction("6000", original: "orig-0", token: World.token(0)))
    }

    @Test(arguments: Backend.available)
    func aNotificationThatFailsVerificationIsKeptWithItsVerdictAndChangesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try Self.forged(world)
        let results = try world.commit([Lines.unreadable, forged])
        guard case .rejected(.failedVerification(let failure, _, _)) = results[1].result else {
            Issue.record("not refused by verification: \(results[1].result)")
            return
        }
        #expect(!results[1].result.isStored)
        // The unreadable line has no bytes to keep; the forged JWS is kept whole, with no ids.
        let rows = try Self.ledger(world)
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row.verdict == .rejected && row.source == .apple)
        #expect(row.raw == forged)
        #expect(row.detail == failure.message)
        #expect(row.notificationUUID == nil && row.transactionId == nil && row.originalTransactionId == nil)
        #expect(row.appAccountToken == nil)
        // Nothing else: no order paid, no contract, no fact.
        #expect(try world.order(0)?.status == .pending)
        #expect(try world.contract("orig-0") == nil)
        #expect(try world.store.read { try $0.facts(originalTransactionId: "orig-0") }.isEmpty)
        #expect(try world.counts.audit == 0)
    }

    @Test(arguments: Backend.available)
    func theSameRejectedBytesAreKeptOnceAcrossChunksAndReplays(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try Self.forged(world)
        let other = try Self.forged(world, uuid: "forged-2")
        _ = try world.commit([forged, forged, other, forged], chunkSize: 2)
        _ = try world.commit([forged, other])
        let rows = try Self.ledger(world)
        #expect(rows.map(\.raw).sorted() == [forged, other].sorted())
        // A genuine delivery afterwards is still applied: the kept bytes claim nothing it needs.
        let genuine = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", uuid: "forged", tx: world.transaction("0000", original: "orig-0", token: World.token(0)))
        #expect(try world.commit([genuine]).map(\.result.verdict) == [.applied])
        #expect(try world.order(0)?.status == .paid)
    }

    @Test(arguments: Backend.available)
    func aDryRunOrAnAbortedAtomicBatchKeepsNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try Self.forged(world)
        let lines = try world.lifecycle(0) + [forged]
        _ = try world.ingest().runInOneTransaction(world.batches(lines), commit: false) { _, _ in true }
        #expect(try world.counts.ledger == 0)
        let unread = try world.ingest().runInOneTransaction(world.batches(lines), commit: true) { _, result in
            result.verdict == .applied
        }
        #expect(unread == [])
        #expect(try world.counts.ledger == 0)
    }

    @Test(arguments: Backend.available)
    func aClientSubmissionThatIsRefusedIsKeptAsAClientItem(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try Self.forged(world)
        try ClientSubmission.reject(forged, why: "untrusted chain", store: world.store, dryRun: true)
        #expect(try world.counts.ledger == 0)
        try ClientSubmission.reject(forged, why: "untrusted chain", store: world.store, dryRun: false)
        try ClientSubmission.reject(forged, why: "untrusted chain", store: world.store, dryRun: false)
        // A verified notification given to verify --apply is refused and kept as well.
        let notification = try world.lifecycle(0)[0]
        let result = try ClientSubmission.applyTransaction(
            world.verifier.verify(notification), jws: notification, store: world.store, engine: SubscriptionEventEngine(),
            context: world.context, dryRun: false)
        guard case .notATransaction = result else {
            Issue.record("not refused: \(result)")
            return
        }
        let rows = try Self.ledger(world)
        #expect(rows.map(\.raw) == [forged, notification])
        #expect(rows.allSatisfy { $0.verdict == .rejected && $0.source == .client && $0.transactionId == nil })
        #expect(try world.order(0)?.status == .pending)
    }

    @Test(arguments: Backend.available)
    func restoreKeepsAnUnknownTransactionAsUnmatched(_ backend: Backend) throws {
        // No order at all: nothing to match by token or by product.
        let world = try World(backend, orders: 0)
        let payload = world.transaction("8000", original: "orig-8")
        let tx = try #require(
            EventMapping.facts(try AppStoreJWS.TransactionPayload(json: try JSONParser.parse(Array(payload.json.utf8)))))
        var verdicts: [RestoreVerdict] = []
        try ClientSubmission.restore(
            [tx], raw: "restored-8000", user: "user-0", policy: .keep, reason: nil, explicitOrder: nil,
            service: RestoreService(engine: SubscriptionEventEngine()), store: world.store, context: world.context,
            dryRun: false
        ) { _, result in verdicts.append(result.verdict) }
        #expect(verdicts == [.unknown])
        let kept = try world.ledger(original: "orig-8")
        #expect(kept.map(\.verdict) == [.unmatched])
        #expect(kept.first?.raw == "restored-8000")
    }
}
