import StoreTestSupport
import SubscriptionModel
import Testing

@_spi(Testing) @testable import PostgresStore

/// On PostgreSQL a kept savepoint's RELEASE travels with the next statement sent as text (the
/// next item's SAVEPOINT, or COMMIT): one round trip less per item, the same statements in the
/// same order on the server. Needs the test server (`scripts/postgres-test-server start`).
@Suite(
    "PostgreSQL savepoints: the RELEASE goes with the next statement",
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

    @Test func aKeptItemCostsItsSavepointAndItsWorkAndAFailedItemUndoesOnlyItself() throws {
        try Self.withFreshStore { store in
            try store.write { s throws in
                _ = try s.insertFact(Self.fact("warm"))  // prepares the insert
                _ = try s.savepoint { try s.insertFact(Self.fact("a")) }
                // The previous item's RELEASE and this SAVEPOINT in one round trip, then the insert.
                let second = try Self.trips(on: store) { _ = try s.savepoint { try s.insertFact(Self.fact("b")) } }
                #expect(second == 2)
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
            // BEGIN, the first SAVEPOINT, a prepare, each item's insert, the others' RELEASE +
            // SAVEPOINT, and the last RELEASE with COMMIT: two round trips per item (were three).
            #expect(trips <= 2 * items + 6, "\(trips) round trips for \(items) items")
            #expect(try store.read { try $0.facts(originalTransactionId: "o-1") }.count == items)
        }
    }
}
