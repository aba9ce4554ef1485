import StoreSQL
import SubscriptionEngine

/// One open transaction on a ``SQLiteStore``; valid only inside the closure it was passed to.
final class SQLiteSession: StoreSession {
    enum Mode { case read, write }

    private let db: Database
    let mode: Mode
    private(set) var isOpen = true
    private var savepointDepth = 0
    private let rawCodec = LedgerRawCodec()

    init(db: Database, mode: Mode) {
        self.db = db
        self.mode = mode
    }

    /// Ends the session: any later use is a programmer error reported as a failure.
    func close() { isOpen = false }

    // MARK: orders

    func order(no: String) throws -> Order? {
        try one(StoreSQL.orderByNo, no) { s throws(StoreError) in try s.order() }
    }

    func order(tradeNo: String) throws -> Order? {
        try one(StoreSQL.orderByTradeNo, tradeNo) { s throws(StoreError) in try s.order() }
    }

    func orders(originNo: String) throws -> [Order] {
        let s = try statement(StoreSQL.ordersByOriginNo)
        defer { s.reset() }
        try s.bind(originNo, at: 1)
        return try s.all { s throws(StoreError) in try s.order() }
    }

    func orders(matching filter: OrderFilter) throws -> [Order] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId, filter.originNo]
        let s = try filtered(StoreSQL.ordersMatching, values: values, limit: filter.limit)
        defer { s.reset() }
        return try s.all { s throws(StoreError) in try s.order() }
    }

    func insertOrder(_ order: Order) throws -> Order {
        let s = try statement(StoreSQL.insertOrder, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: order)
        try s.run()
        var inserted = order
        inserted.id = db.lastInsertRowID
        return inserted
    }

    func updateOrder(_ order: Order) throws {
        let s = try statement(StoreSQL.updateOrder, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: order)
        try s.bind(order.id, at: 14)
        try s.run()
        try expectOneChange("order", id: order.id)
    }

    // MARK: contracts

    func contract(contractId: String) throws -> Contract? {
        try one(StoreSQL.contractById, contractId) { s throws(StoreError) in try s.contract() }
    }

    func contracts(matching filter: ContractFilter) throws -> [Contract] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId]
        let s = try filtered(StoreSQL.contractsMatching, values: values, limit: filter.limit)
        defer { s.reset() }
        return try s.all { s throws(StoreError) in try s.contract() }
    }

    func insertContract(_ contract: Contract) throws -> Contract {
        let s = try statement(StoreSQL.insertContract, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: contract)
        try s.run()
        var inserted = contract
        inserted.id = db.lastInsertRowID
        return inserted
    }

    func updateContract(_ contract: Contract) throws {
        let s = try statement(StoreSQL.updateContract, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: contract)
        try s.bind(contract.id, at: 12)
        try s.run()
        try expectOneChange("contract", id: contract.id)
    }

    // MARK: ledger

    func appendLedger(_ entry: LedgerEntry) throws -> Int64 {
        let stored = try rawCodec.storedForm(
            raw: entry.raw, notificationUUID: entry.notificationUUID,
            firstCopy: { uuid, packed in
                let s = try statement(StoreSQL.ledgerFirstCopy)
                defer { s.reset() }
                try s.bind(uuid, at: 1)
                try s.bind(packed, at: 2)
                return try s.step() ? s.int64(0) : nil
            },
            insertChain: { chain in
                let s = try statement(SQLiteSQL.insertLedgerChain, writing: true)
                defer { s.reset() }
                try s.bind(chain.digest, at: 1)
                try s.bind(chain.text, at: 2)
                try s.run()
            })
        let s = try statement(StoreSQL.insertLedger, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: entry, raw: stored)
        try s.run()
        return db.lastInsertRowID
    }

    private func rawText(_ stored: StoredRaw, rowId: Int64) throws -> String {
        try rawCodec.text(
            of: stored, rowId: rowId,
            rowById: { id in
                let s = try statement(StoreSQL.ledgerRawById)
                defer { s.reset() }
                try s.bind(id, at: 1)
                return try s.step() ? StoredRaw(text: try s.requiredText(0), packed: s.blob(1), rawOf: nil) : nil
            },
            chainByDigest: { digest in
                let s = try statement(StoreSQL.ledgerChainByDigest)
                defer { s.reset() }
                try s.bind(digest, at: 1)
                return try s.step() ? s.blob(0) : nil
            })
    }

    /// Rows read in full first: rebuilding a raw may run other statements.
    private func ledgerEntries(_ s: Statement) throws -> [LedgerEntry] {
        let rows = try s.all { s throws(StoreError) in try s.ledgerRow() }
        s.reset()
        return try rows.map { row in
            var entry = row.entry
            entry.raw = try rawText(row.raw, rowId: entry.id)
            return entry
        }
    }

    func updateLedger(id: Int64, verdict: Verdict, detail: String?) throws {
        let s = try statement(StoreSQL.updateLedger, writing: true)
        defer { s.reset() }
        try s.bind(verdict.rawValue, at: 1)
        try s.bind(detail, at: 2)
        try s.bind(id, at: 3)
        try s.run()
        try expectOneChange("ledger row", id: id)
    }

    func ledgerEntry(id: Int64) throws -> LedgerEntry? {
        let s = try statement(StoreSQL.ledgerById)
        defer { s.reset() }
        try s.bind(id, at: 1)
        return try ledgerEntries(s).first
    }

    func claimNotification(_ uuid: String) throws -> Bool {
        let s = try statement(StoreSQL.insertClaim, writing: true)
        defer { s.reset() }
        try s.bind(uuid, at: 1)
        do {
            try s.run()
            return true
        } catch .conflict {
            return false
        }
    }

    func releaseNotificationClaim(_ uuid: String) throws {
        let s = try statement(StoreSQL.deleteClaim, writing: true)
        defer { s.reset() }
        try s.bind(uuid, at: 1)
        try s.run()
    }

    func lockRows(contractIds: [String], orderNos: [String]) throws {
        // BEGIN IMMEDIATE already holds the only write lock.
        try checkOpen()
    }

    func processedLedgerEntry(notificationUUID: String) throws -> LedgerEntry? {
        let s = try statement(StoreSQL.processedLedger)
        defer { s.reset() }
        try s.bind(notificationUUID, at: 1)
        return try ledgerEntries(s).first
    }

    func ledger(
        transactionIds: [String], originalTransactionIds: [String], appAccountTokens: [String]
    ) throws -> [LedgerEntry] {
        try checkOpen()
        let lists = [transactionIds, originalTransactionIds, appAccountTokens]
        // Lists are padded (repeating their last id) to a few sizes so the statements stay cacheable.
        let sizes = lists.map { Self.paddedCount($0.count) }
        guard sizes.contains(where: { $0 > 0 }) else { return [] }
        guard sizes.reduce(0, +) <= 30_000 else {
            throw StoreError.failure("ledger lookup with too many ids (\(lists.map(\.count).reduce(0, +)))")
        }
        let shape = StatementShape.ledgerMentioning(sizes[0], sizes[1], sizes[2])
        let s = try db.cached(shape) { StoreSQL.ledgerMentioning(counts: (sizes[0], sizes[1], sizes[2])) }
        defer { s.reset() }
        var index: Int32 = 1
        for (list, size) in zip(lists, sizes) where size > 0 {
            for i in 0..<size {
                try s.bind(list[Swift.min(i, list.count - 1)], at: index)
                index += 1
            }
        }
        return try ledgerEntries(s)
    }

    func unmatchedLedger(limit: Int?) throws -> [LedgerEntry] {
        let s = try statement(StoreSQL.unmatchedLedger)
        defer { s.reset() }
        try s.bind(try Self.limitValue(limit), at: 1)
        return try ledgerEntries(s)
    }

    // MARK: facts

    func insertFact(_ fact: Fact) throws -> Bool {
        let digest = fact.digest
        let exists = try statement(StoreSQL.factExists)
        defer { exists.reset() }
        try exists.bind(fact.key, at: 1)
        try exists.bind(digest, at: 2)
        if try exists.step(), try exists.requiredInt64(0) > 0 { return false }
        let s = try statement(StoreSQL.insertFact, writing: true)
        defer { s.reset() }
        try s.bind(fact.kind.rawValue, at: 1)
        try s.bind(fact.key, at: 2)
        try s.bind(fact.originalTransactionId, at: 3)
        try s.bind(fact.signedDate, at: 4)
        try s.bind(fact.source.rawValue, at: 5)
        try s.bind(digest, at: 6)
        try s.bind(fact.body, at: 7)
        try s.run()
        return true
    }

    func facts(originalTransactionId: String) throws -> [Fact] {
        let s = try statement(StoreSQL.factsByOriginal)
        defer { s.reset() }
        try s.bind(originalTransactionId, at: 1)
        return try s.all { s throws(StoreError) in
            Fact(
                kind: try s.required(Fact.Kind.self, 0), key: try s.requiredText(1), originalTransactionId: try s.requiredText(2),
                signedDate: try s.requiredInt64(3), source: try s.required(EventSource.self, 4), body: try s.requiredText(5))
        }
    }

    // MARK: audit

    func appendAudit(_ entry: AuditEntry) throws -> Int64 {
        let s = try statement(StoreSQL.insertAudit, writing: true)
        defer { s.reset() }
        try s.bindColumns(of: entry)
        try s.run()
        return db.lastInsertRowID
    }

    func audit(entity: EntityKind, key: String) throws -> [AuditEntry] {
        let s = try statement(StoreSQL.auditByEntity)
        defer { s.reset() }
        try s.bind(entity.rawValue, at: 1)
        try s.bind(key, at: 2)
        return try s.all { s throws(StoreError) in try s.auditEntry() }
    }

    func auditEntries(matching filter: AuditFilter) throws -> [AuditEntry] {
        let s = try statement(StoreSQL.auditMatching)
        defer { s.reset() }
        try s.bind(filter.actor, at: 1)
        try s.bind(filter.actor, at: 2)
        try s.bind(filter.since, at: 3)
        try s.bind(filter.since, at: 4)
        try s.bind(filter.ticket, at: 5)
        try s.bind(filter.ticket, at: 6)
        try s.bind(try Self.limitValue(filter.limit), at: 7)
        return try s.all { s throws(StoreError) in try s.auditEntry() }
    }

    func auditEntry(id: Int64) throws -> AuditEntry? {
        let s = try statement(StoreSQL.auditById)
        defer { s.reset() }
        try s.bind(id, at: 1)
        return try s.step() ? s.auditEntry() : nil
    }

    // MARK: misc

    func counts() throws -> StoreCounts {
        let s = try statement(StoreSQL.counts)
        defer { s.reset() }
        guard try s.step() else { throw StoreError.failure("counts returned no row [SQL: \(StoreSQL.counts)]") }
        return StoreCounts(
            orders: Int(try s.requiredInt64(0)), contracts: Int(try s.requiredInt64(1)),
            ledger: Int(try s.requiredInt64(2)), unmatched: Int(try s.requiredInt64(3)),
            audit: Int(try s.requiredInt64(4)))
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try savepoint(keep: true, body)
    }

    /// Runs `body` in a savepoint; releases it when `keep` and `body` returns, else rolls back to it.
    func savepoint<T>(keep: Bool, _ body: () throws -> T) throws -> T {
        try checkOpen()
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        // The name depends on the nesting depth only.
        let name = "iapctl_sp\(savepointDepth)"
        try db.execute("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            try rollback(to: name)
            throw error
        }
        if keep {
            try db.execute("RELEASE \(name)")
        } else {
            try rollback(to: name)
        }
        return result
    }

    // MARK: helpers

    private func rollback(to name: String) throws(StoreError) {
        // SQLite may already have rolled the whole transaction back (e.g. after SQLITE_FULL).
        rawCodec.forgetWrites()
        guard !db.isAutocommit else { return }
        try db.execute("ROLLBACK TO \(name)")
        try db.execute("RELEASE \(name)")
    }

    private func checkOpen() throws(StoreError) {
        guard isOpen else {
            throw .failure("programmer error: store session used after its transaction ended")
        }
    }

    private func statement(_ sql: String, writing: Bool = false) throws(StoreError) -> Statement {
        try checkOpen()
        if writing, mode == .read {
            throw .failure("programmer error: write inside a read transaction [SQL: \(sql)]")
        }
        return try db.cached(sql)
    }

    private func one<T>(
        _ sql: String, _ key: String, _ decode: (Statement) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let s = try statement(sql)
        defer { s.reset() }
        try s.bind(key, at: 1)
        return try s.step() ? decode(s) : nil
    }

    /// The statement for the filters present in `values` (see `StoreSQL.ordersMatching`), bound.
    private func filtered(_ variants: [String], values: [String?], limit: Int?) throws(StoreError) -> Statement {
        var mask = 0
        for (bit, value) in values.enumerated() where value != nil { mask |= 1 << bit }
        let s = try statement(variants[mask])
        var index: Int32 = 1
        do {
            for value in values where value != nil {
                try s.bind(value, at: index)
                index += 1
            }
            try s.bind(try Self.limitValue(limit), at: index)
        } catch {
            s.reset()
            throw error
        }
        return s
    }

    private func expectOneChange(_ what: String, id: Int64) throws(StoreError) {
        guard db.changes == 1 else { throw .failure("no \(what) with id \(id) to update") }
    }

    /// SQLite's `LIMIT -1` means no limit.
    private static func limitValue(_ limit: Int?) throws(StoreError) -> Int64 {
        guard let limit else { return -1 }
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
