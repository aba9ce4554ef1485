import SubscriptionEngine
import SubscriptionModel
import Testing

/// Transactions, savepoints and the schema entry points.
@Suite("Store contract: transactions and schema")
struct TransactionTests {
    @Test(arguments: StoreBackend.available)
    func throwInsideWriteRollsEverythingBack(backend: StoreBackend) throws {
        try withStore(backend) { store in
            #expect(throws: Boom.self) {
                try store.write { s throws in
                    _ = try s.insertOrder(Sample.order("a"))
                    _ = try s.appendLedger(Sample.ledger())
                    _ = try s.insertContract(Sample.contract("c"))
                    throw Boom()
                }
            }
            #expect(
                try store.read { try $0.counts() }
                    == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
            // The store is usable afterwards.
            _ = try store.write { try $0.insertOrder(Sample.order("a")) }
            #expect(try store.read { try $0.counts().orders } == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func storeErrorInsideWriteRollsBackEarlierWork(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try $0.insertOrder(Sample.order("a")) }
            _ = expectStoreError(.conflict) {
                try store.write { s throws in
                    _ = try s.insertOrder(Sample.order("b"))
                    _ = try s.insertOrder(Sample.order("a"))
                }
            }
            #expect(try store.read { try $0.order(no: "b") } == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func commitFalseRollsBackAndReturnsTheResult(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let seen = try store.write(commit: false) { s -> Int in
                _ = try s.insertOrder(Sample.order("dry"))
                return try s.counts().orders  // the dry run sees its own work
            }
            #expect(seen == 1)
            #expect(try store.read { try $0.order(no: "dry") } == nil)
            #expect(try store.read { try $0.counts().orders } == 0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func savepointRollsBackOnlyItsPart(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("kept-before"))
                #expect(throws: Boom.self) {
                    try s.savepoint {
                        _ = try s.insertOrder(Sample.order("undone"))
                        _ = try s.appendLedger(Sample.ledger())
                        throw Boom()
                    }
                }
                #expect(try s.order(no: "undone") == nil)
                let value = try s.savepoint { () -> String in
                    _ = try s.insertOrder(Sample.order("kept-inside"))
                    // Nested savepoints: the inner one alone is undone.
                    _ = try? s.savepoint {
                        _ = try s.insertOrder(Sample.order("inner-undone"))
                        throw Boom()
                    }
                    return "ok"
                }
                #expect(value == "ok")
                // A unique conflict inside a savepoint leaves the transaction usable.
                _ = expectStoreError(.conflict) {
                    _ = try s.savepoint { try s.insertOrder(Sample.order("kept-before")) }
                }
                _ = try s.insertOrder(Sample.order("kept-after"))
            }
            let nos = try store.read { try $0.orders(matching: OrderFilter()) }.map(\.no).sorted()
            #expect(nos == ["kept-after", "kept-before", "kept-inside"])
            #expect(try store.read { try $0.counts().ledger } == 0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func readSeesCommittedWrites(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let value = try store.read { s throws in try s.order(no: "a") }
            #expect(value == nil)
            let order = try store.write { try $0.insertOrder(Sample.order("a")) }
            #expect(try store.read { try $0.order(no: "a") } == order)
        }
    }

    @Test(arguments: StoreBackend.available)
    func migrateIsIdempotent(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let version = try store.schemaVersion()
            #expect(version.current == version.supported)
            #expect(version.supported >= 1)
            _ = try store.write { try $0.insertOrder(Sample.order("survives")) }
            #expect(try store.migrate() == [])
            #expect(try store.migrate() == [])
            #expect(try store.schemaVersion().current == version.current)
            #expect(try store.read { try $0.order(no: "survives") } != nil)
        }
    }
}
