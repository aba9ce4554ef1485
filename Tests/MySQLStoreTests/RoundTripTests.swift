import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import MySQLStore

@Suite("MySQLStore rows", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct RoundTripTests {
    @Test func ordersRoundTripAndUpdate() throws {
        try TestServer.withFreshStore { store throws in
            let inserted = try store.write { s throws in
                try s.insertOrder(Sample.order("no-1", tradeNo: "2000000001", originNo: "1000", purchaseDate: 5))
            }
            #expect(inserted.id > 0)
            let byNo = try store.read { try $0.order(no: "no-1") }
            #expect(byNo == inserted)
            #expect(try store.read { try $0.order(tradeNo: "2000000001") } == inserted)
            #expect(try store.read { try $0.order(no: "NO-1") } == nil, "ids compare exactly (utf8mb4_bin)")

            var changed = inserted
            changed.status = .refunded
            changed.price = nil
            changed.currency = nil
            changed.updatedAt = 1_800_000_000_000
            try store.write { try $0.updateOrder(changed) }
            #expect(try store.read { try $0.order(no: "no-1") } == changed)
            // Writing identical values still finds the row (matched rows, not changed rows).
            try store.write { try $0.updateOrder(changed) }
            var missing = changed
            missing.id = 999_999
            expectStoreError(\.isFailure) { try store.write { try $0.updateOrder(missing) } }
        }
    }

    @Test func orderListsAreOrderedAndFiltered() throws {
        try TestServer.withFreshStore { store throws in
            try store.write { s throws in
                _ = try s.insertOrder(
                    Sample.order("a", user: "u1", tradeNo: "t3", originNo: "o", status: .paid, purchaseDate: 300))
                _ = try s.insertOrder(
                    Sample.order("b", user: "u2", tradeNo: "t1", originNo: "o", status: .paid, purchaseDate: 100))
                _ = try s.insertOrder(
                    Sample.order("c", user: "u1", tradeNo: "t2", originNo: "o", status: .refunded, purchaseDate: 100))
                _ = try s.insertOrder(Sample.order("d", user: "u1"))
            }
            try store.read { s throws in
                #expect(try s.orders(originNo: "o").map(\.no) == ["b", "c", "a"], "purchase_date, then id")
                #expect(try s.orders(matching: OrderFilter()).map(\.no) == ["d", "c", "b", "a"], "newest first")
                #expect(try s.orders(matching: OrderFilter(userId: "u1")).map(\.no) == ["d", "c", "a"])
                #expect(try s.orders(matching: OrderFilter(userId: "u1", status: .paid)).map(\.no) == ["a"])
                #expect(
                    try s.orders(matching: OrderFilter(productId: "com.example.pro", limit: 2)).map(\.no) == ["d", "c"])
                #expect(try s.orders(matching: OrderFilter(originNo: "o", limit: 0)).isEmpty)
                #expect(try s.orders(matching: OrderFilter(status: .revoked)).isEmpty)
            }
            expectStoreError(\.isFailure) { _ = try store.read { try $0.orders(matching: OrderFilter(limit: -1)) } }
        }
    }

    @Test func contractsRoundTrip() throws {
        try TestServer.withFreshStore { store throws in
            let inserted = try store.write { try $0.insertContract(Sample.contract("1000")) }
            #expect(try store.read { try $0.contract(contractId: "1000") } == inserted)
            var changed = inserted
            changed.status = .gracePeriod
            changed.autoRenew = false
            changed.nextProductId = nil
            changed.lastEventDate = 1_900_000_000_000
            try store.write { try $0.updateContract(changed) }
            #expect(try store.read { try $0.contract(contractId: "1000") } == changed)
            _ = try store.write { try $0.insertContract(Sample.contract("2000", user: "u2", status: .billingRetry)) }
            try store.read { s throws in
                #expect(try s.contracts(matching: ContractFilter()).map(\.contractId) == ["2000", "1000"])
                #expect(try s.contracts(matching: ContractFilter(status: .gracePeriod)).map(\.contractId) == ["1000"])
                #expect(try s.contracts(matching: ContractFilter(userId: "u2", limit: 1)).map(\.contractId) == ["2000"])
            }
        }
    }

    @Test func ledgerRoundTripLongTextAndQueries() throws {
        try TestServer.withFreshStore { store throws in
            let longRaw = String(repeating: "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlF", count: 400) + "é✓🙂"
            let (first, second, third) = try store.write { s throws in
                (
                    try s.appendLedger(
                        Sample.ledger(
                            uuid: "n1", tx: "t1", original: "o1", signed: 300, verdict: .unmatched, raw: longRaw)),
                    try s.appendLedger(Sample.ledger(uuid: "n2", tx: "t2", original: "o1", token: "tok", signed: 100)),
                    try s.appendLedger(Sample.ledger(uuid: "n3", original: "o9", signed: 200, verdict: .rejected))
                )
            }
            let entry = try #require(try store.read { try $0.ledgerEntry(id: first) })
            #expect(entry.raw == longRaw)
            #expect(entry.verdict == .unmatched)
            #expect(entry.notificationUUID == "n1")
            #expect(entry.signedDate == 300)
            try store.read { s throws in
                #expect(
                    try s.ledger(transactionIds: [], originalTransactionIds: ["o1"], appAccountTokens: []).map(\.id)
                        == [second, first])
                #expect(
                    try s.ledger(transactionIds: ["t1"], originalTransactionIds: ["o9"], appAccountTokens: ["tok"]).map(
                        \.id) == [second, third, first])
                #expect(try s.ledger(transactionIds: [], originalTransactionIds: [], appAccountTokens: []).isEmpty)
                #expect(
                    try s.ledger(
                        transactionIds: ["t1", "t2", "nope"], originalTransactionIds: [], appAccountTokens: []
                    ).count == 2)
                #expect(try s.processedLedgerEntry(notificationUUID: "n1") == nil, "unmatched is not processed")
                #expect(try s.processedLedgerEntry(notificationUUID: "n3") == nil, "rejected is not processed")
                #expect(try s.processedLedgerEntry(notificationUUID: "n2")?.id == second)
                #expect(try s.unmatchedLedger(limit: nil).map(\.id) == [first])
                #expect(try s.counts() == StoreCounts(orders: 0, contracts: 0, ledger: 3, unmatched: 1, audit: 0))
            }
            // A later row that processed the same notification resolves the unmatched one.
            let later = try store.write {
                try $0.appendLedger(Sample.ledger(uuid: "n1", tx: "t1", signed: 300, verdict: .applied))
            }
            try store.read { s throws in
                #expect(try s.unmatchedLedger(limit: nil).isEmpty)
                #expect(try s.processedLedgerEntry(notificationUUID: "n1")?.id == later)
                #expect(try s.counts().unmatched == 0)
            }
            try store.write { try $0.updateLedger(id: third, verdict: .ignored, detail: nil) }
            let updated = try #require(try store.read { try $0.ledgerEntry(id: third) })
            #expect(updated.verdict == .ignored)
            #expect(updated.detail == nil)
            expectStoreError(\.isFailure) {
                try store.write { try $0.updateLedger(id: 424_242, verdict: .applied, detail: nil) }
            }
        }
    }

    @Test func unmatchedLedgerIsOldestFirstWithLimit() throws {
        try TestServer.withFreshStore { store throws in
            let ids = try store.write { s throws in
                try (1...3).map {
                    try s.appendLedger(Sample.ledger(uuid: "u\($0)", signed: Int64(10 - $0), verdict: .unmatched))
                }
            }
            try store.read { s throws in
                #expect(try s.unmatchedLedger(limit: nil).map(\.id) == ids)
                #expect(try s.unmatchedLedger(limit: 2).map(\.id) == Array(ids.prefix(2)))
            }
        }
    }

    @Test func auditRoundTrip() throws {
        try TestServer.withFreshStore { store throws in
            let ledgerId = try store.write { try $0.appendLedger(Sample.ledger(uuid: "n")) }
            let first = AuditEntry(
                at: 1, actor: "alice", command: "orders update", reason: "customer asked — ✓", ticket: "T-1",
                entity: .order, key: "no-1", before: #"{"status":"paid"}"#, after: #"{"status":"refunded"}"#,
                ledgerId: ledgerId)
            let second = AuditEntry(
                at: 2, actor: "engine", command: "notify", entity: .order, key: "no-1", before: nil, after: "{}")
            let other = AuditEntry(
                at: 3, actor: "bob", command: "contracts update", entity: .contract, key: "no-1", before: nil,
                after: nil)
            let ids = try store.write { s throws in
                [try s.appendAudit(first), try s.appendAudit(second), try s.appendAudit(other)]
            }
            let rows = try store.read { try $0.audit(entity: .order, key: "no-1") }
            var expected = [first, second]
            expected[0].id = ids[0]
            expected[1].id = ids[1]
            #expect(rows == expected)
            #expect(try store.read { try $0.counts().audit } == 3)
        }
    }
}
