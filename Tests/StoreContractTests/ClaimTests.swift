import Dispatch
import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Exactly-once claims (`iap_notification_claims`): one holder per notification UUID, taken
/// inside the transaction that does the work.
@Suite("Store contract: notification claims")
struct ClaimTests {
    @Test(arguments: StoreBackend.available)
    func aClaimIsHeldOnceAndFollowsItsTransaction(backend: StoreBackend) throws {
        try withStore(backend) { store in
            // Taken and taken again in one transaction.
            #expect(
                try store.write(commit: false) { s in [try s.claimNotification("n1"), try s.claimNotification("n1")] } == [true, false])
            // The rollback gave it back; a commit keeps it.
            #expect(try store.write { try $0.claimNotification("n1") })
            #expect(try store.write { try $0.claimNotification("n1") } == false)
            #expect(try store.write { try $0.claimNotification("n2") })
            // Released in a savepoint that rolls back: still held.
            _ = try? store.write { s throws in
                try s.savepoint {
                    try s.releaseNotificationClaim("n1")
                    throw Boom()
                } as Void
            }
            #expect(try store.write { try $0.claimNotification("n1") } == false)
            // Released and committed: free again.
            try store.write { try $0.releaseNotificationClaim("n1") }
            #expect(try store.write { try $0.claimNotification("n1") })
            #expect(try store.write { try $0.claimNotification("n2") } == false)
        }
    }

    /// A second connection claiming what an open transaction holds waits for it: after a commit
    /// it is refused, after a rollback it gets the claim.
    @Test(arguments: StoreBackend.available)
    func aConcurrentClaimWaitsForTheHolder(backend: StoreBackend) throws {
        try ConcurrentClaim.waitsForTheHolder(backend) { session, key, _ in try session.claimNotification(key) }
    }
}

/// Two connections claiming one key (a notification, a refund request): while an open transaction
/// of the first holds it, the second waits; after a commit it is refused, after a rollback it gets it.
enum ConcurrentClaim {
    /// `claim(session, key, claimant)` claims `key`; true when it got it.
    static func waitsForTheHolder(
        _ backend: StoreBackend, claim: @escaping (any StoreSession, String, String) throws -> Bool
    ) throws {
        let (first, second, cleanup) = try backend.makeStorePair()
        defer { cleanup() }
        let claiming = UncheckedClaim(claim: claim)
        for commit in [true, false] {
            let key = "k-\(commit)"
            let held = DispatchSemaphore(value: 0)
            let holder = UncheckedStore(first)
            let done = DispatchGroup()
            done.enter()
            Thread.detachNewThread {
                _ = try? holder.store.write(commit: commit) { s throws in
                    _ = try claiming.claim(s, key, "holder")
                    held.signal()
                    Thread.sleep(forTimeInterval: 0.4)
                }
                done.leave()
            }
            held.wait()
            let started = Date()
            let claimed = try second.write { try claim($0, key, "second") }
            #expect(Date().timeIntervalSince(started) > 0.2, "the claim did not wait for the holder")
            #expect(claimed == !commit, "commit \(commit)")
            done.wait()
        }
    }

    /// The claim, handed to the holder's thread (which alone calls it while the test waits).
    struct UncheckedClaim: @unchecked Sendable {
        let claim: (any StoreSession, String, String) throws -> Bool
    }
}

/// Hands a store to one other thread that uses it alone.
struct UncheckedStore: @unchecked Sendable {
    let store: any Store
    init(_ store: any Store) { self.store = store }
}
