import SubscriptionEngine
import SubscriptionModel
import Testing

/// The ledger of received items and the audit trail of changes.
@Suite("Store contract: ledger and audit")
struct LedgerAndAuditTests {
    @Test(arguments: StoreBackend.available)
    func ledgerRoundTripsEveryColumnAndUpdates(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let sample = Sample.ledger(verdict: .unmatched)
            let bare = LedgerEntry(receivedAt: 5, source: .restore, verdict: .rejected, raw: "")
            let (id, bareId) = try store.write { s throws in (try s.appendLedger(sample), try s.appendLedger(bare)) }
            #expect(id > 0 && bareId > id)
            var expected = sample
            expected.id = id
            var expectedBare = bare
            expectedBare.id = bareId
            try store.read { s throws in
                #expect(try s.ledgerEntry(id: id) == expected)
                #expect(try s.ledgerEntry(id: bareId) == expectedBare)
                #expect(try s.ledgerEntry(id: bareId + 100) == nil)
            }
            try store.write { try $0.updateLedger(id: id, verdict: .applied, detail: "replayed") }
            expected.verdict = .applied
            expected.detail = "replayed"
            #expect(try store.read { try $0.ledgerEntry(id: id) } == expected)
            try store.write { try $0.updateLedger(id: id, verdict: .ignored, detail: nil) }
            #expect(try store.read { try $0.ledgerEntry(id: id) }?.detail == nil)
            _ = expectStoreError(.failure) {
                try store.write { try $0.updateLedger(id: bareId + 100, verdict: .applied, detail: nil) }
            }
            for source in EventSource.allCases {
                var e = bare
                e.source = source
                let entry = e
                let rowId = try store.write { try $0.appendLedger(entry) }
                #expect(try store.read { try $0.ledgerEntry(id: rowId) }?.source == source)
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func processedLedgerEntryIgnoresRejectedAndUnmatched(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try store.write { s throws in
                [
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .rejected)),
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-2", verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .applied)),
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .duplicate)),
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .rejected)),
                    try s.appendLedger(Sample.ledger(uuid: "n-3", verdict: .ignored)),
                    try s.appendLedger(Sample.ledger(uuid: "n-4", verdict: .duplicate)),
                ]
            }
            try store.read { s throws in
                // The newest row that processed it, skipping the later rejected one and the later
                // duplicate (a duplicate points at the item applied); a duplicate only when alone.
                #expect(try s.processedLedgerEntry(notificationUUID: "n-1")?.id == ids[3])
                #expect(try s.processedLedgerEntry(notificationUUID: "n-4")?.id == ids[7])
                #expect(try s.processedLedgerEntry(notificationUUID: "n-2") == nil)
                #expect(try s.processedLedgerEntry(notificationUUID: "n-3")?.verdict == .ignored)
                #expect(try s.processedLedgerEntry(notificationUUID: "n-9") == nil)
            }
            for verdict in [Verdict.stale] {
                let id = try store.write { try $0.appendLedger(Sample.ledger(uuid: "n-2", verdict: verdict)) }
                #expect(try store.read { try $0.processedLedgerEntry(notificationUUID: "n-2") }?.id == id)
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func ledgerByIdsMatchesAnyListInSignedDateOrder(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try store.write { s throws in
                [
                    try s.appendLedger(
                        Sample.ledger(transactionId: "t-1", originalTransactionId: "o-1", token: nil, signedDate: 300)),
                    try s.appendLedger(
                        Sample.ledger(transactionId: "t-2", originalTransactionId: "o-1", token: nil, signedDate: 100)),
                    try s.appendLedger(
                        Sample.ledger(transactionId: nil, originalTransactionId: nil, token: "tok-1", signedDate: 200)),
                    try s.appendLedger(
                        Sample.ledger(
                            transactionId: "t-3", originalTransactionId: "o-2", token: "tok-2", signedDate: 100)),
                    try s.appendLedger(
                        Sample.ledger(transactionId: "t-4", originalTransactionId: "o-3", token: nil, signedDate: 50)),
                ]
            }
            try store.read { s throws in
                func find(_ t: [String], _ o: [String], _ k: [String]) throws -> [Int64] {
                    try s.ledger(transactionIds: t, originalTransactionIds: o, appAccountTokens: k).map(\.id)
                }
                #expect(try find([], [], []) == [])
                #expect(try find(["t-1"], [], []) == [ids[0]])
                #expect(try find([], ["o-1"], []) == [ids[1], ids[0]])
                #expect(try find([], [], ["tok-1"]) == [ids[2]])
                // A row matched by several lists appears once; ties on signed_date go by id.
                #expect(try find(["t-1", "t-3"], ["o-1"], ["tok-1", "tok-2"]) == [ids[1], ids[3], ids[2], ids[0]])
                #expect(try find(["x", "y", "t-4", "z", "w"], [], []) == [ids[4]])
                #expect(try find(["nope"], ["nope"], ["nope"]) == [])
                // Many ids (bound, never spliced).
                let many = (0..<300).map { "t-x\($0)" } + ["t-2"]
                #expect(try find(many, [], []) == [ids[1]])
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func unmatchedLedgerOldestFirstAndUnresolvedOnly(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try store.write { s throws in
                [
                    try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-2", verdict: .applied)),
                    try s.appendLedger(Sample.ledger(uuid: nil, verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-3", verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-4", verdict: .unmatched)),
                    try s.appendLedger(Sample.ledger(uuid: "n-5", verdict: .rejected)),
                ]
            }
            #expect(
                try store.read { try $0.unmatchedLedger(limit: nil) }.map(\.id) == [ids[0], ids[2], ids[3], ids[4]])
            #expect(try store.read { try $0.unmatchedLedger(limit: 2) }.map(\.id) == [ids[0], ids[2]])
            #expect(try store.read { try $0.counts() }.unmatched == 4)
            try store.write { s throws in
                // A replay rewrites the row itself…
                try s.updateLedger(id: ids[0], verdict: .applied, detail: "replayed")
                // …or a later delivery of the same notification is applied.
                _ = try s.appendLedger(Sample.ledger(uuid: "n-3", verdict: .applied))
                // A later rejected delivery resolves nothing.
                _ = try s.appendLedger(Sample.ledger(uuid: "n-4", verdict: .rejected))
            }
            #expect(try store.read { try $0.unmatchedLedger(limit: nil) }.map(\.id) == [ids[2], ids[4]])
            #expect(try store.read { try $0.counts() }.unmatched == 2)
        }
    }

    @Test(arguments: StoreBackend.available)
    func auditRoundTripsEveryColumnOldestFirst(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ledgerId = try store.write { try $0.appendLedger(Sample.ledger()) }
            let first = AuditEntry(
                at: 1_700_000_000_000, actor: "alice", command: "orders update", reason: "refund by support",
                ticket: "SUP-1", entity: .order, key: "no-1", before: #"{"status":"paid"}"#,
                after: #"{"status":"refunded"}"#, ledgerId: nil)
            let second = AuditEntry(
                at: 1_700_000_000_001, actor: "engine", command: "notify", entity: .order, key: "no-1",
                before: nil, after: #"{"status":"paid"}"#, ledgerId: ledgerId)
            let otherKind = AuditEntry(
                at: 1, actor: "bob", command: "contracts update", entity: .contract, key: "no-1",
                before: nil, after: nil)
            let ids = try store.write { s throws in
                [try s.appendAudit(first), try s.appendAudit(otherKind), try s.appendAudit(second)]
            }
            var e1 = first
            e1.id = ids[0]
            var e2 = second
            e2.id = ids[2]
            var e3 = otherKind
            e3.id = ids[1]
            try store.read { s throws in
                #expect(try s.audit(entity: .order, key: "no-1") == [e1, e2])
                #expect(try s.audit(entity: .contract, key: "no-1") == [e3])
                #expect(try s.audit(entity: .order, key: "no-2") == [])
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func countsEveryTable(backend: StoreBackend) throws {
        try withStore(backend) { store in
            #expect(
                try store.read { try $0.counts() }
                    == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("a"))
                _ = try s.insertOrder(Sample.order("b"))
                _ = try s.insertContract(Sample.contract("c"))
                _ = try s.appendLedger(Sample.ledger(uuid: "n-1", verdict: .applied))
                _ = try s.appendLedger(Sample.ledger(uuid: "n-2", verdict: .unmatched))
                _ = try s.appendLedger(Sample.ledger(uuid: "n-3", verdict: .rejected))
                _ = try s.appendAudit(
                    AuditEntry(at: 1, actor: "a", command: "c", entity: .order, key: "a", before: nil, after: "{}"))
            }
            #expect(
                try store.read { try $0.counts() }
                    == StoreCounts(orders: 2, contracts: 1, ledger: 3, unmatched: 1, audit: 1))
        }
    }
}
