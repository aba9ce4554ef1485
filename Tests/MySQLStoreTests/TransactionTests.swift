import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

@Suite("MySQLStore transactions", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct TransactionTests {
    @Test func throwRollsBackEverything() throws {
        try TestServer.withFreshStore { store throws in
            #expect(throws: Boom.self) {
                try store.write { s throws in
                    _ = try s.insertOrder(Sample.order("a"))
                    _ = try s.appendLedger(Sample.ledger(uuid: "n"))
                    throw Boom()
                }
            }
            #expect(
                try store.read { try $0.counts() }
                    == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
        }
    }

    @Test func commitFalseRollsBackButReturnsTheResult() throws {
        try TestServer.withFreshStore { store throws in
            let order = try store.write(commit: false) { try $0.insertOrder(Sample.order("dry")) }
            #expect(order.no == "dry")
            #expect(try store.read { try $0.order(no: "dry") } == nil)
        }
    }

    @Test func uniqueKeysAreConflicts() throws {
        try TestServer.withFreshStore { store throws in
            _ = try store.write { s throws in
                _ = try s.insertOrder(Sample.order("a", tradeNo: "t1"))
                return try s.insertContract(Sample.contract("c1"))
            }
            expectStoreError(\.isConflict) { _ = try store.write { try $0.insertOrder(Sample.order("a")) } }
            expectStoreError(\.isConflict) {
                _ = try store.write { try $0.insertOrder(Sample.order("b", tradeNo: "t1")) }
            }
            expectStoreError(\.isConflict) { _ = try store.write { try $0.insertContract(Sample.contract("c1")) } }
            // Orders without a transaction id do not collide (NULL is not a duplicate).
            _ = try store.write { s throws in
                _ = try s.insertOrder(Sample.order("c"))
                return try s.insertOrder(Sample.order("d"))
            }
            #expect(try store.read { try $0.counts().orders } == 3)
        }
    }

    @Test func savepointRollsBackOnlyItsWork() throws {
        try TestServer.withFreshStore { store throws in
            try store.write { (s: any StoreSession) throws -> Void in
                _ = try s.insertOrder(Sample.order("kept-1"))
                try Self.failingSavepoint(s)
                try Self.conflictingSavepoint(s)
                let nested: Order = try s.savepoint { () throws -> Order in
                    try s.savepoint { () throws -> Order in try s.insertOrder(Sample.order("kept-2")) }
                }
                #expect(nested.no == "kept-2")
            }
            let nos = try store.read { try $0.orders(matching: OrderFilter()).map(\.no) }
            #expect(nos == ["kept-2", "kept-1"])
        }
    }

    private static func failingSavepoint(_ s: any StoreSession) throws {
        do {
            try s.savepoint { () throws -> Void in
                _ = try s.insertOrder(Sample.order("dropped"))
                throw Boom()
            }
            Issue.record("the savepoint body's error was not rethrown")
        } catch is Boom {}
    }

    /// A duplicate inside a savepoint: only that statement and savepoint are undone.
    private static func conflictingSavepoint(_ s: any StoreSession) throws {
        do {
            try s.savepoint { () throws -> Void in
                _ = try s.insertOrder(Sample.order("dropped-too"))
                _ = try s.insertOrder(Sample.order("kept-1"))
            }
            Issue.record("a duplicate order number was accepted")
        } catch let error as StoreError {
            #expect(error.isConflict, "got \(error)")
        }
    }

    @Test func nestedWritesAreSavepoints() throws {
        try TestServer.withFreshStore { store throws in
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("outer"))
                _ = try store.write(commit: false) { try $0.insertOrder(Sample.order("inner-dry")) }
                _ = try store.write { try $0.insertOrder(Sample.order("inner")) }
                #expect(try store.read { try $0.order(no: "inner") } != nil, "a nested read shares the transaction")
            }
            let nos = Set(try store.read { try $0.orders(matching: OrderFilter()).map(\.no) })
            #expect(nos == ["outer", "inner"])
        }
    }

    @Test func misuseIsReported() throws {
        try TestServer.withFreshStore { store throws in
            expectStoreError(\.isFailure) { try store.read { s in _ = try s.insertOrder(Sample.order("x")) } }
            expectStoreError(\.isFailure) { try store.read { _ in try store.write { _ in } } }
            let leaked = try store.read { $0 }
            expectStoreError(\.isFailure) { _ = try leaked.order(no: "x") }
        }
    }

    @Test func unmigratedDatabaseIsRefused() throws {
        try TestServer.withFreshStore(migrate: false) { store throws in
            #expect(try store.schemaVersion() == (current: 0, supported: Schema.supported))
            expectStoreError(\.isSchemaMismatch) { _ = try store.read { try $0.counts() } }
            expectStoreError(\.isSchemaMismatch) { _ = try store.write { try $0.counts() } }
        }
    }

    /// Two connections insert the same transaction id at once: exactly one row, the other a conflict.
    @Test func concurrentInsertOfSameTradeNoGivesOneRowAndOneConflict() throws {
        try TestServer.withFreshStore { setup throws in
            let url = setup.url
            let password = TestServer.password
            let firstInserted = DispatchSemaphore(value: 0)
            let results = Results()
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                do {
                    let store = try MySQLStore(url: url, password: password)
                    _ = try store.write { s throws in
                        let order = try s.insertOrder(Sample.order("first", tradeNo: "race-1"))
                        firstInserted.signal()
                        Thread.sleep(forTimeInterval: 0.5)  // hold the unique-index lock a while
                        return order
                    }
                    results.set(0, nil)
                } catch {
                    firstInserted.signal()
                    results.set(0, error)
                }
            }
            DispatchQueue.global().async(group: group) {
                do {
                    let store = try MySQLStore(url: url, password: password)
                    firstInserted.wait()
                    _ = try store.write { try $0.insertOrder(Sample.order("second", tradeNo: "race-1")) }
                    results.set(1, nil)
                } catch {
                    results.set(1, error)
                }
            }
            #expect(group.wait(timeout: .now() + 30) == .success)
            let outcome = results.snapshot()
            #expect(outcome[0] == "ok")
            #expect(outcome[1] == "conflict", "the second writer waits for the first commit, then hits the unique key")
            let rows = try setup.read { try $0.orders(matching: OrderFilter()) }
            #expect(rows.map(\.no) == ["first"])
        }
    }

    /// A row lock held longer than the lock wait timeout gives `busy`.
    @Test func lockWaitTimeoutIsBusy() throws {
        try TestServer.withFreshStore { setup throws in
            let order = try setup.write { try $0.insertOrder(Sample.order("locked", tradeNo: "t-lock")) }
            let url = setup.url
            let password = TestServer.password
            let locked = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                do {
                    let store = try MySQLStore(url: url, password: password)
                    try store.write { s throws in
                        var changed = order
                        changed.status = .paid
                        try s.updateOrder(changed)
                        locked.signal()
                        _ = release.wait(timeout: .now() + 10)
                    }
                } catch {
                    locked.signal()
                }
            }
            locked.wait()
            let waiter = try MySQLStore(url: url, password: password, lockWaitTimeoutSeconds: 1)
            let error = expectStoreError(\.isBusy) { _ = try waiter.write { try $0.order(tradeNo: "t-lock") } }
            #expect(error?.description.contains("1205") == true)
            release.signal()
            #expect(group.wait(timeout: .now() + 15) == .success)
            // The waiter's connection is still usable afterwards.
            #expect(try waiter.read { try $0.order(no: "locked")?.status } == .paid)
        }
    }
}

extension TransactionTests {
    /// Two writers lock two rows in opposite order: InnoDB rolls one back (deadlock). That one gets
    /// `busy`, cannot go on in the dead transaction (statements would otherwise autocommit), and
    /// nothing of it is committed; the other commits.
    @Test func deadlockVictimIsBusyAndItsTransactionCannotGoOn() throws {
        try TestServer.withFreshStore { setup throws in
            _ = try setup.write { s throws in
                _ = try s.insertOrder(Sample.order("r1"))
                return try s.insertOrder(Sample.order("r2"))
            }
            let url = setup.url
            let password = TestServer.password
            let results = Results()
            let locked = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
            let group = DispatchGroup()
            for worker in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    let mine = worker == 0 ? "r1" : "r2"
                    let theirs = worker == 0 ? "r2" : "r1"
                    do {
                        let store = try MySQLStore(url: url, password: password)
                        try store.write { s throws in
                            _ = try s.order(no: mine)  // FOR UPDATE in a write transaction
                            locked[worker].signal()
                            locked[1 - worker].wait()
                            do {
                                _ = try s.order(no: theirs)
                            } catch {
                                // Swallow it and try to go on: the store must refuse.
                                _ = try? s.insertOrder(Sample.order("after-deadlock-\(worker)"))
                                throw error
                            }
                        }
                        results.set(worker, nil)
                    } catch let error as StoreError where error.isBusy && error.description.contains("1213") {
                        results.set(worker, Deadlocked())
                    } catch {
                        results.set(worker, error)
                    }
                }
            }
            #expect(group.wait(timeout: .now() + 30) == .success)
            #expect(results.snapshot().sorted() == ["deadlock", "ok"])
            let nos = try setup.read { try $0.orders(matching: OrderFilter()).map(\.no) }
            #expect(nos.sorted() == ["r1", "r2"], "nothing of the victim's transaction is committed")
        }
    }
}

/// Marks a `busy` outcome caused by a deadlock (1213) in ``Results``.
struct Deadlocked: Error, CustomStringConvertible {
    var description: String { "deadlock" }
}

/// Outcomes of the concurrent workers: "ok", "conflict" or the error text.
final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values = ["pending", "pending"]

    func set(_ index: Int, _ error: (any Error)?) {
        let text: String
        if let error {
            text = (error as? StoreError)?.isConflict == true ? "conflict" : "\(error)"
        } else {
            text = "ok"
        }
        lock.lock()
        values[index] = text
        lock.unlock()
    }

    func snapshot() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}
