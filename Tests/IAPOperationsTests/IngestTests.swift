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

/// Ingest of verified notification batches, in-process on every backend: group commit, one
/// transaction for a whole batch (atomic, dry run), replay, Ctrl-C.
@Suite("Notification ingest")
struct IngestTests {
    @Test(arguments: Backend.available)
    func groupCommitAppliesInInputOrderAcrossChunks(_ backend: Backend) throws {
        let world = try World(backend, orders: 3)
        // Each renewal needs its purchase applied first, within a chunk and across the boundary at 2.
        let lines = try (0..<3).flatMap { try world.lifecycle($0) }
        let results = try world.commit(lines, chunkSize: 2)
        #expect(results.map(\.line) == Array(1...6))
        #expect(results.map(\.result.verdict) == Array(repeating: .applied, count: 6))
        for i in 0..<3 {
            #expect(try world.order(i)?.status == .paid)
            let contract = try #require(try world.contract("orig-\(i)"))
            #expect(contract.userId == "user-\(i)")
            #expect(contract.expiresDate == World.t0 + 60 * World.day)
        }
        #expect(try world.counts.ledger == 6)
    }

    @Test(arguments: Backend.available)
    func replayingTheSameInputChangesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let lines = try world.lifecycle(0)
        _ = try world.commit(lines)
        let before = try world.counts
        let contract = try world.contract("orig-0")
        let again = try world.commit(lines)
        #expect(again.map(\.result.verdict) == [.duplicate, .duplicate])
        #expect(try world.counts.orders == before.orders)
        #expect(try world.counts.contracts == before.contracts)
        #expect(try world.contract("orig-0") == contract)
    }

    @Test(arguments: Backend.available)
    func refusedAndPoisonItemsFailAloneAndOnlyPoisonIsKept(_ backend: Backend) throws {
        let world = try World(backend)
        let long = String(repeating: "p", count: StoredFields.maxId + 1)
        let poison = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", uuid: "poison", tx: world.transaction("9000", original: "orig-9", product: long))
        let lines = [Lines.unreadable, "not.a.jws"] + (try world.lifecycle(0)) + [poison]
        let results = try world.commit(lines)
        #expect(results.map(\.line) == [1, 2, 3, 4, 5])
        guard case .rejected(.malformed) = results[0].result, case .rejected(.failedVerification) = results[1].result else {
            Issue.record("lines 1-2 are not refused: \(results[0].result), \(results[1].result)")
            return
        }
        #expect(results[2].result.verdict == .applied)
        #expect(results[3].result.verdict == .applied)
        guard case .poison(_, let why) = results[4].result else {
            Issue.record("line 5 is not poison: \(results[4].result)")
            return
        }
        #expect(why.contains("productId is \(long.count) characters long"))
        #expect(!results[0].result.isStored && results[4].result.isStored)
        // The poison item is in the ledger as rejected; it changed no row.
        let kept = try world.ledger(original: "orig-9")
        #expect(kept.map(\.verdict) == [.rejected])
        #expect(kept.first?.raw == poison)
        #expect(try world.contract("orig-9") == nil)
    }

    @Test(arguments: Backend.available)
    func aDryRunInOneTransactionPredictsAndRollsBack(_ backend: Backend) throws {
        let world = try World(backend)
        let lines = try world.lifecycle(0) + world.lifecycle(1)
        var seen: [Verdict] = []
        let unread = try world.ingest().runInOneTransaction(world.batches(lines, chunkSize: 3), commit: false) {
            seen.append($1.verdict)
            return true
        }
        #expect(unread == nil)
        // Each item saw the ones before it: the renewals applied after their purchases.
        #expect(seen == [.applied, .applied, .applied, .applied])
        #expect(try world.counts.ledger == 0)
        #expect(try world.order(0)?.status == .pending)
        #expect(try world.contract("orig-0") == nil)
    }

    @Test(arguments: Backend.available)
    func anAtomicBatchStopsAtTheFirstFailureAndKeepsNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let orphan = try world.notification("DID_RENEW", uuid: "orphan", tx: world.transaction("7001", original: "orig-7", period: 1))
        let lines = try world.lifecycle(0) + [orphan] + world.lifecycle(1)
        var seen: [Int] = []
        let unread = try world.ingest().runInOneTransaction(world.batches(lines, chunkSize: 2), commit: true) { item, result in
            seen.append(item.line)
            return result.verdict == .applied
        }
        #expect(seen == [1, 2, 3])
        #expect(unread == [4, 5])
        #expect(try world.counts.ledger == 0)
        #expect(try world.order(0)?.status == .pending)
    }

    @Test(arguments: Backend.available)
    func anInterruptRollsTheOpenChunkBackAndDeliversNothingOfIt(_ backend: Backend) throws {
        let world = try World(backend)
        let lines = [Lines.unreadable] + (try world.lifecycle(0))
        let batch = try #require(try world.batches(lines).next())
        var delivered: [Int] = []
        #expect(throws: NotificationIngest.Stopped.self) {
            try world.ingest(shouldStop: { true }).applyCommitted(batch, deliver: { item, _ in delivered.append(item.line) })
        }
        // The leading refused item needed no transaction; the chunk's events were not committed.
        #expect(delivered == [1])
        #expect(try world.counts.ledger == 0)
        #expect(try world.order(0)?.status == .pending)
    }

    @Test(arguments: Backend.available)
    func anUnmatchedItemIsReplayedOnceItsOrderExists(_ backend: Backend) throws {
        let world = try World(backend, orders: 0)
        let buy = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", uuid: "late", tx: world.transaction("5000", original: "orig-5", token: World.token(5)))
        #expect(try world.commit([buy]).map(\.result.verdict) == [.unmatched])
        #expect(try world.commit([buy]).map(\.result.verdict) == [.unmatched])
        #expect(try world.counts.unmatched == 1)
        let pending = try UnmatchedReplay.pending(in: world.store)
        #expect(pending.count == 1)
        try world.store.write { _ = try $0.insertOrder(Order(no: World.token(5), userId: "user-5", productId: World.product)) }
        let engine = SubscriptionEventEngine()
        let replayed = try UnmatchedReplay.replay(
            pending[0], jws: world.verifier, receipts: { throw Unexpected() }, store: world.store, engine: engine,
            context: world.context, dryRun: false)
        guard case .applied(_, let outcome) = replayed else {
            Issue.record("not applied: \(replayed)")
            return
        }
        #expect(outcome.verdict == .applied)
        #expect(try world.order(5)?.status == .paid)
        #expect(try UnmatchedReplay.pending(in: world.store).isEmpty)
        // The replay rewrote the item's own ledger row.
        #expect(try world.counts.ledger == 1)
    }

    struct Unexpected: Error {}
}

/// `verify --apply` and `restore --apply` through IAPOperations, on every backend.
@Suite("Client submissions")
struct ClientSubmissionTests {
    @Test(arguments: Backend.available)
    func aSignedTransactionIsAppliedAsAClientSubmissionAndADryRunKeepsNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let jws = try world.pki.sign(payload: world.transaction("1000", original: "orig-0", token: World.token(0)).json)
        let report = world.verifier.verify(jws)
        #expect(report.isValid)
        let engine = SubscriptionEventEngine()
        let dry = try ClientSubmission.applyTransaction(
            report, jws: jws, store: world.store, engine: engine, context: world.context, dryRun: true)
        guard case .applied(_, let predicted) = dry else {
            Issue.record("dry run not applied: \(dry)")
            return
        }
        #expect(predicted.verdict == .applied)
        #expect(try world.counts.ledger == 0)
        let real = try ClientSubmission.applyTransaction(
            report, jws: jws, store: world.store, engine: engine, context: world.context, dryRun: false)
        guard case .applied(let event, let outcome) = real else {
            Issue.record("not applied: \(real)")
            return
        }
        #expect(event.source == .client)
        #expect(outcome.verdict == .applied)
        #expect(try world.order(0)?.status == .paid)
        #expect(try world.ledger(original: "orig-0").map(\.source) == [.client])
    }

    @Test(arguments: Backend.available)
    func aNotificationIsNotATransactionAndChangesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let jws = try world.lifecycle(0)[0]
        let result = try ClientSubmission.applyTransaction(
            world.verifier.verify(jws), jws: jws, store: world.store, engine: SubscriptionEventEngine(),
            context: world.context, dryRun: false)
        guard case .notATransaction(.notification) = result else {
            Issue.record("expected notATransaction: \(result)")
            return
        }
        // Kept in the ledger as rejected (every JWS received is kept), nothing else.
        #expect(try world.counts == StoreCounts(orders: 2, contracts: 0, ledger: 1, unmatched: 0, audit: 0))
        #expect(try world.order(0)?.status == .pending)
    }

    @Test(arguments: Backend.available)
    func restoreKeepsEveryRestoredTransactionInTheLedger(_ backend: Backend) throws {
        let world = try World(backend)
        _ = try world.commit(try world.lifecycle(0))
        let tx = try #require(
            EventMapping.facts(
                try AppStoreJWS.TransactionPayload(
                    json: try JSONParser.parse(Array(world.transaction("0001", original: "orig-0", period: 1).json.utf8)))))
        var results: [RestoreResult] = []
        try ClientSubmission.restore(
            [tx], raw: "restored-jws", user: "user-1", policy: .keep, reason: nil, explicitOrder: nil,
            service: RestoreService(engine: SubscriptionEventEngine()), store: world.store, context: world.context,
            dryRun: false
        ) { _, result in results.append(result) }
        // user-1 restores user-0's subscription: owned by another, kept in the ledger, nothing moved.
        #expect(results.map(\.verdict) == [.ownedByOther])
        #expect(try world.contract("orig-0")?.userId == "user-0")
        #expect(try world.ledger(original: "orig-0").contains { $0.raw == "restored-jws" })
    }
}
