import SubscriptionModel

/// One open transaction on an SQL store, for every backend; valid only inside the closure it was
/// passed to. What differs between engines comes from the connection's ``SQLDialect``.
///
/// Where the dialect has row locks (MySQL), the single-row look-ups the engine updates afterwards
/// (`order(no:)`, `order(tradeNo:)`, `contract(contractId:)`, `ledgerEntry(id:)`) are `SELECT … FOR
/// UPDATE` in a write transaction: a concurrent writer of the same row waits for this commit and then
/// reads the committed row. A row that does not exist yet is not locked: two writers inserting the
/// same key race to the unique index, and the loser gets ``StoreError/conflict(_:)``. Where a write
/// transaction holds the only write lock (SQLite's BEGIN IMMEDIATE) the plain statements are used.
public final class SQLSession: StoreSession {
    public enum Mode: Sendable { case read, write }

    private let connection: any SQLConnection
    private let dialect: SQLDialect
    public let mode: Mode
    public private(set) var isOpen = true
    private var savepointDepth = 0
    /// Notification UUIDs claimed in this transaction when no ledger row held a raw of theirs
    /// (``StoreSQL/claimReturningCopy``): their first-copy look-up is known to find nothing. A
    /// ledger row of the UUID written here drops it; a row another writer commits meanwhile can
    /// only be missed as a copy (the raw is then stored again: nothing is lost).
    private var claimedWithoutCopy: Set<String> = []
    /// The rows ``lockRows(contractIds:orderNos:)`` locked, as they are now: no other writer can
    /// change them before this transaction ends, and this session's own updates of them are kept
    /// here, so a locking read of one is answered without a round trip. A rollback to a
    /// savepoint empties them (the rows' earlier state is not kept).
    private var locked = LockedRows()

    public init(connection: any SQLConnection, dialect: SQLDialect, mode: Mode) {
        self.connection = connection
        self.dialect = dialect
        self.mode = mode
    }

    /// Ends the session: any later use is a programmer error reported as a failure.
    public func close() { isOpen = false }

    // MARK: orders

    public func order(no: String) throws(StoreError) -> Order? {
        if let row = try lockedRow(locked.orders[no]) { return row }
        return try rows(StoreTables.orders, locking(StoreSQL.orderByNo), [.text(no)]).first
    }

    public func order(tradeNo: String) throws(StoreError) -> Order? {
        try rows(StoreTables.orders, locking(StoreSQL.orderByTradeNo), [.text(tradeNo)]).first
    }

    public func orders(originNo: String) throws(StoreError) -> [Order] {
        try rows(StoreTables.orders, StoreSQL.ordersByOriginNo, [.text(originNo)])
    }

    public func orders(matching filter: OrderFilter) throws(StoreError) -> [Order] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId, filter.originNo]
        let (sql, bound) = try filtered(StoreSQL.ordersMatching, values: values, limit: filter.limit)
        return try rows(StoreTables.orders, sql, bound)
    }

    public func insertOrder(_ order: Order) throws(StoreError) -> Order { try inserting(StoreTables.orders, order, id: \.id) }

    public func updateOrder(_ order: Order) throws(StoreError) {
        _ = try write(StoreSQL.clearSnapshotsOfOrder, [SQLValue(order.originNo), .int(order.id)])
        try update(StoreTables.orders, order, "order", id: order.id)
        locked.updated(order)
    }

    // MARK: contracts

    public func contract(contractId: String) throws(StoreError) -> Contract? {
        if let row = try lockedRow(locked.contracts[contractId]) { return row }
        return try rows(StoreTables.contracts, locking(StoreSQL.contractById), [.text(contractId)]).first
    }

    public func contracts(matching filter: ContractFilter) throws(StoreError) -> [Contract] {
        let values = [filter.userId, filter.status?.rawValue, filter.productId]
        let (sql, bound) = try filtered(StoreSQL.contractsMatching, values: values, limit: filter.limit)
        return try rows(StoreTables.contracts, sql, bound)
    }

    public func insertContract(_ contract: Contract) throws(StoreError) -> Contract {
        try inserting(StoreTables.contracts, contract, id: \.id)
    }

    public func updateContract(_ contract: Contract) throws(StoreError) {
        let changed = try write(StoreSQL.contractUpdateClearingSnapshot, StoreTables.contracts.updateValues(contract)).changed
        try expectOneRow(changed, "contract", id: contract.id)
        locked.updated(contract)
    }

    /// The snapshot, when its stored checksum matches its text and it was computed from the facts
    /// the subscription has now (their number and highest id); else nil: the engine then decides
    /// from every fact and writes a new one (``ContractSnapshotCheck``).
    public func contractSnapshot(contractId: String) throws(StoreError) -> String? {
        let values: [SQLValue] = [.text(contractId), .text(contractId), .text(contractId)]
        guard let row = try query(StoreSQL.contractSnapshot, values).rows.first, let stored = try row.optionalText(0)
        else { return nil }
        return ContractSnapshotCheck.text(of: stored, facts: (count: try row.int(1), highestId: try row.int(2)))
    }

    public func saveContractSnapshot(contractId: String, _ snapshot: String?) throws(StoreError) {
        var stored: String?
        if let snapshot {
            guard let row = try query(StoreSQL.factsSummary, [.text(contractId)]).rows.first else {
                throw .failure("the facts' summary returned no row [SQL: \(StoreSQL.factsSummary)]")
            }
            stored = ContractSnapshotCheck.stored(snapshot, facts: (count: try row.int(0), highestId: try row.int(1)))
        }
        _ = try write(StoreSQL.saveContractSnapshot, [SQLValue(stored), .text(contractId)])
    }

    // MARK: ledger

    public func appendLedger(_ entry: LedgerEntry) throws(StoreError) -> Int64 {
        var row = LedgerRow(entry: entry)
        row.entry.raw = ""
        try ZstdCodec.requireLibrary()
        guard let frame = ZstdCodec.rawFrame(Array(entry.raw.utf8)) else { throw .failure("zstd could not compress the raw") }
        if let uuid = entry.notificationUUID, !claimedWithoutCopy.contains(uuid),
            let first = try query(StoreSQL.ledgerFirstCopy, [.text(uuid), .bytes(frame)]).rows.first?.int(0)
        {
            row.rawOf = first
        } else {
            row.rawZstd = frame
        }
        if let uuid = entry.notificationUUID { claimedWithoutCopy.remove(uuid) }
        row.rowDigest = RowDigest.ledger(row.entry, rawOf: row.rawOf, rawZstd: row.rawZstd)
        return try insert(StoreTables.ledger, row)
    }

    /// The ledger row and its audit rows (each with the ledger row's id).
    public func appendLedger(_ entry: LedgerEntry, audits: [AuditEntry]) throws(StoreError) -> Int64 {
        let id = try appendLedger(entry)
        try appendAudits(audits, ledgerId: id)
        return id
    }

    /// Ledger rows as stored, each checked against its row digest.
    private func checkedLedgerRows(_ sql: String, _ values: [SQLValue], shaped: Bool = false) throws(StoreError) -> [LedgerRow] {
        try StoreTables.ledger.decode(query(sql, values, shaped: shaped)).map { row throws(StoreError) in
            guard RowDigest.ledger(row.entry, rawOf: row.rawOf, rawZstd: row.rawZstd) == row.rowDigest else {
                throw .corrupt(table: "iap_ledger", id: row.entry.id, what: "its fields do not match its row_digest")
            }
            return row
        }
    }

    /// Entries with their raw text (from the row's frame, or from the first copy's). The rows are
    /// read in full first: reading a first copy runs another statement.
    private func ledgerEntries(_ sql: String, _ values: [SQLValue], shaped: Bool = false) throws(StoreError) -> [LedgerEntry] {
        try checkedLedgerRows(sql, values, shaped: shaped).map { row throws(StoreError) in
            var entry = row.entry
            var holder = row
            if let first = row.rawOf {
                guard let target = try checkedLedgerRows(StoreSQL.ledgerById, [.int(first)]).first, target.rawOf == nil else {
                    throw .corrupt(
                        table: "iap_ledger", id: entry.id, what: "its raw_of names row \(first), which does not hold a raw")
                }
                holder = target
            }
            guard let frame = holder.rawZstd else {
                throw .corrupt(table: "iap_ledger", id: holder.entry.id, what: "it holds neither raw_zstd nor raw_of")
            }
            try ZstdCodec.requireLibrary()
            switch ZstdCodec.rawContent(frame) {
            case .success(let bytes):
                entry.raw = String(decoding: bytes, as: UTF8.self)
            case .failure(let error):
                throw .corrupt(table: "iap_ledger", id: holder.entry.id, what: "its raw_zstd frame fails its check (\(error))")
            }
            return entry
        }
    }

    public func updateLedger(id: Int64, verdict: Verdict, detail: String?) throws(StoreError) {
        guard var row = try checkedLedgerRows(locking(StoreSQL.ledgerById), [.int(id)]).first else {
            throw .failure("no ledger row with id \(id) to update")
        }
        row.entry.verdict = verdict
        row.entry.detail = detail
        let digest = RowDigest.ledger(row.entry, rawOf: row.rawOf, rawZstd: row.rawZstd)
        let changed = try write(StoreSQL.updateLedger, [.text(verdict.rawValue), SQLValue(detail), .text(digest), .int(id)]).changed
        try expectOneRow(changed, "ledger row", id: id)
    }

    public func ledgerEntry(id: Int64) throws(StoreError) -> LedgerEntry? {
        try ledgerEntries(locking(StoreSQL.ledgerById), [.int(id)]).first
    }

    public func claimNotification(_ uuid: String) throws(StoreError) -> Bool {
        // A concurrent holder's uncommitted row makes this INSERT wait (the unique key's lock):
        // after its commit it fails as a duplicate, after its rollback it succeeds.
        do {
            guard dialect.insertReturning else {
                _ = try insert(StoreTables.claims, ClaimRow(notificationUUID: uuid))
                return true
            }
            try claimReturningCopy(uuid)
            return true
        } catch .conflict {
            return false
        }
    }

    /// The claim and, in the same round trip, whether the ledger holds a raw of the notification.
    private func claimReturningCopy(_ uuid: String) throws(StoreError) {
        try checkWrite(StoreSQL.claimReturningCopy)
        let values = StoreTables.claims.insertValues(ClaimRow(notificationUUID: uuid)) + [.text(uuid)]
        if try connection.query(StoreSQL.claimReturningCopy, values, shaped: false).rows.first?.int(0) == 0 {
            claimedWithoutCopy.insert(uuid)
        } else {
            claimedWithoutCopy.remove(uuid)
        }
    }

    public func releaseNotificationClaim(_ uuid: String) throws(StoreError) {
        _ = try write(StoreSQL.deleteClaim, [.text(uuid)])
    }

    public func lockRows(contractIds: [String], orderNos: [String]) throws(StoreError) {
        try checkOpen()
        guard dialect.locksRows, mode == .write else { return }
        for row in try lockSorted(StoreTables.contracts, column: "contract_id", contractIds) { locked.add(row) }
        for row in try lockSorted(StoreTables.orders, column: "no", orderNos) { locked.add(row) }
    }

    /// Locks the rows of `table` whose unique `column` is one of `ids` and reads them: locked
    /// sorted and in slices of at most 256 (padded, so the statements stay reusable), since InnoDB
    /// locks the unique index's rows in ascending order, the same in every process; then read by
    /// id (one more round trip per slice, not per item).
    private func lockSorted<Row>(
        _ table: SQLTable<Row>, column: String, _ ids: [String]
    ) throws(StoreError) -> [Row] {
        let sorted = Array(Set(ids)).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var rows: [Row] = []
        var start = 0
        while start < sorted.count {
            let slice = Array(sorted[start..<Swift.min(start + 256, sorted.count)])
            start += slice.count
            let lock = StoreSQL.lockRows(
                table: table.name, column: column, count: Self.paddedCount(slice.count), forUpdate: dialect.forUpdate,
                oneSortedScan: dialect.locksRowsInOneSortedScan)
            let locked = try connection.query(lock, Self.padded(slice.map(SQLValue.text)), shaped: true).rows
                .map { row throws(StoreError) in SQLValue.int(try row.int(0)) }
            guard !locked.isEmpty else { continue }
            let read = StoreSQL.rowsById(table, count: Self.paddedCount(locked.count))
            rows += try table.decode(connection.query(read, Self.padded(locked), shaped: true))
        }
        return rows
    }

    /// `values` padded to ``paddedCount(_:)`` by repeating the last one.
    private static func padded(_ values: [SQLValue]) -> [SQLValue] {
        values + Array(repeating: values[values.count - 1], count: paddedCount(values.count) - values.count)
    }

    /// A row ``lockRows(contractIds:orderNos:)`` locked, in a write transaction that is still open.
    private func lockedRow<Row>(_ row: Row?) throws(StoreError) -> Row? {
        guard let row, mode == .write else { return nil }
        try checkOpen()
        return row
    }

    public func processedLedgerEntry(notificationUUID: String) throws(StoreError) -> LedgerEntry? {
        try ledgerEntries(StoreSQL.processedLedger, [.text(notificationUUID)]).first
    }

    public func ledger(
        transactionIds: [String], originalTransactionIds: [String], appAccountTokens: [String]
    ) throws(StoreError) -> [LedgerEntry] {
        try checkOpen()
        let lists = [transactionIds, originalTransactionIds, appAccountTokens]
        // Lists are padded (repeating their last id) to a few sizes so the statements stay reusable.
        let sizes = lists.map { Self.paddedCount($0.count) }
        guard sizes.contains(where: { $0 > 0 }) else { return [] }
        guard sizes.reduce(0, +) <= 30_000 else {
            throw StoreError.failure("ledger lookup with too many ids (\(lists.map(\.count).reduce(0, +)))")
        }
        var values: [SQLValue] = []
        for list in lists where !list.isEmpty { values += Self.padded(list.map(SQLValue.text)) }
        return try ledgerEntries(
            StoreSQL.ledgerMentioning(counts: (sizes[0], sizes[1], sizes[2])), values, shaped: true)
    }

    public func ledger(notificationTypes: [String]) throws(StoreError) -> [LedgerEntry] {
        try checkOpen()
        guard !notificationTypes.isEmpty else { return [] }
        return try ledgerEntries(
            StoreSQL.ledgerOfTypes(count: notificationTypes.count), notificationTypes.map(SQLValue.text), shaped: true)
    }

    public func unmatchedLedger(limit: Int?) throws(StoreError) -> [LedgerEntry] {
        try ledgerEntries(StoreSQL.unmatchedLedger, [.int(try limitValue(limit))])
    }

    // MARK: facts

    public func insertFact(_ fact: Fact) throws(StoreError) -> Bool {
        let digest = FactDigest.of(fact)
        let values = StoreTables.facts.insertValues(FactRow(fact: fact, digest: digest)) + [.text(fact.key), .text(digest)]
        return try write(StoreSQL.insertFactIfNew, values).changed == 1
    }

    public func facts(originalTransactionId: String) throws(StoreError) -> [Fact] {
        try rows(StoreTables.facts, StoreSQL.factsByOriginal, [.text(originalTransactionId)]).map(Self.checked)
    }

    public func facts(originalTransactionId: String, signedSince: Int64) throws(StoreError) -> [Fact] {
        try rows(StoreTables.facts, StoreSQL.factsByOriginalSince, [.text(originalTransactionId), .int(signedSince)]).map(
            Self.checked)
    }

    /// The fact of a row whose digest matches it (every field of the fact is in its identity).
    static func checked(_ row: FactRow) throws(StoreError) -> Fact {
        guard FactDigest.of(row.fact) == row.digest else {
            throw .corrupt(table: "iap_facts", id: row.id, what: "its fields do not match its digest")
        }
        return row.fact
    }

    public func originalTransactionIds(appTransactionId: String) throws(StoreError) -> [String] {
        // Letters and digits only: nothing LIKE reads as a wildcard, on either backend.
        guard !appTransactionId.isEmpty, appTransactionId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return [] }
        let pattern = #"%"appTransactionId":""# + appTransactionId + #""%"#
        return try query(StoreSQL.originalsByFactBody, [.text(pattern)]).rows.map { row throws(StoreError) in try row.text(0) }
    }

    // MARK: overrides

    public func insertOverride(_ override: Override) throws(StoreError) -> Int64 {
        _ = try write(StoreSQL.clearSnapshot, [.text(override.originalTransactionId)])
        return try insert(StoreTables.overrides, override)
    }

    public func updateOverride(_ override: Override) throws(StoreError) {
        _ = try write(StoreSQL.clearSnapshot, [.text(override.originalTransactionId)])
        try update(StoreTables.overrides, override, "override", id: override.id)
    }

    public func overrides(entity: EntityKind, key: String) throws(StoreError) -> [Override] {
        try rows(StoreTables.overrides, StoreSQL.overridesByEntity, [.text(entity.rawValue), .text(key)])
    }

    public func overridesInForce(originalTransactionId: String) throws(StoreError) -> [Override] {
        try rows(StoreTables.overrides, StoreSQL.overridesInForce, [.text(originalTransactionId)])
    }

    // MARK: grants

    public func insertGrant(_ grant: Grant) throws(StoreError) -> Int64 { try insert(StoreTables.grants, grant) }

    public func updateGrant(_ grant: Grant) throws(StoreError) {
        try update(StoreTables.grants, grant, "grant", id: grant.id)
    }

    public func grant(id: Int64) throws(StoreError) -> Grant? {
        try rows(StoreTables.grants, locking(StoreSQL.grantById), [.int(id)]).first
    }

    public func grants(matching filter: GrantFilter) throws(StoreError) -> [Grant] {
        let values = [SQLValue(filter.userId), SQLValue(filter.userId), SQLValue(filter.productId), SQLValue(filter.productId)]
        return try rows(StoreTables.grants, StoreSQL.grantsMatching, values)
    }

    // MARK: forgetting a user

    public func forgetUser(_ userId: String, alias: String, rewrite: (String) -> String?) throws(StoreError)
        -> ForgottenRows
    {
        var result = ForgottenRows()
        for (table, column) in StoreSchema.userIdColumns {
            let changed = try write("UPDATE \(table) SET \(column) = ? WHERE \(column) = ?", [.text(alias), .text(userId)])
            result.ids.append(("\(table).\(column)", Int(changed.changed)))
        }
        // The engine's snapshot of a contract may name its owner: the next event derives a new one.
        _ = try write(StoreSQL.clearSnapshotsOfUser, [.text(alias)])
        let pattern = "%" + StoreSQL.likeEscaped(userId) + "%"
        var counts: [String: Int] = [:]
        // A customer note's audit row is keyed by the note's user: its key follows the user's id
        // (checked first, a new digest after), so the note is still found and checked by it.
        let noteRows = StoreTables.audit.select("WHERE entity = ? AND entity_key = ? ORDER BY id")
        for var entry in try auditEntries(noteRows, [.text(EntityKind.note.rawValue), .text(userId)]) {
            entry.key = alias
            let values: [SQLValue] = [.text(alias), .text(RowDigest.audit(entry)), .int(entry.id)]
            try expectOneRow(try write(StoreSQL.rekeyAuditRow, values).changed, "audit row", id: entry.id)
            counts["iap_audit.entity_key", default: 0] += 1
            result.redigestedAudit += 1
        }
        // The audit trail: each row checked, its texts rewritten, a new digest.
        let auditColumns = StoreSchema.userTextColumns.filter { $0.table == StoreTables.audit.name }.map(\.column)
        let auditSQL = StoreTables.audit.select(
            "WHERE " + auditColumns.map { "\($0) LIKE ? ESCAPE '!'" }.joined(separator: " OR ") + " ORDER BY id")
        for var entry in try auditEntries(auditSQL, Array(repeating: .text(pattern), count: auditColumns.count)) {
            var changed = false
            func apply(_ text: inout String?, _ column: String) {
                guard let old = text, let new = rewrite(old), new != old else { return }
                text = new
                changed = true
                counts["iap_audit.\(column)", default: 0] += 1
            }
            var command: String? = entry.command
            apply(&command, "command")
            entry.command = command ?? entry.command
            apply(&entry.reason, "reason")
            apply(&entry.ticket, "ticket")
            apply(&entry.before, "before_json")
            apply(&entry.after, "after_json")
            guard changed else { continue }
            let values: [SQLValue] = [
                .text(entry.command), SQLValue(entry.reason), SQLValue(entry.ticket), SQLValue(entry.before),
                SQLValue(entry.after), .text(RowDigest.audit(entry)), .int(entry.id),
            ]
            try expectOneRow(try write(StoreSQL.rewriteAuditTexts, values).changed, "audit row", id: entry.id)
            result.redigestedAudit += 1
        }
        // The ledger: only iapctl's own detail (Apple's signed raw is kept as received).
        for row in try checkedLedgerRows(StoreSQL.ledgerDetailLike, [.text(pattern)]) {
            guard let detail = row.entry.detail, let new = rewrite(detail), new != detail else { continue }
            try updateLedger(id: row.entry.id, verdict: row.entry.verdict, detail: new)
            counts["iap_ledger.detail", default: 0] += 1
            result.redigestedLedger += 1
        }
        // Every other text marked as naming users: no digest to keep.
        for (table, column) in StoreSchema.userTextColumns
        where table != StoreTables.audit.name && table != StoreTables.ledger.name {
            let found = try query("SELECT id, \(column) FROM \(table) WHERE \(column) LIKE ? ESCAPE '!'", [.text(pattern)])
            for row in found.rows {
                let id = try row.int(0)
                guard let text = try row.optionalText(1), let new = rewrite(text), new != text else { continue }
                _ = try write("UPDATE \(table) SET \(column) = ? WHERE id = ?", [.text(new), .int(id)])
                counts["\(table).\(column)", default: 0] += 1
            }
        }
        result.texts =
            StoreSchema.userTextColumns.compactMap { table, column in
                counts["\(table).\(column)"].map { ("\(table).\(column)", $0) }
            } + (counts["iap_audit.entity_key"].map { [("iap_audit.entity_key", $0)] } ?? [])
        return result
    }

    // MARK: customer notes

    public func insertCustomerNote(_ note: CustomerNote) throws(StoreError) -> Int64 {
        try insert(StoreTables.customerNotes, note)
    }

    public func customerNotes(userId: String) throws(StoreError) -> [CustomerNote] {
        try rows(StoreTables.customerNotes, StoreSQL.customerNotesByUser, [.text(userId)])
    }

    // MARK: audit

    public func appendAudit(_ entry: AuditEntry) throws(StoreError) -> Int64 {
        try insert(StoreTables.audit, Self.auditRow(entry))
    }

    /// Audit rows of ledger row `ledgerId` whose ids nobody needs, up to 8 in one INSERT (an
    /// event's audit rows in one round trip instead of one each), in order.
    private func appendAudits(_ audits: [AuditEntry], ledgerId: Int64) throws(StoreError) {
        var start = 0
        while start < audits.count {
            let count = Swift.min(StoreSQL.auditInserts.count, audits.count - start)
            var values: [SQLValue] = []
            for var audit in audits[start..<(start + count)] {
                audit.ledgerId = ledgerId
                values += StoreTables.audit.insertValues(Self.auditRow(audit))
            }
            _ = try write(StoreSQL.auditInserts[count - 1], values)
            start += count
        }
    }

    public func audit(entity: EntityKind, key: String) throws(StoreError) -> [AuditEntry] {
        try auditEntries(StoreSQL.auditByEntity, [.text(entity.rawValue), .text(key)])
    }

    /// Audit entries, each checked against its row digest.
    private func auditEntries(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> [AuditEntry] {
        try rows(StoreTables.audit, sql, values).map { row throws(StoreError) in
            guard RowDigest.audit(row.entry) == row.rowDigest else {
                throw .corrupt(table: "iap_audit", id: row.entry.id, what: "its fields do not match its row_digest")
            }
            return row.entry
        }
    }

    /// The row to store for `entry`: every column plain, with its digest.
    static func auditRow(_ entry: AuditEntry) -> AuditRow { AuditRow(entry: entry, rowDigest: RowDigest.audit(entry)) }

    public func auditEntries(matching filter: AuditFilter) throws(StoreError) -> [AuditEntry] {
        let values: [SQLValue] = [
            SQLValue(filter.actor), SQLValue(filter.actor), SQLValue(filter.since), SQLValue(filter.since),
            SQLValue(filter.ticket), SQLValue(filter.ticket), .int(try limitValue(filter.limit)),
        ]
        return try auditEntries(StoreSQL.auditMatching, values)
    }

    public func auditEntry(id: Int64) throws(StoreError) -> AuditEntry? {
        try auditEntries(StoreSQL.auditById, [.int(id)]).first
    }

    // MARK: checkpoints

    public func checkpoint(named name: String) throws(StoreError) -> Checkpoint? {
        try rows(StoreTables.checkpoints, locking(StoreSQL.checkpointByName), [.text(name)]).first
    }

    public func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError) {
        if let saved = try self.checkpoint(named: checkpoint.name) {
            var row = checkpoint
            row.id = saved.id
            try update(StoreTables.checkpoints, row, "checkpoint", id: saved.id)
        } else {
            _ = try insert(StoreTables.checkpoints, checkpoint)
        }
    }

    public func deleteCheckpoint(named name: String) throws(StoreError) -> Bool {
        try write(StoreSQL.deleteCheckpoint, [.text(name)]).changed > 0
    }

    // MARK: refund answers

    public func claimRefundAnswer(_ claim: RefundAnswerClaim) throws(StoreError) -> Bool {
        // As claimNotification: a concurrent holder's uncommitted row makes this INSERT wait.
        do {
            _ = try insert(StoreTables.refundAnswers, claim)
            return true
        } catch .conflict {
            return false
        }
    }

    public func refundAnswerClaim(requestKey: String) throws(StoreError) -> RefundAnswerClaim? {
        try rows(StoreTables.refundAnswers, locking(StoreSQL.refundAnswerByKey), [.text(requestKey)]).first
    }

    public func refundAnswerClaims() throws(StoreError) -> [RefundAnswerClaim] {
        try rows(StoreTables.refundAnswers, StoreSQL.refundAnswersAll, [])
    }

    public func updateRefundAnswerClaim(_ claim: RefundAnswerClaim) throws(StoreError) {
        try update(StoreTables.refundAnswers, claim, "refund answer", id: claim.id)
    }

    public func takeOverRefundAnswerClaim(_ current: RefundAnswerClaim, by: String, at: Int64, rule: String?)
        throws(StoreError) -> Bool
    {
        try write(
            StoreSQL.takeOverRefundAnswer,
            [
                .int(at), .text(by), SQLValue(rule), .int(current.id), .text(current.state.rawValue),
                .int(current.claimedAt),
            ]
        ).changed == 1
    }

    // MARK: misc

    public func counts() throws(StoreError) -> StoreCounts {
        guard let row = try query(StoreSQL.counts, []).rows.first else {
            throw StoreError.failure("counts returned no row [SQL: \(StoreSQL.counts)]")
        }
        return StoreCounts(
            orders: Int(try row.int(0)), contracts: Int(try row.int(1)), ledger: Int(try row.int(2)),
            unmatched: Int(try row.int(3)), audit: Int(try row.int(4)))
    }

    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try savepoint(keep: true, body)
    }

    /// Runs `body` in a savepoint; releases it when `keep` and `body` returns, else rolls back to it.
    public func savepoint<T>(keep: Bool, _ body: () throws -> T) throws -> T {
        try checkOpen()
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        // The name depends on the nesting depth only: no value is ever part of the SQL.
        let name = "iapctl_sp\(savepointDepth)"
        try connection.execute(SQLDialect.fill(dialect.savepoint, "name", name))
        let result: T
        do {
            result = try body()
        } catch {
            try rollback(to: name)
            throw error
        }
        if keep {
            if dialect.releaseKeptSavepoint {
                try connection.execute(SQLDialect.fill(dialect.releaseSavepoint, "name", name))
            }
        } else {
            try rollback(to: name)
        }
        return result
    }

    // MARK: helpers

    private func rollback(to name: String) throws(StoreError) {
        locked = LockedRows()
        // After a deadlock or a lost connection the server has rolled everything back, savepoints
        // included: the caller's error is the one to report, and the transaction cannot go on.
        if let aborted = connection.transactionAborted { throw aborted }
        // SQLite may already have rolled the whole transaction back (e.g. after SQLITE_FULL).
        guard connection.inTransaction else { return }
        try connection.execute(SQLDialect.fill(dialect.rollbackToSavepoint, "name", name))
        if dialect.releaseAfterRollbackTo {
            try connection.execute(SQLDialect.fill(dialect.releaseSavepoint, "name", name))
        }
    }

    private func checkOpen() throws(StoreError) {
        guard isOpen else {
            throw .failure("programmer error: store session used after its transaction ended")
        }
        // Statements after a server-side rollback would run outside any transaction: refuse them.
        if let aborted = connection.transactionAborted { throw aborted }
    }

    /// `sql` as a locking read in a write transaction (where the dialect has row locks).
    private func locking(_ sql: String) -> String {
        mode == .write ? sql + dialect.forUpdate : sql
    }

    func query(_ sql: String, _ values: [SQLValue], shaped: Bool = false) throws(StoreError) -> SQLResult {
        try checkOpen()
        return try connection.query(sql, values, shaped: shaped)
    }

    private func rows<Row>(_ table: SQLTable<Row>, _ sql: String, _ values: [SQLValue]) throws(StoreError) -> [Row] {
        try table.decode(query(sql, values))
    }

    private func write(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64) {
        try checkWrite(sql)
        return try connection.run(sql, values)
    }

    private func checkWrite(_ sql: String) throws(StoreError) {
        try checkOpen()
        guard mode == .write else {
            throw .failure("programmer error: write inside a read transaction [SQL: \(sql)]")
        }
    }

    /// `row` inserted, with the id the engine gave it.
    private func inserting<Row>(_ table: SQLTable<Row>, _ row: Row, id: WritableKeyPath<Row, Int64>) throws(StoreError) -> Row {
        var inserted = row
        inserted[keyPath: id] = try insert(table, row)
        return inserted
    }

    /// Inserts `row` (its id is the engine's) and returns the new id.
    private func insert<Row>(_ table: SQLTable<Row>, _ row: Row) throws(StoreError) -> Int64 {
        try write(table.insert, table.insertValues(row)).insertId
    }

    /// Rewrites every column of the row with its id; it must exist.
    private func update<Row>(_ table: SQLTable<Row>, _ row: Row, _ what: String, id: Int64) throws(StoreError) {
        try expectOneRow(try write(table.update, table.updateValues(row)).changed, what, id: id)
    }

    private func expectOneRow(_ changed: Int64, _ what: String, id: Int64) throws(StoreError) {
        guard changed == 1 else { throw .failure("no \(what) with id \(id) to update") }
    }

    /// The statement for the filters present in `values`, and its values (then the limit).
    private func filtered(
        _ variants: [String], values: [String?], limit: Int?
    ) throws(StoreError) -> (String, [SQLValue]) {
        var mask = 0
        var bound: [SQLValue] = []
        for (bit, value) in values.enumerated() {
            if let value {
                mask |= 1 << bit
                bound.append(.text(value))
            }
        }
        bound.append(.int(try limitValue(limit)))
        return (variants[mask], bound)
    }

    private func limitValue(_ limit: Int?) throws(StoreError) -> Int64 {
        guard let limit else { return dialect.noLimit }
        guard limit >= 0 else { throw .failure("invalid limit \(limit): must be 0 or more") }
        return Int64(limit)
    }

    /// 0 stays 0; otherwise the next power of two up to 256, then the next multiple of 256.
    public static func paddedCount(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        if count > 256 { return (count + 255) / 256 * 256 }
        var size = 1
        while size < count { size <<= 1 }
        return size
    }
}

/// The contracts and orders a write transaction locked, by their unique key, as they are now.
private struct LockedRows {
    private(set) var contracts: [String: Contract] = [:]
    private(set) var orders: [String: Order] = [:]
    /// Each locked row's key by its id (an update may change the key).
    private var contractKeys: [Int64: String] = [:]
    private var orderKeys: [Int64: String] = [:]

    mutating func add(_ contract: Contract) {
        contracts[contract.contractId] = contract
        contractKeys[contract.id] = contract.contractId
    }

    mutating func add(_ order: Order) {
        orders[order.no] = order
        orderKeys[order.id] = order.no
    }

    /// After `contract` was written: the copy of a locked row is replaced; any other row stays out.
    mutating func updated(_ contract: Contract) {
        guard let old = contractKeys[contract.id] else { return }
        contracts[old] = nil
        add(contract)
    }

    /// After `order` was written: the copy of a locked row is replaced; any other row stays out.
    mutating func updated(_ order: Order) {
        guard let old = orderKeys[order.id] else { return }
        orders[old] = nil
        add(order)
    }
}
