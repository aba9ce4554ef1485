import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

/// A write unit is all or nothing whatever the server does to its transaction: each fault is
/// injected against the real test server in the middle of the first run of a unit (an order, a
/// ledger row, then an order and its audit row), the unit runs under the engine's retry policy, and
/// the tables then hold exactly one run's work.
@Suite("MySQLStore aborted transactions", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct AbortedTransactionTests {
    /// Where in the unit the fault strikes.
    enum Place { case betweenStatements, inEventSavepoint, inFailingEventSavepoint }

    /// The server ends the transaction without telling the statement (Galera's brute-force abort
    /// during a prepare, seen by the client only as warning 1317): here a ROLLBACK the store does
    /// not see. The unit's later statements must neither commit by themselves nor be committed.
    @Test(arguments: [Place.betweenStatements, .inEventSavepoint, .inFailingEventSavepoint])
    func transactionEndedSilentlyIsRunAgainWhole(_ place: Place) throws {
        try TestServer.withFreshStore { store throws in
            let attempts = try Self.runUnit(store, place: place) { try store.executeBehindTheStoreForTesting("ROLLBACK") }
            #expect(attempts == 2)
            try Self.expectOneRunsWork(store)
        }
    }

    /// Without the retry policy the unit fails busy (exit 75, "retry"), and nothing of it is kept.
    @Test func transactionEndedSilentlyLeavesNothing() throws {
        try TestServer.withFreshStore { store throws in
            let error = expectStoreError(\.isBusy) {
                try store.write { s throws in
                    _ = try s.insertOrder(Sample.order("first"))
                    try store.executeBehindTheStoreForTesting("ROLLBACK")
                    _ = try s.insertOrder(Sample.order("second"))
                    _ = try s.appendAudit(Self.audit("second"))
                }
            }
            if case .busy(_, let reason) = error { #expect(reason == .transactionLost) }
            #expect(
                try store.read { try $0.counts() }
                    == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
        }
    }

    /// KILL QUERY from another connection interrupts a statement of the unit waiting for a row
    /// lock (error 1317).
    @Test func interruptedStatementIsRunAgainWhole() throws {
        try TestServer.withFreshStore { store throws in
            let other = Handed(try MySQLStore(url: store.url, password: TestServer.password))
            let killer = Handed(try MySQLStore(url: store.url, password: TestServer.password))
            let id = store.connectionIdForTesting
            let attempts = try Self.runUnit(store, place: .betweenStatements) {
                let held = DispatchSemaphore(value: 0)
                let released = DispatchSemaphore(value: 0)
                Thread {
                    _ = try? other.store.write(commit: false) { s throws in
                        _ = try s.insertOrder(Sample.order("held"))
                        held.signal()
                        Thread.sleep(forTimeInterval: 1.5)
                    }
                    released.signal()
                }.start()
                held.wait()
                defer { released.wait() }
                Thread {
                    Thread.sleep(forTimeInterval: 0.5)
                    try? killer.store.executeForTesting("KILL QUERY \(id)")
                }.start()
                try store.write { s throws in _ = try s.order(no: "held") }  // waits for the lock
            }
            #expect(attempts == 2)
            try Self.expectOneRunsWork(store)
        }
    }

    /// A deadlock (1213) rolls the whole transaction back: the unit runs again from the start.
    @Test func deadlockIsRunAgainWhole() throws {
        try TestServer.withFreshStore { store throws in
            let other = Handed(try MySQLStore(url: store.url, password: TestServer.password))
            let attempts = try Self.runUnit(store, place: .betweenStatements) {
                // The other transaction is the heavier one (more rows), so the server picks the unit.
                let otherLocked = DispatchSemaphore(value: 0)
                let otherDone = DispatchSemaphore(value: 0)
                let thread = Thread {
                    _ = try? other.store.write { s throws in
                        for i in 0..<5 { _ = try s.insertOrder(Sample.order("other-\(i)")) }
                        otherLocked.signal()
                        Thread.sleep(forTimeInterval: 0.5)
                        _ = try s.order(no: "first")  // waits for the unit: a deadlock
                    }
                    otherDone.signal()
                }
                thread.start()
                otherLocked.wait()
                defer { otherDone.wait() }
                try store.write { s throws in _ = try s.order(no: "other-0") }  // waits for the other
            }
            #expect(attempts == 2)
            try Self.expectOneRunsWork(store, others: 5)
        }
    }

    /// The connection is killed under the unit: the run stops unavailable (exit 69) and nothing of
    /// the unit is kept.
    @Test func killedConnectionLeavesNothing() throws {
        try TestServer.withFreshStore { store throws in
            let killer = try MySQLStore(url: store.url, password: TestServer.password)
            expectStoreError(\.isUnavailable) {
                try store.write { s throws in
                    _ = try s.insertOrder(Sample.order("first"))
                    try killer.executeForTesting("KILL \(store.connectionIdForTesting)")
                    _ = try s.insertOrder(Sample.order("second"))
                }
            }
            let counts = try killer.read { try $0.counts() }
            #expect(counts == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
        }
    }

    // MARK: helpers

    /// Runs the unit under the retry policy, with `fault` at `place` on the first attempt only;
    /// returns how many attempts it took.
    static func runUnit(_ store: MySQLStore, place: Place, fault: () throws -> Void) throws -> Int {
        var attempts = 0
        try RetryPolicy.run {
            attempts += 1
            let first = attempts == 1
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("first"))
                _ = try s.appendLedger(Sample.ledger(uuid: "n-1"))
                switch place {
                case .betweenStatements:
                    if first { try fault() }
                    try Self.secondHalf(s)
                case .inEventSavepoint:
                    try s.savepoint {
                        if first { try fault() }
                        try Self.secondHalf(s)
                    }
                case .inFailingEventSavepoint:
                    // An event that fails after the fault: its savepoint is rolled back (and is gone).
                    do {
                        try s.savepoint { () throws -> Void in
                            if first { try fault() }
                            throw Boom()
                        }
                    } catch is Boom {}
                    try Self.secondHalf(s)
                }
            }
        }
        return attempts
    }

    private static func secondHalf(_ s: any StoreSession) throws {
        let second = try s.insertOrder(Sample.order("second"))
        _ = try s.appendAudit(audit(second.no))
    }

    static func audit(_ key: String) -> AuditEntry {
        AuditEntry(
            at: 1_700_000_000_000, actor: "test", command: "fault", entity: .order, key: key, before: nil, after: "{}")
    }

    static func expectOneRunsWork(_ store: MySQLStore, others: Int = 0) throws {
        let counts = try store.read { try $0.counts() }
        #expect(counts == StoreCounts(orders: 2 + others, contracts: 0, ledger: 1, unmatched: 0, audit: 1))
        let audited = try store.read { try $0.auditEntries(matching: AuditFilter()).map(\.key) }
        #expect(audited == ["second"])
        #expect(try store.read { try $0.order(no: "second") } != nil)
    }
}

/// A store handed to one other thread, used there only while the test waits.
final class Handed: @unchecked Sendable {
    let store: MySQLStore
    init(_ store: MySQLStore) { self.store = store }
}
