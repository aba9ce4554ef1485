import StoreSQL
import SubscriptionEngine

/// One open transaction on a ``MySQLStore``; valid only inside the closure it was passed to.
///
/// In a write transaction the single-row lookups the engine updates afterwards (`order(no:)`,
/// `order(tradeNo:)`, `contract(contractId:)`, `ledgerEntry(id:)`) are `SELECT … FOR UPDATE`: a
/// concurrent writer of the same row waits for this commit and then reads the committed row.
/// A row that does not exist yet is not locked (READ COMMITTED takes no gap locks): two writers
/// inserting the same key race to the unique index, and the loser gets ``StoreError/conflict(_:)``.
final class MySQLSession: StoreSession {
    enum Mode { case read, write }

    private let connection: Connection
    let mode: Mode
    private(set) var isOpen = true
    private var savepointDepth = 0
    private let rawCodec = LedgerRawCodec()

    init(connection: Connection, mode: Mode) {
        self.connection = connection
        self.mode = mode
    }

    /// Ends the session: any later use is a programmer error reported as a failure.
    func close() { isOpen = false }

    // MARK: orders

    func order(no: String) throws -> Order? {
        try one(mode == .write ? MySQLSQL.orderByNoForUpdate : StoreSQL.orderByNo, [.text(no)]) {
            row throws(StoreError) in try row.order()
        }
    }

    func order(tradeNo: String) throws -> Order? {
        try one(mode == .write ? MySQLSQL.orderByTradeNoForUpdate : StoreSQL.orderByTradeNo, [.text(tradeNo)]) {
            row throws(StoreError) in try row.order()
        }
    }

    func orders(originNo: String) throws -> [Order] {
        try all(StoreSQL.ordersByOriginNo, [.text(originNo)]) { row throws(StoreError) in try row.order() }
    }

    func orders(matching filter: OrderFilter) throws -> [Order] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId, filter.originNo]
        let (sql, bound) = try Self.filtered(StoreSQL.ordersMatching, values: values, limit: filter.limit)
        return try all(sql, bound) { row throws(StoreError) in try row.order() }
    }

    func insertOrder(_ order: Order) throws -> Order {
        let result = try write(StoreSQL.insertOrder, MySQLBindings.order(order))
        var inserted = order
        inserted.id = result.insertId
        return inserted
    }

    func updateOrder(_ order: Order) throws {
        let result = try write(StoreSQL.updateOrder, MySQLBindings.order(order) + [.int(order.id)])
        try expectOneRow(result.affectedRows, "order", id: order.id)
    }

    // MARK: contracts

    func contract(contractId: String) throws -> Contract? {
        try one(mode == .write ? MySQLSQL.contractByIdForUpdate : StoreSQL.contractById, [.text(contractId)]) {
            row throws(StoreError) in try row.contract()
        }
    }

    func contracts(matching filter: ContractFilter) throws -> [Contract] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId]
        let (sql, bound) = try Self.filtered(StoreSQL.contractsMatching, values: values, limit: filter.limit)
        return try all(sql, bound) { row throws(StoreError) in try row.contract() }
    }

    func insertContract(_ contract: Contract) throws -> Contract {
        let result = try write(StoreSQL.insertContract, MySQLBindings.contract(contract))
        var inserted = contract
        inserted.id = result.insertId
        return inserted
    }

    func updateContract(_ contract: Contract) throws {
        let result = try write(StoreSQL.updateContract, MySQLBindings.contract(contract) + [.int(contract.id)])
        try expectOneRow(result.affectedRows, "contract", id: contract.id)
    }

    // MARK: ledger

    func appendLedger(_ entry: LedgerEntry) throws -> Int64 {
        let stored = try rawCodec.storedForm(
            raw: entry.raw, notificationUUID: entry.notificationUUID,
            firstCopy: { uuid, packed in
                try one(StoreSQL.ledgerFirstCopy, [.text(uuid), .bytes(packed)]) { row throws(StoreError) in try row.int(0) }
            },
            insertChain: { chain in
                _ = try write(MySQLSQL.insertLedgerChain, [.bytes(chain.digest), .bytes(chain.text)])
            })
        return try write(StoreSQL.insertLedger, MySQLBindings.ledger(entry, raw: stored)).insertId
    }

    /// Entries with their raw text rebuilt (packed, or held by the first copy).
    private func ledgerEntries(_ rows: [(entry: LedgerEntry, raw: StoredRaw)]) throws -> [LedgerEntry] {
        try rows.map { row in
            var entry = row.entry
            entry.raw = try rawCodec.text(
                of: row.raw, rowId: entry.id,
                rowById: { id in
                    try one(StoreSQL.ledgerRawById, [.int(id)]) { row throws(StoreError) in
                        StoredRaw(text: try row.text(0), packed: try row.optionalBytes(1), rawOf: nil)
                    }
                },
                chainByDigest: { digest in
                    try one(StoreSQL.ledgerChainByDigest, [.bytes(digest)]) { row throws(StoreError) in
                        try row.optionalBytes(0) ?? []
                    }
                })
            return entry
        }
    }

    func updateLedger(id: Int64, verdict: Verdict, detail: String?) throws {
        let result = try write(StoreSQL.updateLedger, [.text(verdict.rawValue), MySQLValue(detail), .int(id)])
        try expectOneRow(result.affectedRows, "ledger row", id: id)
    }

    func ledgerEntry(id: Int64) throws -> LedgerEntry? {
        try ledgerEntries(
            all(mode == .write ? MySQLSQL.ledgerByIdForUpdate : StoreSQL.ledgerById, [.int(id)]) {
                row throws(StoreError) in try row.ledgerRow()
            }
        ).first
    }

    func claimNotification(_ uuid: String) throws -> Bool {
        // A concurrent holder's uncommitted row makes this INSERT wait (the unique key's lock):
        // after its commit it fails as a duplicate, after its rollback it succeeds.
        do {
            _ = try write(StoreSQL.insertClaim, [.text(uuid)])
            return true
        } catch .conflict {
            return false
        }
    }

    func releaseNotificationClaim(_ uuid: String) throws {
        _ = try write(StoreSQL.deleteClaim, [.text(uuid)])
    }

    func lockRows(contractIds: [String], orderNos: [String]) throws {
        try checkOpen()
        guard mode == .write else { return }
        for (table, column, ids) in [("member_contracts", "contract_id", contractIds), ("orders", "no", orderNos)] {
            // Sorted and in slices of at most 256 (padded, so the statements stay reusable): InnoDB
            // locks the unique index's rows in ascending order, the same in every process.
            let sorted = Array(Set(ids)).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            var start = 0
            while start < sorted.count {
                let slice = Array(sorted[start..<Swift.min(start + 256, sorted.count)])
                start += slice.count
                let size = Self.paddedCount(slice.count)
                let values = (0..<size).map { MySQLValue.text(slice[Swift.min($0, slice.count - 1)]) }
                let statement = try connection.shapedStatement(MySQLSQL.lockRows(table: table, column: column, count: size))
                _ = try statement.query(values)
            }
        }
    }

    func processedLedgerEntry(notificationUUID: String) throws -> LedgerEntry? {
        try ledgerEntries(
            all(StoreSQL.processedLedger, [.text(notificationUUID)]) { row throws(StoreError) in try row.ledgerRow() }
        ).first
    }

    func ledger(
        transactionIds: [String], originalTransactionIds: [String], appAccountTokens: [String]
    ) throws -> [LedgerEntry] {
        try checkOpen()
        let lists = [transactionIds, originalTransactionIds, appAccountTokens]
        // Lists are padded (repeating their last id) to a few sizes so the statements stay reusable.
        let sizes = lists.map { Self.paddedCount($0.count) }
        guard sizes.contains(where: { $0 > 0 }) else { return [] }
        guard sizes.reduce(0, +) <= 30_000 else {
            throw StoreError.failure("ledger lookup with too many ids (\(lists.map(\.count).reduce(0, +)))")
        }
        var values: [MySQLValue] = []
        for (list, size) in zip(lists, sizes) where size > 0 {
            for i in 0..<size { values.append(.text(list[Swift.min(i, list.count - 1)])) }
        }
        let statement = try connection.shapedStatement(
            StoreSQL.ledgerMentioning(counts: (sizes[0], sizes[1], sizes[2])))
        return try ledgerEntries(statement.query(values).map { row throws(StoreError) in try row.ledgerRow() })
    }

    func unmatchedLedger(limit: Int?) throws -> [LedgerEntry] {
        try ledgerEntries(
            all(StoreSQL.unmatchedLedger, [.int(try Self.limitValue(limit))]) {
                row throws(StoreError) in try row.ledgerRow()
            })
    }

    // MARK: facts

    func insertFact(_ fact: Fact) throws -> Bool {
        let digest = fact.digest
        let count = try one(StoreSQL.factExists, [.text(fact.key), .text(digest)]) { row throws(StoreError) in try row.int(0) }
        if (count ?? 0) > 0 { return false }
        _ = try write(
            StoreSQL.insertFact,
            [
                .text(fact.kind.rawValue), .text(fact.key), .text(fact.originalTransactionId), .int(fact.signedDate),
                .text(fact.source.rawValue), .text(digest), .text(fact.body),
            ])
        return true
    }

    func facts(originalTransactionId: String) throws -> [Fact] {
        try all(StoreSQL.factsByOriginal, [.text(originalTransactionId)]) { row throws(StoreError) in
            Fact(
                kind: try row.value(Fact.Kind.self, 0), key: try row.text(1), originalTransactionId: try row.text(2),
                signedDate: try row.int(3), source: try row.value(EventSource.self, 4), body: try row.text(5))
        }
    }

    // MARK: audit

    func appendAudit(_ entry: AuditEntry) throws -> Int64 {
        try write(StoreSQL.insertAudit, MySQLBindings.audit(entry)).insertId
    }

    func audit(entity: EntityKind, key: String) throws -> [AuditEntry] {
        try all(StoreSQL.auditByEntity, [.text(entity.rawValue), .text(key)]) {
            row throws(StoreError) in try row.auditEntry()
        }
    }

    func auditEntries(matching filter: AuditFilter) throws -> [AuditEntry] {
        let values: [MySQLValue] = [
            MySQLValue(filter.actor), MySQLValue(filter.actor), MySQLValue(filter.since), MySQLValue(filter.since),
            MySQLValue(filter.ticket), MySQLValue(filter.ticket), .int(try Self.limitValue(filter.limit)),
        ]
        return try all(StoreSQL.auditMatching, values) { row throws(StoreError) in try row.auditEntry() }
    }

    func auditEntry(id: Int64) throws -> AuditEntry? {
        try one(StoreSQL.auditById, [.int(id)]) { row throws(StoreError) in try row.auditEntry() }
    }

    // MARK: misc

    func counts() throws -> StoreCounts {
        guard let row = try all(StoreSQL.counts, [], { row throws(StoreError) in row }).first else {
            throw StoreError.failure("counts returned no row [SQL: \(StoreSQL.counts)]")
        }
        return StoreCounts(
            orders: Int(try row.int(0)), contracts: Int(try row.int(1)), ledger: Int(try row.int(2)),
            unmatched: Int(try row.int(3)), audit: Int(try row.int(4)))
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try savepoint(keep: true, body)
    }

    /// Runs `body` in a savepoint; releases it when `keep` and `body` returns, else rolls back to it.
    func savepoint<T>(keep: Bool, _ body: () throws -> T) throws -> T {
        try checkOpen()
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        // The name depends on the nesting depth only: no value is ever part of the SQL.
        let name = "iapctl_sp\(savepointDepth)"
        try connection.execute("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            try rollback(to: name)
            throw error
        }
        if keep {
            try connection.execute("RELEASE SAVEPOINT \(name)")
        } else {
            try rollback(to: name)
        }
        return result
    }

    // MARK: helpers

    private func rollback(to name: String) throws(StoreError) {
        // After a deadlock or a lost connection the server has rolled everything back, savepoints
        // included: the caller's error is the one to report, and the transaction cannot go on.
        rawCodec.forgetWrites()
        if let aborted = connection.errors.transactionAborted { throw aborted }
        try connection.execute("ROLLBACK TO SAVEPOINT \(name)")
    }

    private func checkOpen() throws(StoreError) {
        guard isOpen else {
            throw .failure("programmer error: store session used after its transaction ended")
        }
        // Statements after a server-side rollback would run outside any transaction: refuse them.
        if let aborted = connection.errors.transactionAborted { throw aborted }
    }

    private func one<T>(
        _ sql: String, _ values: [MySQLValue], _ decode: (MySQLRow) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        try all(sql, values, decode).first
    }

    private func all<T>(
        _ sql: String, _ values: [MySQLValue], _ decode: (MySQLRow) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        try checkOpen()
        var decoded: [T] = []
        for row in try connection.query(sql, values) { decoded.append(try decode(row)) }
        return decoded
    }

    private func write(_ sql: String, _ values: [MySQLValue]) throws(StoreError) -> (
        affectedRows: UInt64, insertId: Int64
    ) {
        try checkOpen()
        guard mode == .write else {
            throw .failure("programmer error: write inside a read transaction [SQL: \(sql)]")
        }
        return try connection.run(sql, values)
    }

    private func expectOneRow(_ affected: UInt64, _ what: String, id: Int64) throws(StoreError) {
        guard affected == 1 else { throw .failure("no \(what) with id \(id) to update") }
    }

    /// The statement for the filters present in `values`, and its values (then the limit).
    private static func filtered(
        _ variants: [String], values: [String?], limit: Int?
    ) throws(StoreError) -> (String, [MySQLValue]) {
        var mask = 0
        var bound: [MySQLValue] = []
        for (bit, value) in values.enumerated() {
            if let value {
                mask |= 1 << bit
                bound.append(.text(value))
            }
        }
        bound.append(.int(try limitValue(limit)))
        return (variants[mask], bound)
    }

    private static func limitValue(_ limit: Int?) throws(StoreError) -> Int64 {
        guard let limit else { return MySQLSQL.noLimit }
        guard limit >= 0 else { throw .failure("invalid limit \(limit): must be 0 or more") }
        return Int64(limit)
    }

    /// 0 stays 0; otherwise the next power of two up to 256, then the next multiple of 256.
    static func paddedCount(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        if count > 256 { return (count + 255) / 256 * 256 }
        var size = 1
        while size < count { size <<= 1 }
        return size
    }
}
