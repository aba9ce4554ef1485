import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Flat with history: the engine's per-subscription snapshot is kept with the contract
/// (`member_contracts.snapshot`, schema v9). It reads back as written; every other writer of the
/// subscription's rows clears it; a database of schema v8 (made here, at test time) gains the
/// column, its contracts without a snapshot, on every backend.
@Suite("Store contract: the contract's snapshot and its migration")
struct ContractSnapshotTests {
    @Test(arguments: StoreBackend.available)
    func theSnapshotReadsBackAndOtherWritersClearIt(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let contract = try store.write { try $0.insertContract(Sample.contract("o-1")) }
            _ = try store.write { try $0.insertContract(Sample.contract("o-2")) }
            func snapshot(_ id: String = "o-1") throws -> String? { try store.read { try $0.contractSnapshot(contractId: id) } }
            func keep(_ id: String = "o-1") throws { try store.write { try $0.saveContractSnapshot(contractId: id, "kept\n\u{1F}é") } }
            #expect(try snapshot() == nil)
            #expect(try store.read { try $0.contractSnapshot(contractId: "none") } == nil)
            try keep()
            #expect(try snapshot() == "kept\n\u{1F}é")
            #expect(try store.read { try $0.contract(contractId: "o-1") } == contract, "the contract's columns are unchanged")

            // The contract rewritten.
            try store.write { try $0.updateContract(contract) }
            #expect(try snapshot() == nil)

            // An order of the subscription rewritten, and an order moved to another subscription.
            var order = try store.write { try $0.insertOrder(Sample.order("n-1", tradeNo: "t-1", originNo: "o-1")) }
            try keep()
            #expect(try snapshot() != nil, "inserting an order leaves it")
            order.price = 1
            try store.write { try $0.updateOrder(order) }
            #expect(try snapshot() == nil)
            try keep()
            try keep("o-2")
            order.originNo = "o-2"
            try store.write { try $0.updateOrder(order) }
            #expect(try snapshot() == nil, "the order's former subscription")
            #expect(try snapshot("o-2") == nil, "the order's new subscription")

            // A hand override kept, then lifted.
            try keep()
            let audit = try store.write { s in
                try s.appendAudit(
                    AuditEntry(
                        at: 1, actor: "support", command: "contracts update", reason: "test", entity: .contract, key: "o-1", before: nil,
                        after: nil))
            }
            var override = Override(
                entity: .contract, key: "o-1", originalTransactionId: "o-1", field: "status", value: "revoked", auditId: audit,
                actor: "support", reason: nil, ticket: nil, at: 1, seenPeriod: nil, seenFacts: 0)
            override.id = try store.write { try $0.insertOverride(override) }
            #expect(try snapshot() == nil)
            try keep()
            override.liftedAt = 2
            try store.write { try $0.updateOverride(override) }
            #expect(try snapshot() == nil)

            // Cleared on purpose.
            try keep()
            try store.write { try $0.saveContractSnapshot(contractId: "o-1", nil) }
            #expect(try snapshot() == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func factsSignedSinceAMomentComeInTheOrderOfEveryFact(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let facts = [3, 1, 2, 2, 5].enumerated().map { index, day in
                Fact(
                    kind: .notification, key: "o-1", originalTransactionId: "o-1", signedDate: Int64(day), source: .apple,
                    body: #"{"n":\#(index)}"#)
            }
            try store.write { s in for fact in facts { _ = try s.insertFact(fact) } }
            let every = try store.read { try $0.facts(originalTransactionId: "o-1") }
            for since in [0, 2, 3, 6] as [Int64] {
                let some = try store.read { try $0.facts(originalTransactionId: "o-1", signedSince: since) }
                #expect(some == every.filter { $0.signedDate >= since }, "since \(since)")
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aSchemaV8DatabaseGainsTheColumnItsContractsWithoutSnapshot(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let contract = try store.write { try $0.insertContract(Sample.contract("o-1")) }
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            // Schema v8: v10's forms back to v9's, no snapshot column, v9 not recorded.
            try PackedTextsTests.makeV9(store, backend)
            try store.write { _ in _ = try connection.run("DELETE FROM iap_schema_migrations WHERE version >= 9", []) }
            try connection.execute("ALTER TABLE member_contracts DROP COLUMN snapshot")
            try connection.execute("DROP TABLE IF EXISTS iap_grants")
            try connection.execute("DROP TABLE IF EXISTS iap_customer_notes")
            try connection.execute("DROP TABLE IF EXISTS iap_refund_answers")
            #expect(try store.schemaVersion().current == 8)

            let applied = try store.migrate()
            #expect(applied == StoreSchema.migrations.filter { $0.version >= 9 }.map(\.name))
            #expect(try store.schemaVersion().current == StoreSchema.supported)
            #expect(try store.read { try $0.contract(contractId: "o-1") } == contract)
            #expect(try store.read { try $0.contractSnapshot(contractId: "o-1") } == nil)
            try store.write { try $0.saveContractSnapshot(contractId: "o-1", "kept") }
            #expect(try store.read { try $0.contractSnapshot(contractId: "o-1") } == "kept")
        }
    }
}
