import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `audit undo ID…` and `audit undo --ticket T` on every backend: several rows in one
/// transaction, newest first, all or nothing; which rows were undone, and by which.
@Suite("Services: audit undo of several rows")
struct AuditBatchUndoTests {
    /// Two orders (alice's ord-1 paid by the purchase, bob's ord-2 pending) moved to other users under
    /// ticket `T-9`; returns the two audit ids (ord-1's first).
    static func batch(_ store: any Store) throws -> [Int64] {
        try T.purchase(store)
        _ = try store.write {
            try $0.insertOrder(Order(no: "ord-2", userId: "bob", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
        }
        let context = CorrectionContext(actor: "support", command: "orders update", now: T.now)
        let requests = [("ord-1", "carol"), ("ord-2", "dave")].map { key, user in
            CorrectionRequest<Order>(
                line: nil, key: key, keyField: "", values: [.set(.userId(user))], reason: "import", ticket: "T-9")
        }
        let results = try store.write { try CorrectionService.apply(requests, context: context, in: $0) }
        return results.compactMap(\.auditId)
    }

    static func owner(_ store: any Store, _ no: String) throws -> String? {
        try store.read { try $0.order(no: no) }?.userId
    }

    @Test(arguments: StoreBackend.available)
    func severalRowsAreUndoneTogetherEachAudited(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.batch(store)
            #expect(ids.count == 2)
            let results = try store.write {
                try AuditUndoService.undo(ids, reason: "wrong file", ticket: "T-9", actor: "lead", now: T.now + 1, in: $0)
            }
            #expect(try Self.owner(store, "ord-1") == "alice" && Self.owner(store, "ord-2") == "bob")
            // Newest first, one audit row each, recorded as the undo of that row.
            #expect(results.map(\.key) == ["ord-2", "ord-1"])
            let undoIds = results.compactMap(\.auditId)
            #expect(undoIds.count == 2)
            let rows = try store.read { session in try undoIds.map { try #require(try session.auditEntry(id: $0)) } }
            #expect(rows.map(\.command) == ["audit undo \(ids[1])", "audit undo \(ids[0])"])
            #expect(rows.allSatisfy { $0.ticket == "T-9" && $0.actor == "lead" && $0.reason == "wrong file" })
            // Which row undid which: read back for `audit list`.
            let undone = try store.read { session in
                try AuditUndoService.undoneBy(of: try session.auditEntries(matching: AuditFilter()), in: session)
            }
            #expect(undone == [ids[1]: undoIds[0], ids[0]: undoIds[1]])
            // The ticket's batch no longer offers the undo rows, and undoing it again is refused.
            let again = try store.read { try AuditUndoService.ids(ticket: "T-9", in: $0) }
            #expect(Set(again) == Set(ids))
            #expect(throws: AuditUndoError.alreadyUndone(ids[1], by: undoIds[0])) {
                _ = try store.write {
                    try AuditUndoService.undo(again, reason: "r", ticket: "T-9", actor: "lead", now: T.now + 2, in: $0)
                }
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func oneRowThatCannotBeUndoneStopsAllOfThem(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.batch(store)
            // ord-2 changed again since: its row of the batch cannot be undone.
            let context = CorrectionContext(actor: "support", command: "orders update", now: T.now)
            let later = CorrectionRequest<Order>(
                line: nil, key: "ord-2", keyField: "", values: [.set(.userId("erin"))], reason: "later", ticket: nil)
            _ = try store.write { try CorrectionService.apply([later], context: context, in: $0) }
            let auditRows = try store.read { try $0.counts().audit }
            #expect(
                throws: AuditUndoError.changedSince(
                    ids[1], .order, key: "ord-2", drift: [FieldChange(column: "user_id", before: "dave", after: "erin")])
            ) {
                _ = try store.write {
                    try AuditUndoService.undo(ids, reason: "r", ticket: nil, actor: "lead", now: T.now + 1, in: $0)
                }
            }
            // Nothing changed: ord-1 (which could be undone) stays with carol, no audit row was added.
            #expect(try Self.owner(store, "ord-1") == "carol" && Self.owner(store, "ord-2") == "erin")
            #expect(try store.read { try $0.counts().audit } == auditRows)
            #expect(try store.read { try AuditUndoService.ids(ticket: "nope", in: $0) }.isEmpty)
        }
    }
}
