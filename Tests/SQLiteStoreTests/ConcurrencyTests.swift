import Foundation
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// Two connections on one file: writers wait for each other instead of failing.
@Suite("SQLiteStore: concurrent connections")
struct ConcurrencyTests {
    /// Starts a thread that opens its own store on `path`, holds a write transaction for
    /// `holdMilliseconds`, inserts order `no`, and commits. Returns once the lock is held.
    private func holdWriteLock(path: String, no: String, holdMilliseconds: UInt32) -> (
        done: DispatchSemaphore, error: Shared<String?>
    ) {
        let held = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let error = Shared<String?>(nil)
        let thread = Thread {
            do {
                let store = try SQLiteStore(path: path, create: false)
                try store.write { s in
                    _ = try s.insertOrder(Order(no: no, userId: "u", productId: "p", createdAt: 1, updatedAt: 1))
                    held.signal()
                    usleep(holdMilliseconds * 1000)
                }
            } catch let e {
                error.value = "\(e)"
                held.signal()
            }
            done.signal()
        }
        thread.start()
        held.wait()
        return (done, error)
    }

    private func migratedFile(_ scratch: Scratch) throws -> String {
        let path = scratch.path()
        _ = try SQLiteStore(path: path, create: true).migrate()
        return path
    }

    @Test func secondWriterWaitsForTheFirst() throws {
        let scratch = try Scratch()
        let path = try migratedFile(scratch)
        let store = try SQLiteStore(path: path, create: false)
        _ = try store.read { try $0.counts() }  // schema checked before the clock starts

        let holder = holdWriteLock(path: path, no: "first", holdMilliseconds: 300)
        let start = ContinuousClock.now
        let sawFirst = try store.write { s throws in
            _ = try s.insertOrder(Order(no: "second", userId: "u", productId: "p", createdAt: 1, updatedAt: 1))
            // BEGIN IMMEDIATE waited for the other commit, so its row is visible.
            return try s.order(no: "first") != nil
        }
        let waited = ContinuousClock.now - start
        holder.done.wait()

        #expect(holder.error.value == nil)
        #expect(sawFirst)
        #expect(waited >= .milliseconds(200), "the second writer should have waited, waited \(waited)")
        #expect(try store.read { try $0.counts().orders } == 2)
    }

    @Test func readersDoNotWaitForAWriter() throws {
        let scratch = try Scratch()
        let path = try migratedFile(scratch)
        let store = try SQLiteStore(path: path, create: false)
        _ = try store.read { try $0.counts() }

        let holder = holdWriteLock(path: path, no: "pending", holdMilliseconds: 500)
        let start = ContinuousClock.now
        let seen = try store.read { try $0.order(no: "pending") }
        let took = ContinuousClock.now - start
        holder.done.wait()

        #expect(seen == nil)  // uncommitted work is invisible
        #expect(took < .milliseconds(400))
        #expect(holder.error.value == nil)
    }

    @Test func lockHeldPastTheTimeoutIsBusy() throws {
        let scratch = try Scratch()
        let path = try migratedFile(scratch)
        let impatient = try SQLiteStore(path: path, create: false, busyTimeoutMilliseconds: 50)
        _ = try impatient.read { try $0.counts() }

        let holder = holdWriteLock(path: path, no: "slow", holdMilliseconds: 600)
        let caught = #expect(throws: StoreError.self) { try impatient.write { _ in } }
        holder.done.wait()
        guard case .busy(let message, let reason)? = caught else {
            Issue.record("expected StoreError.busy, got \(String(describing: caught))")
            return
        }
        #expect(message.contains("busy") || message.contains("locked"))
        #expect(reason == .lockedPastTimeout)
        // Once the lock is released the same store writes normally.
        try impatient.write { _ = try $0.insertOrder(Order(no: "later", userId: "u", productId: "p")) }
        #expect(try impatient.read { try $0.counts().orders } == 2)
    }
}
