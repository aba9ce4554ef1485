/// The SQL every backend runs, generated from the column tables (``StoreTables``) in the dialect all
/// backends share. Only `?` placeholders: values are always bound, never spliced in. What differs
/// between engines is data in ``SQLDialect``.
public enum StoreSQL {
    private static let orders = StoreTables.orders
    private static let contracts = StoreTables.contracts
    private static let ledger = StoreTables.ledger
    private static let audit = StoreTables.audit

    // MARK: orders
    public static let orderByNo = orders.select("WHERE no = ?")
    public static let orderByTradeNo = orders.select("WHERE trade_no = ?")
    public static let ordersByOriginNo = orders.select("WHERE origin_no = ? ORDER BY purchase_date, id")

    /// `orders(matching:)` per combination of present filters (bit 0 user, 1 status, 2 product,
    /// 3 origin). Placeholders follow that order, then `LIMIT ?`.
    public static let ordersMatching: [String] = (0..<16).map { mask in
        filtered(select: orders.select(), columns: ["user_id", "status", "product_id", "origin_no"], mask: mask)
    }

    // MARK: contracts
    public static let contractById = contracts.select("WHERE contract_id = ?")
    /// A contract row rewritten by anyone but the engine's snapshot keeping: its snapshot is cleared.
    public static let contractUpdateClearingSnapshot =
        "UPDATE member_contracts SET \(contracts.writtenNames.map { "\($0) = ?" }.joined(separator: ", ")), snapshot = NULL WHERE id = ?"
    /// The snapshot and what it is checked against: the number and the highest id of the
    /// subscription's facts (the subscription's id bound twice, then the contract's).
    public static let contractSnapshot = """
        SELECT snapshot, (SELECT count(*) FROM iap_facts WHERE original_transaction_id = ?), \
        (SELECT coalesce(max(id), 0) FROM iap_facts WHERE original_transaction_id = ?) \
        FROM member_contracts WHERE contract_id = ?
        """
    /// The number and the highest id of a subscription's facts.
    public static let factsSummary =
        "SELECT count(*), coalesce(max(id), 0) FROM iap_facts WHERE original_transaction_id = ?"
    public static let saveContractSnapshot = "UPDATE member_contracts SET snapshot = ? WHERE contract_id = ?"
    /// The snapshots of an order's subscriptions (its new `origin_no`, bound first, and the one it had) are cleared.
    public static let clearSnapshotsOfOrder = """
        UPDATE member_contracts SET snapshot = NULL WHERE snapshot IS NOT NULL \
        AND contract_id IN (?, (SELECT origin_no FROM orders WHERE id = ?))
        """
    public static let clearSnapshot = "UPDATE member_contracts SET snapshot = NULL WHERE snapshot IS NOT NULL AND contract_id = ?"
    /// `contracts(matching:)` per combination of filters (bit 0 user, 1 status, 2 product), then `LIMIT ?`.
    public static let contractsMatching: [String] = (0..<8).map { mask in
        filtered(select: contracts.select(), columns: ["user_id", "status", "product_id"], mask: mask)
    }

    // MARK: ledger
    /// The first row holding this exact raw frame for this notification UUID: a
    /// re-delivery of identical bytes refers to it (`raw_of`).
    public static let ledgerFirstCopy = """
        SELECT id FROM iap_ledger WHERE notification_uuid = ? AND raw_of IS NULL AND raw_zstd = ? \
        ORDER BY id LIMIT 1
        """
    public static let updateLedger = "UPDATE iap_ledger SET verdict = ?, detail = ?, row_digest = ? WHERE id = ?"
    public static let ledgerById = ledger.select("WHERE id = ?")
    /// The row that processed a notification: the newest that is not itself a `duplicate` (so a
    /// third delivery points at the item applied, not at the second delivery), else the newest.
    public static let processedLedger = ledger.select(
        "WHERE notification_uuid = ? AND verdict NOT IN ('rejected', 'unmatched') "
            + "ORDER BY CASE WHEN verdict = 'duplicate' THEN 1 ELSE 0 END, id DESC LIMIT 1")
    /// Exactly-once: one row per notification UUID that was processed (any verdict but
    /// `rejected`/`unmatched`), inserted before the work in the same transaction.
    public static let deleteClaim = "DELETE FROM iap_notification_claims WHERE notification_uuid = ?"
    /// The claim where an insert can return a result (``SQLDialect/insertReturning``), returning
    /// whether a ledger row of the UUID holds a raw (else ``ledgerFirstCopy`` can find nothing):
    /// the claim's value, then the UUID again.
    public static let claimReturningCopy =
        StoreTables.claims.insert
        + " RETURNING EXISTS (SELECT 1 FROM iap_ledger WHERE notification_uuid = ? AND raw_of IS NULL)"
    /// The notification UUIDs an older schema's ledger already processed: the claims migration
    /// inserts them (each dialect with its own `INSERT … IGNORE`).
    public static let processedNotificationUUIDs = """
        SELECT DISTINCT notification_uuid FROM iap_ledger \
        WHERE notification_uuid IS NOT NULL AND verdict NOT IN ('rejected', 'unmatched')
        """
    /// Unmatched rows not superseded by a later row that processed the same notification UUID.
    public static let unresolvedUnmatched = """
        FROM iap_ledger AS l WHERE l.verdict = 'unmatched' AND NOT EXISTS (\
        SELECT 1 FROM iap_ledger AS later WHERE later.notification_uuid = l.notification_uuid \
        AND later.id > l.id AND later.verdict NOT IN ('rejected', 'unmatched'))
        """
    public static let unmatchedLedger = "SELECT \(ledger.selectList(alias: "l")) \(unresolvedUnmatched) ORDER BY l.id LIMIT ?"

    /// Ledger rows mentioning any of the ids; each list has `counts` placeholders (0 = clause left out).
    public static func ledgerMentioning(counts: (Int, Int, Int)) -> String {
        var clauses: [String] = []
        for (column, count) in [
            ("transaction_id", counts.0), ("original_transaction_id", counts.1), ("app_account_token", counts.2),
        ] where count > 0 {
            clauses.append("\(column) IN (\(placeholders(count)))")
        }
        return ledger.select("WHERE \(clauses.joined(separator: " OR ")) ORDER BY signed_date, id")
    }

    /// Verified ledger rows (any verdict but `rejected`) of `count` notification types, in signedDate order.
    public static func ledgerOfTypes(count: Int) -> String {
        ledger.select(
            "WHERE notification_type IN (\(placeholders(count))) AND verdict <> 'rejected' ORDER BY signed_date, id")
    }

    /// Locks the existing rows of `table` whose unique `column` is one of `count` values, in the
    /// order the values are given (a batch's fixed lock order; for dialects with row locks): one
    /// point look-up on the unique key per value, so no plan can scan the table instead. (An `IN`
    /// list of 256 values was run as a locking scan of the whole table while its statistics were
    /// stale, which waits for every row another batch holds: four processes took turns.)
    /// `oneSortedScan` (``SQLDialect/locksRowsInOneSortedScan``): one look-up of every value, the
    /// rows locked in the key's order.
    public static func lockRows(
        table: String, column: String, count: Int, forUpdate: String, oneSortedScan: Bool = false
    ) -> String {
        guard !oneSortedScan else {
            return "SELECT id FROM \(table) WHERE \(column) IN (\(placeholders(count))) ORDER BY \(column)\(forUpdate)"
        }
        return Array(repeating: "(SELECT id FROM \(table) WHERE \(column) = ?\(forUpdate))", count: count)
            .joined(separator: " UNION ALL ")
    }
    /// The rows of `table` with one of `count` ids (a plain read: it never waits for a lock).
    public static func rowsById<Row>(_ table: SQLTable<Row>, count: Int) -> String {
        table.select("WHERE id IN (\(placeholders(count)))")
    }

    // MARK: refund answers
    public static let refundAnswerByKey = StoreTables.refundAnswers.select("WHERE request_key = ?")
    public static let refundAnswersAll = StoreTables.refundAnswers.select("ORDER BY id")
    /// Takes over a claim only as it was read (same state and claimedAt): a compare-and-set.
    public static let takeOverRefundAnswer =
        "UPDATE iap_refund_answers SET state = 'claimed', claimed_at = ?, claimed_by = ?, rule = ?, body = NULL, "
        + "apple_status = NULL, apple_error = NULL, audit_id = NULL, answered_at = NULL "
        + "WHERE id = ? AND state = ? AND claimed_at = ?"

    // MARK: checkpoints
    public static let checkpointByName = StoreTables.checkpoints.select("WHERE name = ?")
    public static let deleteCheckpoint = "DELETE FROM iap_checkpoints WHERE name = ?"

    // MARK: audit
    public static let auditByEntity = audit.select("WHERE entity = ? AND entity_key = ? ORDER BY id")
    public static let auditById = audit.select("WHERE id = ?")
    /// The audit rows a ledger row's changes wrote (its detail may refer to them), oldest first.
    public static let auditByLedger = audit.select("WHERE ledger_id = ? ORDER BY id")
    /// The same from a given id on (by the primary key: no index on `ledger_id` needed): ledger id,
    /// first audit id, count.
    public static let auditByLedgerFrom = audit.select("WHERE ledger_id = ? AND id >= ? ORDER BY id LIMIT ?")
    /// The id the next audit row gets where ids follow the largest (``SQLDialect/nextIdFollowsLargest``).
    public static let nextAuditId = "SELECT coalesce(max(id), 0) + 1 FROM iap_audit"
    /// Audit rows inserted together, by row count (1…8): an event's audit rows in one round trip.
    public static let auditInserts: [String] = (1...8).map { StoreTables.audit.insert(rows: $0) }
    /// Each filter is bound twice (`? IS NULL OR …`): actor, since, ticket; then `LIMIT ?`.
    public static let auditMatching = audit.select(
        "WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR at >= ?) AND (? IS NULL OR ticket = ?) ORDER BY id DESC LIMIT ?")

    // MARK: facts
    /// A fact unless one with its key and digest is stored: one round trip (not a look-up
    /// and an insert), the rows it changed telling which. Values: the fact row's written
    /// columns, then its key and digest. (A concurrent insert of the same fact still meets the
    /// unique key: ``StoreError/conflict(_:)``, as before.)
    public static let insertFactIfNew =
        "INSERT INTO iap_facts (\(StoreTables.facts.writtenNames.joined(separator: ", "))) SELECT "
        + placeholders(StoreTables.facts.writtenNames.count)
        + " FROM (SELECT 1) AS one WHERE NOT EXISTS (SELECT 1 FROM iap_facts WHERE fact_key = ? AND digest = ?)"
    public static let factsByOriginal = StoreTables.facts.select("WHERE original_transaction_id = ? ORDER BY signed_date, id")
    public static let factsByOriginalSince = StoreTables.facts.select(
        "WHERE original_transaction_id = ? AND signed_date >= ? ORDER BY signed_date, id")
    /// The subscriptions whose transaction facts' canonical JSON body holds a pattern (`appTransactionId`).
    public static let originalsByFactBody = """
        SELECT DISTINCT original_transaction_id FROM iap_facts WHERE kind = 'transaction' AND body LIKE ? \
        ORDER BY original_transaction_id
        """

    // MARK: overrides
    public static let customerNotesByUser = StoreTables.customerNotes.select("WHERE user_id = ? ORDER BY id DESC")
    public static let overridesByEntity = StoreTables.overrides.select("WHERE entity = ? AND entity_key = ? ORDER BY id")
    public static let overridesInForce = StoreTables.overrides.select(
        "WHERE original_transaction_id = ? AND lifted_at IS NULL ORDER BY id")

    // MARK: grants
    public static let grantById = StoreTables.grants.select("WHERE id = ?")
    /// Grants of a user and/or product (NULL: any), oldest first.
    public static let grantsMatching = StoreTables.grants.select(
        "WHERE (? IS NULL OR user_id = ?) AND (? IS NULL OR product_id = ?) ORDER BY id")

    // MARK: forgetting a user
    public static let clearSnapshotsOfUser = "UPDATE member_contracts SET snapshot = NULL WHERE user_id = ?"
    /// Rewrites an audit row's texts and its digest (`users forget`).
    /// A customer note's audit row moved to the user's alias (`users forget`), with its new digest.
    public static let rekeyAuditRow = "UPDATE iap_audit SET entity_key = ?, row_digest = ? WHERE id = ?"
    public static let rewriteAuditTexts =
        "UPDATE iap_audit SET command = ?, reason = ?, ticket = ?, before_json = ?, after_json = ?, row_digest = ? WHERE id = ?"
    /// Ledger rows whose detail matches a LIKE pattern (escape character `!`).
    public static let ledgerDetailLike = ledger.select("WHERE detail LIKE ? ESCAPE '!' ORDER BY id")

    /// `text` as a LIKE pattern's literal part, with `!` as the escape character (`ESCAPE '!'`: a
    /// backslash would need escaping in MySQL's string literals).
    public static func likeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "!" || character == "%" || character == "_" { out.append("!") }
            out.append(character)
        }
        return out
    }

    // MARK: counts
    public static let counts = """
        SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM member_contracts), \
        (SELECT count(*) FROM iap_ledger), (SELECT count(*) \(unresolvedUnmatched)), \
        (SELECT count(*) FROM iap_audit)
        """

    // MARK: schema
    public static let migrationsTable = "iap_schema_migrations"
    /// The migrations table of the server backends (MySQL/MariaDB, PostgreSQL), each with its table
    /// options after the closing parenthesis (none: PostgreSQL's defaults).
    public static func serverMigrationsTableDDL(tableOptions: String = "") -> String {
        """
        CREATE TABLE IF NOT EXISTS iap_schema_migrations (
            version INT NOT NULL,
            name VARCHAR(255) NOT NULL,
            applied_at BIGINT NOT NULL,
            PRIMARY KEY (version)
        )
        """ + (tableOptions.isEmpty ? "" : " " + tableOptions)
    }
    public static let maxMigration = "SELECT coalesce(max(version), 0) FROM iap_schema_migrations"
    public static let recordMigration = "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"

    static func filtered(select: String, columns: [String], mask: Int) -> String {
        let conditions = columns.enumerated().filter { mask & (1 << $0.offset) != 0 }.map { "\($0.element) = ?" }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return select + whereClause + " ORDER BY id DESC LIMIT ?"
    }

    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
