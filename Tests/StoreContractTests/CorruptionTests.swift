import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Every stored byte is checked on read. A byte changed behind iapctl's back (here with
/// SQL over the backend's own connection, as a disk error, a restore or a hand edit would) in a
/// ledger raw frame, a ledger detail, an audit before_json, a fact body or digest is reported as
/// ``StoreError/corrupt(table:id:what:)`` naming the table and row, and the row is never used; a
/// snapshot that no longer agrees with its checksum or its facts is not used either.
@Suite("Store contract: corruption is found on read")
struct CorruptionTests {
    /// A store with one of each row: returns the ledger row's id, the audit row's id and the fact's row id.
    static func rows(_ store: any Store) throws -> (ledger: Int64, audit: Int64, fact: Int64) {
        let ledger = try store.write { s in
            try s.appendLedger(
                PackedTextsTests.ledger(PackedTextsTests.appliedDetail, uuid: "n-1"), audits: [PackedTextsTests.contractUpdate])
        }
        _ = try store.write { try $0.insertFact(PackedTextsTests.facts[0]) }
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        let (audit, fact) = try store.read { _ in
            (
                try connection.query("SELECT max(id) FROM iap_audit", []).rows[0].int(0),
                try connection.query("SELECT max(id) FROM iap_facts", []).rows[0].int(0)
            )
        }
        return (ledger, audit, fact)
    }

    static func run(_ store: any Store, _ sql: String, _ values: [SQLValue]) throws {
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        let changed = try store.write { _ in try connection.run(sql, values).changed }
        #expect(changed == 1)
    }

    @Test(arguments: StoreBackend.available)
    func aChangedLedgerDetailIsCorruption(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.rows(store)
            try Self.run(store, "UPDATE iap_ledger SET detail = replace(detail, '9990', '9991') WHERE id = ?", [.int(ids.ledger)])
            let error = expectStoreError(.corrupt) { _ = try store.read { try $0.ledgerEntry(id: ids.ledger) } }
            #expect(error == .corrupt(table: "iap_ledger", id: ids.ledger, what: "its fields do not match its row_digest"))
            // Nor is it updated (which would write a digest over the changed text).
            _ = expectStoreError(.corrupt) { try store.write { try $0.updateLedger(id: ids.ledger, verdict: .applied, detail: "x") } }
            #expect(
                try store.read { _ in
                    try #require(store as? any SQLStoreBackend).transactions.connection.query(
                        "SELECT detail FROM iap_ledger WHERE id = ?", [.int(ids.ledger)]
                    ).rows[0].optionalText(0)
                }?.contains("9991") == true, "nothing changed")
        }
    }

    @Test(arguments: StoreBackend.available)
    func aFlippedByteInARawFrameIsCorruption(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.rows(store)
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            let row = try store.read { _ in
                try StoreTables.ledger.decode(connection.query(StoreSQL.ledgerById, [.int(ids.ledger)]))[0]
            }
            var frame = try #require(row.rawZstd)
            frame[frame.count - 2] ^= 0x20
            // The frame alone: the row digest no longer matches.
            try Self.run(store, "UPDATE iap_ledger SET raw_zstd = ? WHERE id = ?", [.bytes(frame), .int(ids.ledger)])
            _ = expectStoreError(.corrupt) { _ = try store.read { try $0.ledgerEntry(id: ids.ledger) } }
            // The frame and a row digest made to match: the frame's own checksum refuses it.
            let digest = RowDigest.ledger(row.entry, rawOf: nil, rawZstd: frame)
            try Self.run(store, "UPDATE iap_ledger SET row_digest = ? WHERE id = ?", [.text(digest), .int(ids.ledger)])
            let error = expectStoreError(.corrupt) { _ = try store.read { try $0.ledgerEntry(id: ids.ledger) } }
            guard case .corrupt(let table, let id, let what) = error else { return }
            #expect(table == "iap_ledger" && id == ids.ledger)
            #expect(what.contains("raw_zstd frame fails its check"), "\(what)")
        }
    }

    @Test(arguments: StoreBackend.available)
    func aChangedAuditBeforeIsCorruption(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.rows(store)
            try Self.run(
                store, "UPDATE iap_audit SET before_json = replace(before_json, '\"active\"', '\"revoked\"') WHERE id = ?",
                [.int(ids.audit)])
            let error = expectStoreError(.corrupt) { _ = try store.read { try $0.auditEntry(id: ids.audit) } }
            #expect(error == .corrupt(table: "iap_audit", id: ids.audit, what: "its fields do not match its row_digest"))
            _ = expectStoreError(.corrupt) {
                _ = try store.read { try $0.audit(entity: .contract, key: PackedTextsTests.contractUpdate.key) }
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aChangedFactBodyOrDigestIsCorruption(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.rows(store)
            let original = PackedTextsTests.facts[0].originalTransactionId
            try Self.run(store, "UPDATE iap_facts SET body = replace(body, '9990', '9991') WHERE id = ?", [.int(ids.fact)])
            let error = expectStoreError(.corrupt) { _ = try store.read { try $0.facts(originalTransactionId: original) } }
            #expect(error == .corrupt(table: "iap_facts", id: ids.fact, what: "its fields do not match its digest"))
            try Self.run(store, "UPDATE iap_facts SET body = replace(body, '9991', '9990') WHERE id = ?", [.int(ids.fact)])
            #expect(try store.read { try $0.facts(originalTransactionId: original) }.count == 1, "restored, it reads again")
            try Self.run(store, "UPDATE iap_facts SET digest = ? WHERE id = ?", [.text("AAAAAAAAAAAAAAAAAAAAAA"), .int(ids.fact)])
            _ = expectStoreError(.corrupt) { _ = try store.read { try $0.facts(originalTransactionId: original, signedSince: 0) } }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aSnapshotIsUsedOnlyWhileItAgreesWithItsChecksumAndItsFacts(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try $0.insertContract(Sample.contract("o-1")) }
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            func snapshot() throws -> String? { try store.read { try $0.contractSnapshot(contractId: "o-1") } }
            try store.write { try $0.saveContractSnapshot(contractId: "o-1", "kept 1 2 3") }
            #expect(try snapshot() == "kept 1 2 3")
            // Edited so that it still parses: not used.
            try Self.run(store, "UPDATE member_contracts SET snapshot = replace(snapshot, 'kept 1', 'kept 9')", [])
            #expect(try snapshot() == nil)
            // Written before the check (no check line): not used.
            try Self.run(store, "UPDATE member_contracts SET snapshot = 'kept 1 2 3'", [])
            #expect(try snapshot() == nil)
            // A fact of the subscription added since it was computed: not used.
            try store.write { try $0.saveContractSnapshot(contractId: "o-1", "kept 1 2 3") }
            let fact = Fact(kind: .transaction, key: "t-1", originalTransactionId: "o-1", signedDate: 1, source: .apple, body: "{}")
            _ = try store.write { s in
                try connection.run(
                    StoreSQL.insertFactIfNew,
                    StoreTables.facts.insertValues(FactRow(fact: fact, digest: FactDigest.of(fact))) + [
                        .text("t-1"), .text(FactDigest.of(fact)),
                    ])
            }
            #expect(try snapshot() == nil)
            try store.write { try $0.saveContractSnapshot(contractId: "o-1", "kept 1 2 3") }
            #expect(try snapshot() == "kept 1 2 3")
        }
    }
}
