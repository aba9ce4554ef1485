import Foundation
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// Opt-in scale check (`IAPCTL_STORE_BENCH=1 swift test --filter ScaleBenchmark`): one million
/// orders, then the lookups the commands make, each expected well under 50 ms.
@Suite("SQLiteStore: scale benchmark", .enabled(if: ProcessInfo.processInfo.environment["IAPCTL_STORE_BENCH"] == "1"))
struct ScaleBenchmark {
    @Test func millionOrders() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path(), create: true)
        _ = try store.migrate()
        let total = 1_000_000
        let batch = 20_000
        var clock = ContinuousClock.now
        for start in stride(from: 0, to: total, by: batch) {
            try store.write { s in
                for i in start..<(start + batch) {
                    _ = try s.insertOrder(
                        Order(
                            no: "no-\(i)", userId: "user-\(i % 100_000)", productId: "p\(i % 7)",
                            status: i % 10 == 0 ? .refunded : .paid, tradeNo: "t-\(i)", originNo: "o-\(i / 12)",
                            purchaseDate: Int64(i), createdAt: Int64(i), updatedAt: Int64(i)))
                }
            }
        }
        print("insert \(total) orders: \(ContinuousClock.now - clock)")

        func timed<T>(_ label: String, _ body: (any StoreSession) throws -> T) throws -> T {
            clock = .now
            let result = try store.read(body)
            let took = ContinuousClock.now - clock
            print("\(label): \(took)")
            #expect(took < .milliseconds(50), "\(label) took \(took)")
            return result
        }
        #expect(try timed("order(no:)") { try $0.order(no: "no-777777") }?.tradeNo == "t-777777")
        #expect(try timed("order(tradeNo:)") { try $0.order(tradeNo: "t-4242") } != nil)
        #expect(try timed("orders(originNo:)") { try $0.orders(originNo: "o-5000") }.count == 12)
        #expect(try timed("orders user") { try $0.orders(matching: OrderFilter(userId: "user-42")) }.count == 10)
        #expect(
            try timed("orders status limit 100") { try $0.orders(matching: OrderFilter(status: .refunded, limit: 100)) }
                .count == 100)
        #expect(
            try timed("orders product limit 100") { try $0.orders(matching: OrderFilter(productId: "p3", limit: 100)) }
                .count == 100)
        #expect(try timed("orders limit 100") { try $0.orders(matching: OrderFilter(limit: 100)) }.count == 100)

        // One write transaction per event, as notify does (synchronous=FULL: one fsync per commit).
        let events = 2_000
        clock = .now
        for i in 0..<events {
            try store.write { s in
                _ = try s.processedLedgerEntry(notificationUUID: "n-\(i)")
                let id = try s.appendLedger(
                    LedgerEntry(
                        receivedAt: 1, source: .apple, notificationUUID: "n-\(i)", transactionId: "t-\(i)",
                        verdict: .applied, raw: "jws"))
                var order = try #require(try s.order(tradeNo: "t-\(i)"))
                order.updatedAt += 1
                try s.updateOrder(order)
                _ = try s.appendAudit(
                    AuditEntry(
                        at: 1, actor: "engine", command: "notify", entity: .order, key: order.no,
                        before: "{}", after: "{}", ledgerId: id))
            }
        }
        let perEvent = (ContinuousClock.now - clock) / events
        print("event transaction: \(perEvent) each")
        _ = try timed("counts") { try $0.counts() }
    }
}
