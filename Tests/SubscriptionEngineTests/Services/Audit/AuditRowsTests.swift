import IAPFoundation
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// The audit trail's before/after JSON read back by the engine that writes it: columns in schema
/// order, the status, and the field-level changes the commands show.
@Suite("Audit rows read back")
struct AuditRowsTests {
    static let paid: Order = {
        var order = Order(no: "o1", userId: "alice", productId: "pro")
        order.status = .paid
        order.tradeNo = "2000"
        order.expiresDate = 1_738_281_600_000
        return order
    }()

    @Test func aStoredRowIsItsColumnsInSchemaOrder() {
        let columns = AuditRows.columns(EngineAuditJSON.encode(Self.paid)).map(\.column)
        // The JSON has sorted property names (expiresDate, no, productId…); the columns follow the schema.
        #expect(Array(columns.prefix(5)) == ["no", "user_id", "product_id", "status", "trade_no"])
        #expect(columns.firstIndex(of: "expires_date")! > columns.firstIndex(of: "trade_no")!)
        #expect(AuditRows.status(EngineAuditJSON.encode(Self.paid)) == "paid")
        // A member of no known column comes last, named as a column; unreadable text is no row.
        #expect(AuditRows.columns(#"{"zNew":1,"status":"paid"}"#).map(\.column) == ["status", "z_new"])
        #expect(AuditRows.columns("not json").isEmpty && AuditRows.columns(nil).isEmpty)
        #expect(AuditRows.status(nil) == nil)
    }

    @Test func changedFieldsAreWhatTheChangeReplaced() {
        var refunded = Self.paid
        refunded.status = .refunded
        refunded.updatedAt = 99
        let update = AuditEntry(
            at: 1, actor: "a", command: "orders update", entity: .order, key: "o1",
            before: EngineAuditJSON.encode(Self.paid), after: EngineAuditJSON.encode(refunded))
        // updated_at changed too, but the audit row's own time says when.
        #expect(update.changedFields == [AuditedField(column: "status", before: .string("paid"), after: .string("refunded"))])
        let insert = AuditEntry(
            at: 1, actor: "a", command: "orders create", entity: .order, key: "o1", before: nil,
            after: EngineAuditJSON.encode(Self.paid))
        let inserted = insert.changedFields.map(\.column)
        #expect(!inserted.contains("no"), "the row's own key is the audit row's key")
        #expect(inserted.prefix(3) == ["user_id", "product_id", "status"])
        #expect(insert.changedFields.allSatisfy { $0.before == nil })
    }
}
