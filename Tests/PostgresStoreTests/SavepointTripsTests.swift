import StoreTestSupport
import SubscriptionModel
import Testing

@_spi(Testing) @testable import PostgresStore

/// On PostgreSQL a savepoint statement travels with the next statement (in one pipeline with a
/// prepared statement, or in front of one sent as text): an item of a batch costs only its own
/// work's round trips, and the server runs the same statements in the same order. Needs the test
/// server (`scripts/postgres-test-server start`).
@Suite(
    "PostgreSQL savepoints travel with the next statement",
    .enabled(if: TestPostgres.isConfigured, "no PostgreSQL test server (scripts/postgres-test-server start)"),
    .serialized)
struct SavepointTripsTests {
    struct Boom: Error {}

    static func fact(_ key: String) -> Fact {
        Fact(kind: .transaction, key: key, originalTransactionId: "o-1", signedDate: 1, source: .apple, body: "{}")
    }

    /// Runs `body`, expecting it to throw ``Boom``.
    static func expectBoom(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected Boom, nothing was thrown", sourceLocation: sourceLocation)
        } catch is Boom {
        } catch {
            Issue.record("expected Boom, got \(error)", sourceLocation: sourceLocation)
        }
    }

    static func withFreshStore(_ body: (PostgresStore) throws -> Void) throws {
        let (url, password) = try TestPostgres.scratch(label: "sp")
        let store = try PostgresStore(url: url, password: password, create: true)
        defer { try? PostgresStore.dropDatabase(url: url, password: password) }
        _ = try store.migrate()
        try body(store)
    }

    static func trips(on store: PostgresStore, _ body: () throws -> Void) rethrows -> Int {
        let before = store.roundTripsForTesting
        try body()
        return store.roundTripsForTesting - before
    }

    @Test func aKeptItemCostsOnlyItsWorkAndAFailedItemUndoesOnlyItself() throws {
        try Self.withFreshStore { store in
            try store.write { s throws in
                _ = try s.insertFact(Self.fact("warm"))  // prepares the insert
                _ = try s.savepoint { try s.insertFact(Self.fact("a")) }
                // The previous item's RELEASE, this SAVEPOINT and the insert: one round trip.
                let second = try Self.trips(on: store) { _ = try s.savepoint { try s.insertFact(Self.fact("b")) } }
                #expect(second == 1)
                // A failed item: rolled back to its own savepoint; the kept ones stay.
                Self.expectBoom {
                    try s.savepoint { () throws -> Void in
                        _ = try s.insertFact(Self.fact("c"))
                        throw Boom()
                    }
                }
                // Nested: an inner kept savepoint inside an outer one that fails goes with it.
                Self.expectBoom {
                    try s.savepoint { () throws -> Void in
                        _ = try s.savepoint { try s.insertFact(Self.fact("d")) }
                        _ = try s.savepoint { try s.insertFact(Self.fact("e")) }
                        throw Boom()
                    }
                }
                // Nested and kept: both releases go with the next statement.
                _ = try s.savepoint { () throws -> Void in
                    _ = try s.savepoint { try s.insertFact(Self.fact("f")) }
                }
                // A plain statement after a kept item: the release is sent before it, then it runs
                // outside the savepoint; a later failed item does not take it back.
                _ = try s.savepoint { try s.insertFact(Self.fact("g")) }
                _ = try s.insertFact(Self.fact("h"))
                Self.expectBoom {
                    try s.savepoint { () throws -> Void in
                        _ = try s.insertFact(Self.fact("i"))
                        throw Boom()
                    }
                }
                _ = try s.savepoint { try s.insertFact(Self.fact("j")) }
            }
            let keys = Set(try store.read { try $0.facts(originalTransactionId: "o-1") }.map(\.key))
            #expect(keys == ["warm", "a", "b", "f", "g", "h", "j"])
        }
    }

    static func order(_ no: String) -> Order {
        Order(
            no: no, userId: "u1", productId: "com.example.pro", status: .pending, tradeNo: nil, originNo: nil,
            purchaseDate: nil, expiresDate: nil, environment: "Sandbox", price: 10990, currency: "EUR",
            createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_001)
    }

    /// A statement that fails in the pipeline its SAVEPOINT travelled in: the error is its own
    /// (a unique key), the rollback to that savepoint undoes only the item, and the transaction
    /// goes on and commits.
    @Test func aStatementFailingInItsSavepointsPipelineRollsBackOnlyItsItem() throws {
        try Self.withFreshStore { store in
            try store.write { s throws in
                _ = try s.insertOrder(Self.order("o-1"))
                var second = try s.insertOrder(Self.order("o-2"))
                _ = try s.savepoint { try s.insertFact(Self.fact("a")) }
                do {
                    try s.savepoint { () throws -> Void in
                        second.no = "o-1"  // taken: the UPDATE fails on the server
                        try s.updateOrder(second)
                    }
                    Issue.record("the update of a taken key did not fail")
                } catch let error as StoreError {
                    guard case .conflict(let message) = error else {
                        Issue.record("expected a unique-key conflict, got \(error)")
                        return
                    }
                    #expect(message.contains("23505") && message.contains("UPDATE"), "\(message)")
                }
                _ = try s.savepoint { try s.insertFact(Self.fact("b")) }
            }
            try store.read { s throws in
                #expect(Set(try s.facts(originalTransactionId: "o-1").map(\.key)) == ["a", "b"])
                #expect(try s.order(no: "o-2") != nil)
            }
        }
    }

    /// Many items in one transaction: each releases its savepoint (the server's savepoint stack does
    /// not grow with the batch), and a COMMIT after a kept item commits it.
    @Test func aLongBatchOfItemsCommitsEveryKeptItem() throws {
        try Self.withFreshStore { store in
            let items = 300
            let trips = try Self.trips(on: store) {
                try store.write { s throws in
                    for k in 0..<items { _ = try s.savepoint { try s.insertFact(Self.fact("k-\(k)")) } }
                }
            }
            // The schema check, BEGIN, a prepare, each item's insert with its savepoint statements,
            // and the last RELEASE with COMMIT: one round trip per item (were three).
            #expect(trips <= items + 6, "\(trips) round trips for \(items) items")
            #expect(try store.read { try $0.facts(originalTransactionId: "o-1") }.count == items)
        }
    }
}
