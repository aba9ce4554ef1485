import SubscriptionEngine
import SubscriptionModel
import Testing

/// The engine's kept facts: added once, read back per subscription in signedDate order.
@Suite("Store contract: facts")
struct FactTests {
    static func fact(_ kind: Fact.Kind, key: String, original: String = "o-1", signed: Int64, body: String) -> Fact {
        Fact(kind: kind, key: key, originalTransactionId: original, signedDate: signed, source: .apple, body: body)
    }

    @Test(arguments: StoreBackend.available)
    func aFactIsKeptOnceAndReadBackInSignedOrder(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let late = Self.fact(.transaction, key: "t-2", signed: 300, body: #"{"productId":"b"}"#)
            let early = Self.fact(.renewal, key: "o-1", signed: 100, body: #"{"autoRenewStatus":1}"#)
            let note = Self.fact(.notification, key: "o-1", signed: 200, body: #"{"notificationType":"DID_RENEW"}"#)
            let other = Self.fact(.transaction, key: "t-9", original: "o-2", signed: 50, body: "{}")
            let added = try store.write { s throws in
                try [late, early, note, other, late].map { try s.insertFact($0) }
            }
            #expect(added == [true, true, true, true, false])
            let kept = try store.read { try $0.facts(originalTransactionId: "o-1") }
            #expect(kept == [early, note, late])
            #expect(try store.read { try $0.facts(originalTransactionId: "o-2") } == [other])
            #expect(try store.read { try $0.facts(originalTransactionId: "nope") }.isEmpty)
            // Another version of the same transaction is a new fact.
            var newer = late
            newer.signedDate = 400
            #expect(try store.write { try $0.insertFact(newer) })
            #expect(try store.read { try $0.facts(originalTransactionId: "o-1") }.count == 4)
        }
    }

    @Test(arguments: StoreBackend.available)
    func anAppTransactionIdFindsThePurchasesWhoseTransactionsCarryIt(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let facts = [
                Self.fact(.transaction, key: "t-1", original: "o-1", signed: 1, body: #"{"appTransactionId":"704","productId":"a"}"#),
                Self.fact(.transaction, key: "t-2", original: "o-2", signed: 2, body: #"{"appTransactionId":"704","productId":"b"}"#),
                Self.fact(.transaction, key: "t-3", original: "o-1", signed: 3, body: #"{"appTransactionId":"704","productId":"a"}"#),
                Self.fact(.transaction, key: "t-4", original: "o-3", signed: 4, body: #"{"appTransactionId":"7040"}"#),
                Self.fact(.renewal, key: "o-4", original: "o-4", signed: 5, body: #"{"appTransactionId":"704"}"#),
            ]
            _ = try store.write { s throws in try facts.map { try s.insertFact($0) } }
            #expect(try store.read { try $0.originalTransactionIds(appTransactionId: "704") } == ["o-1", "o-2"])
            #expect(try store.read { try $0.originalTransactionIds(appTransactionId: "7040") } == ["o-3"])
            for nothing in ["70", "7_4", "70%", "%", "", "704\" OR 1=1"] {
                #expect(try store.read { try $0.originalTransactionIds(appTransactionId: nothing) }.isEmpty, "\(nothing)")
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aRolledBackFactIsGone(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let f = Self.fact(.transaction, key: "t-1", signed: 1, body: "{}")
            #expect(throws: Boom.self) {
                try store.write { s throws in
                    _ = try s.insertFact(f)
                    throw Boom()
                }
            }
            let kept = try store.read { try $0.facts(originalTransactionId: "o-1") }
            #expect(kept.isEmpty)
        }
    }
}
