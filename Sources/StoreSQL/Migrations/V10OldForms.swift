import CryptoDigest
import IAPFoundation
import SubscriptionEngine

/// Schema v10's data step (``SchemaStep/convertStoredForms``), the same Swift code on every
/// backend, and the only reader of the stored forms before it (the other files of this folder:
/// ``LedgerPacking`` with ``LegacyLedgerFormat``, ``TextPacking``, ``DetailReference``; their
/// writers stay only so tests can build rows of those forms). Every row of an older form is
/// rewritten in the current one (Sources/StoreSQL/FORMATS.md):
///
/// - audit rows: command, reason, before/after out of `packed` into their plain columns; `row_digest`;
/// - ledger rows: the detail out of `detail_packed` (packed text or a reference to the row's audit
///   rows), the raw out of `raw` or `raw_packed` (format versions 1–4, certificate chains from
///   `iap_ledger_chains`, each checked against its SHA-256 before use) into one zstd frame in
///   `raw_zstd`; `row_digest`;
/// - facts: the body out of `body_packed`, a digest still in hex (schema v7) in base64url; each
///   converted fact's digest checked against its fields.
///
/// Rows are read in batches by id. A converted row is never selected again (its `row_digest` is
/// set, its packed column NULL), so the step can run again after an interruption; the columns the
/// older forms used are read only while they exist. A row that cannot be read in its old form
/// refuses the migration, naming table and id (``StoreError/corrupt(table:id:what:)``). Old forms
/// are zstd frames and every converted raw becomes one: without libzstd no row is converted (nor
/// taken for corrupt), the migration is refused (``StoreError/libraryUnavailable(_:)``).
public enum StoredFormConversion {
    static let batch = 500

    /// Converts every row of an older form; `afterBatch` runs after each batch's updates (MySQL
    /// commits there).
    public static func run(_ connection: any SQLConnection, afterBatch: () throws(StoreError) -> Void) throws(StoreError) {
        try convertAudit(connection, afterBatch: afterBatch)
        try convertLedger(connection, afterBatch: afterBatch)
        try convertFacts(connection, afterBatch: afterBatch)
    }

    // MARK: audit

    static let auditColumns =
        "id, at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, ledger_id"

    /// An audit row's plain columns, in ``auditColumns``' order.
    static func auditEntry(_ row: SQLRow) throws(StoreError) -> AuditEntry {
        let id = try row.int(0)
        guard let entity = EntityKind(rawValue: try row.text(6)) else {
            throw .corrupt(table: "iap_audit", id: id, what: "its entity is not one iapctl writes")
        }
        return AuditEntry(
            id: id, at: try row.int(1), actor: try row.text(2), command: try row.text(3), reason: try row.optionalText(4),
            ticket: try row.optionalText(5), entity: entity, key: try row.text(7), before: try row.optionalText(8),
            after: try row.optionalText(9), ledgerId: try row.optionalInt(10))
    }

    private static func convertAudit(_ connection: any SQLConnection, afterBatch: () throws(StoreError) -> Void)
        throws(StoreError)
    {
        let packed = try hasColumn(connection, "iap_audit", "packed")
        try each(
            connection,
            "SELECT \(auditColumns)\(packed ? ", packed" : "") FROM iap_audit WHERE row_digest = '' AND id > ?",
            afterBatch: afterBatch
        ) { row throws(StoreError) in
            try ZstdCodec.requireLibrary()
            var entry = try auditEntry(row)
            if packed, let bytes = try row.optionalBytes(11) {
                let texts: [String?]
                do {
                    texts = try TextPacking.unpack(bytes, .audit, count: 4, context: [entry.key, String(entry.at)])
                } catch {
                    throw .corrupt(table: "iap_audit", id: entry.id, what: "its packed before/after cannot be read (\(error))")
                }
                entry.before = texts[0]
                entry.after = texts[1]
                entry.command = texts[2] ?? ""
                entry.reason = texts[3]
            }
            return (
                "UPDATE iap_audit SET command = ?, reason = ?, before_json = ?, after_json = ?, row_digest = ?"
                    + (packed ? ", packed = NULL" : "") + " WHERE id = ?",
                [
                    .text(entry.command), SQLValue(entry.reason), SQLValue(entry.before), SQLValue(entry.after),
                    .text(RowDigest.audit(entry)),
                ]
            )
        }
    }

    // MARK: ledger

    private static func convertLedger(_ connection: any SQLConnection, afterBatch: () throws(StoreError) -> Void)
        throws(StoreError)
    {
        let rawText = try hasColumn(connection, "iap_ledger", "raw")
        let rawPacked = try hasColumn(connection, "iap_ledger", "raw_packed")
        let detailPacked = try hasColumn(connection, "iap_ledger", "detail_packed")
        let chains = try hasColumn(connection, "iap_ledger_chains", "chain") ? ChainReader(connection: connection) : nil
        let select =
            "SELECT id, received_at, source, notification_uuid, notification_type, subtype, transaction_id, "
            + "original_transaction_id, app_account_token, signed_date, verdict, detail, raw_of, "
            + (rawText ? "raw" : "NULL") + ", " + (rawPacked ? "raw_packed" : "NULL") + ", "
            + (detailPacked ? "detail_packed" : "NULL") + " FROM iap_ledger WHERE row_digest = '' AND id > ?"
        try each(connection, select, afterBatch: afterBatch) { row throws(StoreError) in
            try ZstdCodec.requireLibrary()
            let id = try row.int(0)
            guard let source = EventSource(rawValue: try row.text(2)), let verdict = Verdict(rawValue: try row.text(10)) else {
                throw .corrupt(table: "iap_ledger", id: id, what: "its source or verdict is not one iapctl writes")
            }
            var entry = LedgerEntry(
                receivedAt: try row.int(1), source: source, notificationUUID: try row.optionalText(3),
                notificationType: try row.optionalText(4), subtype: try row.optionalText(5),
                transactionId: try row.optionalText(6), originalTransactionId: try row.optionalText(7),
                appAccountToken: try row.optionalText(8), signedDate: try row.optionalInt(9), verdict: verdict,
                detail: try row.optionalText(11), raw: "")
            entry.id = id
            let context = [entry.notificationUUID, entry.transactionId, entry.originalTransactionId, entry.appAccountToken]
            if let stored = try row.optionalBytes(15) {
                entry.detail = try detail(stored, ledgerId: id, context: context, connection)
            }
            let rawOf = try row.optionalInt(12)
            var frame: [UInt8]?
            if rawOf == nil {
                let raw: [UInt8]
                if let packed = try row.optionalBytes(14) {
                    guard let chains else {
                        throw .corrupt(table: "iap_ledger", id: id, what: "its packed raw needs iap_ledger_chains, which is gone")
                    }
                    raw = try chains.unpack(packed, context: context, ledgerId: id)
                } else {
                    raw = Array((try row.optionalText(13) ?? "").utf8)
                }
                guard let made = ZstdCodec.rawFrame(raw) else { throw .failure("zstd could not compress the raw") }
                frame = made
            }
            return (
                "UPDATE iap_ledger SET detail = ?, raw_zstd = ?, row_digest = ? WHERE id = ?",
                [
                    SQLValue(entry.detail), frame.map(SQLValue.bytes) ?? .null,
                    .text(RowDigest.ledger(entry, rawOf: rawOf, rawZstd: frame)),
                ]
            )
        }
    }

    /// A detail as schema v9 stored it in `detail_packed`: packed text, or a reference to the
    /// ledger row's audit rows (already converted: read from their plain columns).
    private static func detail(_ stored: [UInt8], ledgerId: Int64, context: [String?], _ connection: any SQLConnection)
        throws(StoreError) -> String?
    {
        if DetailReference.isReference(stored) {
            let parsed = try DetailReference.parse(stored)
            let rows = try connection.query(
                "SELECT \(auditColumns) FROM iap_audit WHERE ledger_id = ? AND id >= ? ORDER BY id",
                [
                    .int(ledgerId), .int(parsed.firstAuditId ?? 0),
                ]
            ).rows
            let audits = try rows.map { row throws(StoreError) in try auditEntry(row) }
            do {
                return try DetailReference.detail(stored, audits: audits, row: ledgerId)
            } catch {
                throw .corrupt(table: "iap_ledger", id: ledgerId, what: "its detail reference cannot be read (\(error))")
            }
        }
        do {
            return try TextPacking.unpack(stored, .detail, count: 1, context: context)[0]
        } catch {
            throw .corrupt(table: "iap_ledger", id: ledgerId, what: "its packed detail cannot be read (\(error))")
        }
    }

    /// Certificate chains by digest, each checked against its SHA-256 when first read.
    final class ChainReader {
        let connection: any SQLConnection
        var checked: [[UInt8]: [UInt8]] = [:]

        init(connection: any SQLConnection) { self.connection = connection }

        func chain(_ digest: [UInt8]) throws(StoreError) -> [UInt8]? {
            if let chain = checked[digest] { return chain }
            guard let row = try connection.query("SELECT id, chain FROM iap_ledger_chains WHERE digest = ?", [.bytes(digest)]).rows.first
            else { return nil }
            let chain = try row.optionalBytes(1) ?? []
            guard SHA256Digest.of(chain) == digest else {
                throw .corrupt(
                    table: "iap_ledger_chains", id: try row.int(0), what: "its chain does not match its SHA-256 digest")
            }
            checked[digest] = chain
            return chain
        }

        func unpack(_ packed: [UInt8], context: [String?], ledgerId: Int64) throws(StoreError) -> [UInt8] {
            do {
                return try LedgerPacking.unpackBytes(
                    packed, chain: { digest in try self.chain(digest) }, context: TextPacking.usableContext(context))
            } catch let error as StoreError {
                throw error
            } catch {
                throw .corrupt(table: "iap_ledger", id: ledgerId, what: "its packed raw cannot be read (\(error))")
            }
        }
    }

    // MARK: facts

    private static func convertFacts(_ connection: any SQLConnection, afterBatch: () throws(StoreError) -> Void)
        throws(StoreError)
    {
        let packed = try hasColumn(connection, "iap_facts", "body_packed")
        let select =
            "SELECT id, kind, fact_key, original_transaction_id, signed_date, source, digest, body, "
            + (packed ? "body_packed" : "NULL") + " FROM iap_facts WHERE ("
            + (packed ? "body_packed IS NOT NULL OR " : "") + "length(digest) = 32) AND id > ?"
        try each(connection, select, afterBatch: afterBatch) { row throws(StoreError) in
            try ZstdCodec.requireLibrary()
            let id = try row.int(0)
            guard let kind = Fact.Kind(rawValue: try row.text(1)), let source = EventSource(rawValue: try row.text(5)) else {
                throw .corrupt(table: "iap_facts", id: id, what: "its kind or source is not one iapctl writes")
            }
            var fact = Fact(
                kind: kind, key: try row.text(2), originalTransactionId: try row.text(3), signedDate: try row.int(4),
                source: source, body: try row.text(7))
            if let bytes = try row.optionalBytes(8) {
                do {
                    fact.body =
                        try TextPacking.unpack(bytes, .factBody, count: 1, context: [fact.key, fact.originalTransactionId])[0] ?? ""
                } catch {
                    throw .corrupt(table: "iap_facts", id: id, what: "its packed body cannot be read (\(error))")
                }
            }
            var digest = try row.text(6)
            if digest.utf8.count == 32, let converted = FactDigest.hexToBase64URL(digest) { digest = converted }
            guard digest == FactDigest.of(fact) else {
                throw .corrupt(table: "iap_facts", id: id, what: "its body does not match its digest")
            }
            return (
                "UPDATE iap_facts SET body = ?, digest = ?" + (packed ? ", body_packed = NULL" : "") + " WHERE id = ?",
                [.text(fact.body), .text(digest)]
            )
        }
    }

    // MARK: helpers

    /// Whether `table` has `column` (a statement naming it prepares).
    static func hasColumn(_ connection: any SQLConnection, _ table: String, _ column: String) throws(StoreError) -> Bool {
        do {
            _ = try connection.query("SELECT \(column) FROM \(table) WHERE 1 = 0", [])
            return true
        } catch .busy(let message, let reason) {
            throw .busy(message, reason)
        } catch .unavailable(let message) {
            throw .unavailable(message)
        } catch {
            return false
        }
    }

    /// Runs `select` (its last placeholder the id to start after) batch by batch in id order; for
    /// each row, `update` gives the statement and its values (the row's id is bound last).
    private static func each(
        _ connection: any SQLConnection, _ select: String, afterBatch: () throws(StoreError) -> Void,
        update: (SQLRow) throws(StoreError) -> (String, [SQLValue])?
    ) throws(StoreError) {
        var after: Int64 = 0
        while true {
            let rows = try connection.query(select + " ORDER BY id LIMIT \(batch)", [.int(after)]).rows
            for row in rows {
                let id = try row.int(0)
                after = id
                if let (sql, values) = try update(row) { _ = try connection.run(sql, values + [.int(id)]) }
            }
            try afterBatch()
            if rows.count < batch { return }
        }
    }
}
