import Foundation
import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// SQLite-specific transaction rules: nesting, misuse, error mapping.
@Suite("SQLiteStore: transaction rules and errors")
struct TransactionRulesTests {
    private func makeStore() throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:", create: true)
        _ = try store.migrate()
        return store
    }

    private func order(_ no: String) -> Order { Order(no: no, userId: "u", productId: "p", createdAt: 1, updatedAt: 1) }

    @Test func nestedWriteIsASavepoint() throws {
        let store = try makeStore()
        try store.write { s in
            _ = try s.insertOrder(order("outer"))
            try store.write { _ = try $0.insertOrder(order("inner-kept")) }
            try store.write(commit: false) { _ = try $0.insertOrder(order("inner-dry")) }
            #expect(throws: CancellationError.self) {
                try store.write { _ in
                    _ = try s.insertOrder(order("inner-thrown"))
                    throw CancellationError()
                }
            }
            // Nested read shares the transaction and sees its work.
            #expect(try store.read { try $0.order(no: "inner-kept") } != nil)
        }
        let nos = try store.read { try $0.orders(matching: OrderFilter()).map(\.no) }
        #expect(nos == ["inner-kept", "outer"])
    }

    @Test func writeInsideReadIsAProgrammerError() throws {
        let store = try makeStore()
        #expect(throws: StoreError.failure("programmer error: write transaction requested inside a read transaction")) {
            try store.read { _ in try store.write { _ in } }
        }
        let error = #expect(throws: StoreError.self) { try store.read { s in _ = try s.insertOrder(order("x")) } }
        guard case .failure(let message)? = error else {
            Issue.record("expected a failure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("write inside a read transaction"))
        #expect(try store.read { try $0.counts().orders } == 0)
        #expect(throws: StoreError.self) { try store.write { _ in _ = try store.migrate() } }
    }

    @Test func sessionCannotOutliveItsTransaction() throws {
        let store = try makeStore()
        let leaked = try store.read { $0 }
        #expect(throws: StoreError.failure("programmer error: store session used after its transaction ended")) {
            _ = try leaked.order(no: "a")
        }
    }

    @Test func foreignKeysAreEnforced() throws {
        let store = try makeStore()
        #expect(throws: StoreError.self) {
            _ = try store.write {
                try $0.appendAudit(
                    AuditEntry(
                        at: 1, actor: "a", command: "c", entity: .order, key: "k", before: nil, after: nil,
                        ledgerId: 12345))
            }
        }
        #expect(try store.read { try $0.counts().audit } == 0)
    }

    // Errors do not carry the SQL text (people read them).
    @Test func checkConstraintsAreFailuresWithoutTheSQL() throws {
        let store = try makeStore()
        let error = #expect(throws: StoreError.self) {
            try store.database.executeScript(
                "INSERT INTO orders (no, user_id, product_id, status, created_at, updated_at) VALUES ('n', 'u', 'p', 'bogus', 1, 1)"
            )
        }
        guard case .failure(let message)? = error else {
            Issue.record("expected a failure, got \(String(describing: error))")
            return
        }
        #expect(message.contains("CHECK constraint failed"))
        #expect(!message.contains("SQL"))
        #expect(!message.contains("INSERT"))
    }

    @Test func uniqueViolationNamesTheColumn() {
        let error = SQLiteError.map(2067, message: "UNIQUE constraint failed: orders.trade_no", sql: "INSERT …")
        #expect(error == .conflict("duplicate orders.trade_no (UNIQUE constraint failed: orders.trade_no)"))
        guard case .busy = SQLiteError.map(5, message: "database is locked", sql: nil) else {
            Issue.record("SQLITE_BUSY not mapped to busy")
            return
        }
        guard case .busy = SQLiteError.map(6, message: "database table is locked", sql: nil) else {
            Issue.record("SQLITE_LOCKED not mapped to busy")
            return
        }
        guard case .failure(let message) = SQLiteError.map(26, message: "file is not a database", sql: nil) else {
            Issue.record("SQLITE_NOTADB not mapped to failure")
            return
        }
        #expect(message.contains("not an SQLite database"))
    }

    @Test func invalidLimitIsRefused() throws {
        let store = try makeStore()
        #expect(throws: StoreError.self) { _ = try store.read { try $0.orders(matching: OrderFilter(limit: -1)) } }
    }

    @Test func inListsArePaddedToFewShapes() {
        #expect(
            [0, 1, 2, 3, 4, 5, 8, 9, 256, 257, 600].map(SQLiteSession.paddedCount) == [
                0, 1, 2, 4, 4, 8, 8, 16, 256, 512, 768,
            ])
    }

    /// The benchmark's queries must use the indexes, not scan a million rows.
    @Test func hotQueriesUseIndexes() throws {
        let store = try makeStore()
        func plan(_ sql: String) throws -> String {
            let statement = try store.database.prepare("EXPLAIN QUERY PLAN " + sql)
            defer { statement.reset() }
            var details: [String] = []
            while try statement.step() { details.append(statement.text(3) ?? "") }
            return details.joined(separator: " | ")
        }
        #expect(try plan(StoreSQL.ordersMatching[0b0001]).contains("INDEX idx_orders_user_id"))
        #expect(try plan(StoreSQL.ordersMatching[0b0010]).contains("INDEX idx_orders_status"))
        #expect(try plan(StoreSQL.ordersMatching[0b0100]).contains("INDEX idx_orders_product_id"))
        #expect(try plan(StoreSQL.ordersMatching[0b1000]).contains("INDEX idx_orders_origin_no"))
        #expect(try plan(StoreSQL.ordersByOriginNo).contains("INDEX idx_orders_origin_no"))
        #expect(try plan(StoreSQL.orderByNo).contains("INDEX sqlite_autoindex_orders_1"))
        #expect(try plan(StoreSQL.orderByTradeNo).contains("INDEX sqlite_autoindex_orders_2"))
        #expect(try plan(StoreSQL.contractsMatching[0b001]).contains("INDEX idx_member_contracts_user_id"))
        #expect(try plan(StoreSQL.processedLedger).contains("INDEX idx_iap_ledger_notification_uuid"))
        #expect(try plan(StoreSQL.unmatchedLedger).contains("INDEX idx_iap_ledger_verdict"))
        #expect(try plan(StoreSQL.auditByEntity).contains("INDEX idx_iap_audit_entity"))
        // A ledger detail kept as a reference reads its audit rows by the primary key.
        #expect(try plan(StoreSQL.auditByLedgerFrom).contains("INTEGER PRIMARY KEY"))
        // A claim is found in the WITHOUT ROWID table's own key.
        #expect(try plan(StoreSQL.deleteClaim).contains("PRIMARY KEY"))
        let mentioning = try plan(StoreSQL.ledgerMentioning(counts: (2, 1, 1)))
        #expect(mentioning.contains("idx_iap_ledger_transaction_id"))
        #expect(mentioning.contains("idx_iap_ledger_original_transaction_id"))
        #expect(mentioning.contains("idx_iap_ledger_app_account_token"))
        #expect(!mentioning.contains("SCAN iap_ledger"))
    }
}
