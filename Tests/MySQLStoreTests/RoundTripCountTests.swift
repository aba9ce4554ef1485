import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import MySQLStore

/// What a unit costs in client/server round trips (counted by the connection layer),
/// and that the cheaper statements keep their meaning.
@Suite("MySQLStore round trips", .enabled(if: TestServer.isConfigured, TestServer.skipReason), .serialized)
struct RoundTripCountTests {
    static func fact(_ key: String, signed: Int64) -> Fact {
        Fact(kind: .transaction, key: key, originalTransactionId: "o-1", signedDate: signed, source: .apple, body: "{}")
    }

    /// The round trips `body` made on `store`'s connection.
    static func trips(on store: MySQLStore, _ body: () throws -> Void) rethrows -> Int {
        let before = store.connection.trips.count
        try body()
        return store.connection.trips.count - before
    }

    @Test func aFactIsKeptWithOneRoundTripWhetherNewOrAlreadyStored() throws {
        try TestServer.withFreshStore { store throws in
            try store.write { s throws in
                // Prepares the statement once.
                #expect(try s.insertFact(Self.fact("warm", signed: 1)))
                var added: [Bool] = []
                let new = try Self.trips(on: store) { added.append(try s.insertFact(Self.fact("t-1", signed: 1))) }
                let again = try Self.trips(on: store) { added.append(try s.insertFact(Self.fact("t-1", signed: 1))) }
                let newer = try Self.trips(on: store) { added.append(try s.insertFact(Self.fact("t-1", signed: 2))) }
                #expect(added == [true, false, true])
                #expect([new, again, newer] == [1, 1, 1])
            }
            #expect(try store.read { try $0.facts(originalTransactionId: "o-1") }.count == 3)
        }
    }

    @Test func aKeptSavepointCostsOneRoundTripAndALaterRollbackUndoesOnlyItsOwnItem() throws {
        try TestServer.withFreshStore { store throws in
            try store.write { s throws in
                _ = try s.insertFact(Self.fact("warm", signed: 1))
                // SAVEPOINT and the insert: no RELEASE (the next item's SAVEPOINT replaces it).
                let kept = try Self.trips(on: store) { _ = try s.savepoint { try s.insertFact(Self.fact("a", signed: 1)) } }
                #expect(kept == 2)
                // The next item fails: rolled back to its own savepoint, the kept item stays.
                #expect(throws: Boom.self) {
                    try s.savepoint { () throws -> Void in
                        _ = try s.insertFact(Self.fact("b", signed: 1))
                        throw Boom()
                    }
                }
                // Nested: an inner kept savepoint inside an outer one that fails goes with it.
                #expect(throws: Boom.self) {
                    try s.savepoint { () throws -> Void in
                        _ = try s.savepoint { try s.insertFact(Self.fact("c", signed: 1)) }
                        throw Boom()
                    }
                }
                _ = try s.savepoint { try s.insertFact(Self.fact("d", signed: 1)) }
            }
            let keys = Set(try store.read { try $0.facts(originalTransactionId: "o-1") }.map(\.key))
            #expect(keys == ["warm", "a", "d"])
        }
    }
}
