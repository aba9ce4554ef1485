import StoreSQL
import SubscriptionEngine

/// Row ↔ model conversions, in the column order of ``MySQLSQL``.
extension MySQLRow {
    func order() throws(StoreError) -> Order {
        Order(
            id: try int(0), no: try text(1), userId: try text(2), productId: try text(3),
            status: try value(OrderStatus.self, 4), tradeNo: try optionalText(5), originNo: try optionalText(6),
            purchaseDate: try optionalInt(7), expiresDate: try optionalInt(8), environment: try optionalText(9),
            price: try optionalInt(10), currency: try optionalText(11), createdAt: try int(12),
            updatedAt: try int(13))
    }

    func contract() throws(StoreError) -> Contract {
        Contract(
            id: try int(0), contractId: try text(1), userId: try text(2), productId: try text(3),
            status: try value(ContractStatus.self, 4), autoRenew: try int(5) != 0, expiresDate: try optionalInt(6),
            environment: try optionalText(7), nextProductId: try optionalText(8), lastEventDate: try optionalInt(9),
            createdAt: try int(10), updatedAt: try int(11))
    }

    /// A ledger row (`StoreSQL.ledgerColumns`) with `raw` left empty, and what the row stores for it.
    func ledgerRow() throws(StoreError) -> (entry: LedgerEntry, raw: StoredRaw) {
        let entry = LedgerEntry(
            id: try int(0), receivedAt: try int(1), source: try value(EventSource.self, 2),
            notificationUUID: try optionalText(3), notificationType: try optionalText(4), subtype: try optionalText(5),
            transactionId: try optionalText(6), originalTransactionId: try optionalText(7),
            appAccountToken: try optionalText(8), signedDate: try optionalInt(9), verdict: try value(Verdict.self, 10),
            detail: try optionalText(11), raw: "")
        return (entry, StoredRaw(text: try text(12), packed: try optionalBytes(13), rawOf: try optionalInt(14)))
    }

    func auditEntry() throws(StoreError) -> AuditEntry {
        AuditEntry(
            id: try int(0), at: try int(1), actor: try text(2), command: try text(3), reason: try optionalText(4),
            ticket: try optionalText(5), entity: try value(EntityKind.self, 6), key: try text(7),
            before: try optionalText(8), after: try optionalText(9), ledgerId: try optionalInt(10))
    }
}

/// Bound values for inserts and updates, in the placeholder order of ``MySQLSQL``.
enum MySQLBindings {
    static func order(_ o: Order) -> [MySQLValue] {
        [
            .text(o.no), .text(o.userId), .text(o.productId), .text(o.status.rawValue), MySQLValue(o.tradeNo),
            MySQLValue(o.originNo), MySQLValue(o.purchaseDate), MySQLValue(o.expiresDate), MySQLValue(o.environment),
            MySQLValue(o.price), MySQLValue(o.currency), .int(o.createdAt), .int(o.updatedAt),
        ]
    }

    static func contract(_ c: Contract) -> [MySQLValue] {
        [
            .text(c.contractId), .text(c.userId), .text(c.productId), .text(c.status.rawValue),
            .int(c.autoRenew ? 1 : 0), MySQLValue(c.expiresDate), MySQLValue(c.environment),
            MySQLValue(c.nextProductId), MySQLValue(c.lastEventDate), .int(c.createdAt), .int(c.updatedAt),
        ]
    }

    static func ledger(_ e: LedgerEntry, raw stored: StoredRaw) -> [MySQLValue] {
        [
            .int(e.receivedAt), .text(e.source.rawValue), MySQLValue(e.notificationUUID),
            MySQLValue(e.notificationType), MySQLValue(e.subtype), MySQLValue(e.transactionId),
            MySQLValue(e.originalTransactionId), MySQLValue(e.appAccountToken), MySQLValue(e.signedDate),
            .text(e.verdict.rawValue), MySQLValue(e.detail), .text(stored.text),
            stored.packed.map { .bytes($0) } ?? .null, MySQLValue(stored.rawOf),
        ]
    }

    static func audit(_ a: AuditEntry) -> [MySQLValue] {
        [
            .int(a.at), .text(a.actor), .text(a.command), MySQLValue(a.reason), MySQLValue(a.ticket),
            .text(a.entity.rawValue), .text(a.key), MySQLValue(a.before), MySQLValue(a.after), MySQLValue(a.ledgerId),
        ]
    }
}
