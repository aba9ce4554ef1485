import StoreSQL
import SubscriptionEngine

/// Reading model values out of the current row and binding them into statements, in `SQL`'s column order.
extension Statement {
    func order() throws(StoreError) -> Order {
        Order(
            id: try requiredInt64(0), no: try requiredText(1), userId: try requiredText(2),
            productId: try requiredText(3), status: try required(OrderStatus.self, 4), tradeNo: text(5),
            originNo: text(6), purchaseDate: int64(7), expiresDate: int64(8), environment: text(9),
            price: int64(10), currency: text(11), createdAt: try requiredInt64(12),
            updatedAt: try requiredInt64(13))
    }

    /// Binds every column but `id` at 1…13.
    func bindColumns(of order: Order) throws(StoreError) {
        try bind(order.no, at: 1)
        try bind(order.userId, at: 2)
        try bind(order.productId, at: 3)
        try bind(order.status.rawValue, at: 4)
        try bind(order.tradeNo, at: 5)
        try bind(order.originNo, at: 6)
        try bind(order.purchaseDate, at: 7)
        try bind(order.expiresDate, at: 8)
        try bind(order.environment, at: 9)
        try bind(order.price, at: 10)
        try bind(order.currency, at: 11)
        try bind(order.createdAt, at: 12)
        try bind(order.updatedAt, at: 13)
    }

    func contract() throws(StoreError) -> Contract {
        Contract(
            id: try requiredInt64(0), contractId: try requiredText(1), userId: try requiredText(2),
            productId: try requiredText(3), status: try required(ContractStatus.self, 4),
            autoRenew: try requiredInt64(5) != 0, expiresDate: int64(6), environment: text(7),
            nextProductId: text(8), lastEventDate: int64(9), createdAt: try requiredInt64(10),
            updatedAt: try requiredInt64(11))
    }

    /// Binds every column but `id` at 1…11.
    func bindColumns(of contract: Contract) throws(StoreError) {
        try bind(contract.contractId, at: 1)
        try bind(contract.userId, at: 2)
        try bind(contract.productId, at: 3)
        try bind(contract.status.rawValue, at: 4)
        try bind(contract.autoRenew, at: 5)
        try bind(contract.expiresDate, at: 6)
        try bind(contract.environment, at: 7)
        try bind(contract.nextProductId, at: 8)
        try bind(contract.lastEventDate, at: 9)
        try bind(contract.createdAt, at: 10)
        try bind(contract.updatedAt, at: 11)
    }

    /// A ledger row (`StoreSQL.ledgerColumns`) with `raw` left empty, and what the row stores for it.
    func ledgerRow() throws(StoreError) -> (entry: LedgerEntry, raw: StoredRaw) {
        let entry = LedgerEntry(
            id: try requiredInt64(0), receivedAt: try requiredInt64(1), source: try required(EventSource.self, 2),
            notificationUUID: text(3), notificationType: text(4), subtype: text(5), transactionId: text(6),
            originalTransactionId: text(7), appAccountToken: text(8), signedDate: int64(9),
            verdict: try required(Verdict.self, 10), detail: text(11), raw: "")
        return (entry, StoredRaw(text: try requiredText(12), packed: blob(13), rawOf: int64(14)))
    }

    /// Binds every column but `id` at 1…14, `raw` as `stored`.
    func bindColumns(of entry: LedgerEntry, raw stored: StoredRaw) throws(StoreError) {
        try bind(entry.receivedAt, at: 1)
        try bind(entry.source.rawValue, at: 2)
        try bind(entry.notificationUUID, at: 3)
        try bind(entry.notificationType, at: 4)
        try bind(entry.subtype, at: 5)
        try bind(entry.transactionId, at: 6)
        try bind(entry.originalTransactionId, at: 7)
        try bind(entry.appAccountToken, at: 8)
        try bind(entry.signedDate, at: 9)
        try bind(entry.verdict.rawValue, at: 10)
        try bind(entry.detail, at: 11)
        try bind(stored.text, at: 12)
        try bind(stored.packed, at: 13)
        try bind(stored.rawOf, at: 14)
    }

    func auditEntry() throws(StoreError) -> AuditEntry {
        AuditEntry(
            id: try requiredInt64(0), at: try requiredInt64(1), actor: try requiredText(2),
            command: try requiredText(3), reason: text(4), ticket: text(5),
            entity: try required(EntityKind.self, 6), key: try requiredText(7), before: text(8),
            after: text(9), ledgerId: int64(10))
    }

    /// Binds every column but `id` at 1…10.
    func bindColumns(of entry: AuditEntry) throws(StoreError) {
        try bind(entry.at, at: 1)
        try bind(entry.actor, at: 2)
        try bind(entry.command, at: 3)
        try bind(entry.reason, at: 4)
        try bind(entry.ticket, at: 5)
        try bind(entry.entity.rawValue, at: 6)
        try bind(entry.key, at: 7)
        try bind(entry.before, at: 8)
        try bind(entry.after, at: 9)
        try bind(entry.ledgerId, at: 10)
    }

    /// Collects every remaining row with `decode`.
    func all<T>(_ decode: (Statement) throws(StoreError) -> T) throws(StoreError) -> [T] {
        var rows: [T] = []
        while try step() { rows.append(try decode(self)) }
        return rows
    }
}
