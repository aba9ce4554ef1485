import Dispatch
import Foundation
import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import MySQLStore

/// On MariaDB, a notification's claim also says whether the ledger holds a copy of it, its
/// audit rows go in one INSERT, and a chain already stored is read, not locked, by each writer.
@Suite("MariaDB: a notification's round trips and shared rows", .serialized)
struct MySQLNotificationTripsTests {
    static let mysql = StoreBackend.available.filter { $0 == .mysql }
    static let raws = LedgerRawTests.replay.prefix(4).map(\.raw)

    static func entry(_ uuid: String, _ raw: String) -> LedgerEntry {
        LedgerEntry(
            receivedAt: 1, source: .apple, notificationUUID: uuid, transactionId: "t", verdict: .applied, detail: nil,
            raw: raw)
    }

    /// Claim, ledger row, three audit rows: three round trips (were six: the claim, the first-copy
    /// look-up, the ledger row and one INSERT per audit row).
    @Test(arguments: mysql)
    func aFreshNotificationsClaimLedgerRowAndAuditRowsTakeThreeRoundTrips(backend: StoreBackend) throws {
        let audits = [PackedTextsTests.orderInsert, PackedTextsTests.contractUpdate, PackedTextsTests.orderInsert]
        try withStore(backend) { store in
            let connection = try #require(store as? MySQLStore).connection
            try store.write { s in
                // Prepares the statements and stores the chain the next raw shares.
                #expect(try s.claimNotification("warm"))
                _ = try s.appendLedger(Self.entry("warm", Self.raws[0]), audits: audits)
                let before = connection.trips.count
                #expect(try s.claimNotification("n-1"))
                _ = try s.appendLedger(Self.entry("n-1", Self.raws[1]), audits: audits)
                #expect(connection.trips.count - before == 3)
            }
            try store.read { s throws in
                #expect(try s.auditEntries(matching: AuditFilter()).count == 6)
                #expect(try s.processedLedgerEntry(notificationUUID: "n-1")?.raw == Self.raws[1])
            }
        }
    }

    /// A writer whose raw uses a chain already committed does not hold that row: another writer
    /// of the same chain goes on while the first transaction is still open.
    @Test(arguments: mysql)
    func aStoredChainDoesNotMakeConcurrentWritersQueue(backend: StoreBackend) throws {
        let (first, second, cleanup) = try backend.makeStorePair()
        defer { cleanup() }
        _ = try first.write { try $0.appendLedger(Self.entry("c-0", Self.raws[0])) }
        let (id, took) = try Self.whileHeld(by: first) { s in
            _ = try s.appendLedger(Self.entry("c-1", Self.raws[1]))
        } run: {
            try second.write { try $0.appendLedger(Self.entry("c-2", Self.raws[2])) }
        }
        #expect(took < 0.4, "the second writer waited for the first one's chain row")
        try second.read { s throws in
            #expect(try s.ledgerEntry(id: id)?.raw == Self.raws[2])
            #expect(try s.processedLedgerEntry(notificationUUID: "c-1")?.raw == Self.raws[1])
        }
    }

    /// The rows a batch locked are read back as they are now, without a round trip on MariaDB:
    /// the batch's own updates (a changed key too) are seen, a rolled-back savepoint's are not.
    @Test(arguments: StoreBackend.available)
    func lockedRowsReadBackAsTheyAreNow(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let trips = { (store as? MySQLStore)?.connection.trips.count ?? 0 }
            try store.write { s in
                _ = try s.insertContract(Sample.contract("c-1"))
                _ = try s.insertOrder(Sample.order("o-1"))
                _ = try s.insertOrder(Sample.order("o-2"))
            }
            try store.write { s in
                try s.lockRows(contractIds: ["c-1", "c-9"], orderNos: ["o-1", "o-2"])
                let before = trips()
                var contract = try #require(try s.contract(contractId: "c-1"))
                var order = try #require(try s.order(no: "o-1"))
                if backend == .mysql { #expect(trips() == before, "locked rows read without a round trip") }
                #expect(contract.productId == "com.example.monthly" && order.status == .paid)
                contract.status = .expired
                try s.updateContract(contract)
                order.no = "o-1b"
                try s.updateOrder(order)
                #expect(try s.contract(contractId: "c-1") == contract)
                #expect(try s.order(no: "o-1b") == order)
                #expect(try s.order(no: "o-1") == nil)
                // A row not there when locked is read from the table.
                #expect(try s.contract(contractId: "c-9") == nil)
                _ = try? s.savepoint { () throws -> Void in
                    var changed = contract
                    changed.status = .active
                    try s.updateContract(changed)
                    #expect(try s.contract(contractId: "c-1")?.status == .active)
                    throw Boom()
                }
                #expect(try s.contract(contractId: "c-1") == contract)
                #expect(try s.order(no: "o-2")?.no == "o-2")
            }
            try store.read { s throws in
                #expect(try s.contract(contractId: "c-1")?.status == .expired)
                #expect(try s.order(no: "o-1b") != nil)
            }
        }
    }

    /// Batches over different subscriptions do not queue: a batch's row locks are the rows it
    /// names, whatever plan the server would choose for a scan of a small table.
    @Test(arguments: mysql)
    func batchesOverOtherRowsDoNotWaitForEachOther(backend: StoreBackend) throws {
        let (first, second, cleanup) = try backend.makeStorePair()
        defer { cleanup() }
        try first.write { s in
            for k in 0..<8 {
                _ = try s.insertContract(Sample.contract("c-\(k)"))
                _ = try s.insertOrder(Sample.order("o-\(k)"))
            }
        }
        let (read, took) = try Self.whileHeld(by: first) { s in
            try s.lockRows(contractIds: ["c-0", "c-2", "c-4"], orderNos: ["o-0", "o-2"])
        } run: {
            try second.write { s in
                try s.lockRows(contractIds: ["c-5", "c-1", "c-3"], orderNos: ["o-1", "o-3"])
                return try s.contract(contractId: "c-3")
            }
        }
        #expect(took < 0.4, "a batch waited for rows it does not lock")
        #expect(read?.contractId == "c-3")
    }

    /// Runs `body` while another thread's write transaction on `store` has run `hold` and stays
    /// open for 0.8 s; returns its value and how long it took.
    static func whileHeld<T>(
        by store: any Store, _ hold: @escaping @Sendable (any StoreSession) throws -> Void, run body: () throws -> T
    ) throws -> (T, TimeInterval) {
        let held = DispatchSemaphore(value: 0)
        let holder = UncheckedStore(store)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            _ = try? holder.store.write { s throws in
                do { try hold(s) } catch {
                    held.signal()
                    throw error
                }
                held.signal()
                Thread.sleep(forTimeInterval: 0.8)
            }
            done.leave()
        }
        held.wait()
        let started = Date()
        let value = try body()
        let took = Date().timeIntervalSince(started)
        done.wait()
        return (value, took)
    }
}
