import SubscriptionEngine

/// The data step of the packed-texts migration (``SchemaStep/repackTexts``), the same Swift code on
/// every backend: existing ledger details, audit before/after JSON and fact bodies are packed as
/// new rows store them (``StoredTexts``), and the facts' digests rewritten in base64url (``FactDigest``). Rows are read in batches by id; a row that cannot be
/// packed keeps its text (still readable), and a row already packed is skipped, so the step can
/// run again after an interruption.
public enum TextRepacking {
    static let batch = 500

    /// The index the ledger pass reads audit rows by, where the schema has none (SQLite).
    static let temporaryIndex = "iapctl_repack_audit_ledger_id"

    /// Packs every unpacked row; `afterBatch` runs after each batch's updates (MySQL commits there).
    /// `indexLedgerIds`: make an index on `iap_audit (ledger_id)` for the time of the step (SQLite,
    /// where the schema has none; MySQL's foreign key has one).
    public static func run(_ connection: any SQLConnection, indexLedgerIds: Bool, afterBatch: () throws(StoreError) -> Void)
        throws(StoreError)
    {
        if indexLedgerIds {
            try connection.execute("CREATE INDEX IF NOT EXISTS \(temporaryIndex) ON iap_audit (ledger_id)")
        }
        try each(
            connection,
            "SELECT id, detail, transaction_id, original_transaction_id, app_account_token, notification_uuid FROM iap_ledger "
                + "WHERE detail_packed IS NULL AND detail IS NOT NULL AND id > ?",
            afterBatch: afterBatch
        ) { row throws(StoreError) in
            let entry = LedgerEntry(
                receivedAt: 0, source: .apple, notificationUUID: try row.optionalText(5), transactionId: try row.optionalText(2),
                originalTransactionId: try row.optionalText(3), appAccountToken: try row.optionalText(4), verdict: .applied,
                raw: "")  // only the ids the detail may refer to
            let detail = try row.optionalText(1)
            // An applied item's detail that lists its changes: a reference to their audit rows.
            let audits = try StoreTables.audit.decode(connection.query(StoreSQL.auditByLedger, [.int(try row.int(0))])).map {
                row throws(StoreError) in try StoredTexts.auditEntry(row)
            }
            if let detail, let first = audits.first?.id,
                let reference = DetailReference.reference(detail, audits: audits, firstAuditId: first)
            {
                return ("UPDATE iap_ledger SET detail = NULL, detail_packed = ? WHERE id = ?", [.bytes(reference)])
            }
            let (text, packed) = StoredTexts.packDetail(detail, row: entry)
            guard let packed else { return nil }
            return ("UPDATE iap_ledger SET detail = ?, detail_packed = ? WHERE id = ?", [SQLValue(text), .bytes(packed)])
        }
        try each(
            connection,
            "SELECT id, before_json, after_json, entity_key, at, command, reason FROM iap_audit WHERE packed IS NULL AND id > ?",
            afterBatch: afterBatch
        ) { row throws(StoreError) in
            let entry = AuditEntry(
                at: try row.int(4), actor: "", command: try row.text(5), reason: try row.optionalText(6), entity: .order,
                key: try row.text(3), before: try row.optionalText(1), after: try row.optionalText(2))
            guard let packed = StoredTexts.auditRow(entry).packed else { return nil }
            return (
                "UPDATE iap_audit SET before_json = NULL, after_json = NULL, command = '', reason = NULL, packed = ? WHERE id = ?",
                [.bytes(packed)]
            )
        }
        try each(
            connection,
            "SELECT id, body, fact_key, original_transaction_id FROM iap_facts WHERE body_packed IS NULL AND id > ?",
            afterBatch: afterBatch
        ) { row throws(StoreError) in
            let fact = Fact(
                kind: .transaction, key: try row.text(2), originalTransactionId: try row.text(3), signedDate: 0, source: .apple,
                body: try row.text(1))
            let stored = StoredTexts.factRow(fact, digest: "")
            guard let packed = stored.bodyPacked else { return nil }
            return ("UPDATE iap_facts SET body = ?, body_packed = ? WHERE id = ?", [.text(stored.fact.body), .bytes(packed)])
        }
        // The digests as FactDigest writes them now (hex → base64url, the same 16 bytes).
        try each(
            connection, "SELECT id, digest FROM iap_facts WHERE length(digest) = 32 AND id > ?", afterBatch: afterBatch
        ) { row throws(StoreError) in
            guard let digest = FactDigest.hexToBase64URL(try row.text(1)) else { return nil }
            return ("UPDATE iap_facts SET digest = ? WHERE id = ?", [.text(digest)])
        }
        if indexLedgerIds { try connection.execute("DROP INDEX IF EXISTS \(temporaryIndex)") }
    }

    /// Runs `select` (its last placeholder the id to start after) batch by batch in id order; for
    /// each row, `update` gives the statement and its values (the row's id is bound last), or nil.
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
