/// The SQL both backends run, in the dialect SQLite and MySQL/MariaDB share (the schema names are
/// the same in both). Only `?` placeholders: values are always bound, never spliced in. Each backend
/// keeps its own few statements beside this (locking reads, schema introspection).
public enum StoreSQL {

    // MARK: orders
    public static let orderColumns = """
        id, no, user_id, product_id, status, trade_no, origin_no, purchase_date, expires_date, \
        environment, price, currency, created_at, updated_at
        """
    public static let orderByNo = "SELECT \(orderColumns) FROM orders WHERE no = ?"
    public static let orderByTradeNo = "SELECT \(orderColumns) FROM orders WHERE trade_no = ?"
    public static let ordersByOriginNo =
        "SELECT \(orderColumns) FROM orders WHERE origin_no = ? ORDER BY purchase_date, id"
    public static let insertOrder = """
        INSERT INTO orders (no, user_id, product_id, status, trade_no, origin_no, purchase_date, \
        expires_date, environment, price, currency, created_at, updated_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    public static let updateOrder = """
        UPDATE orders SET no = ?, user_id = ?, product_id = ?, status = ?, trade_no = ?, origin_no = ?, \
        purchase_date = ?, expires_date = ?, environment = ?, price = ?, currency = ?, created_at = ?, \
        updated_at = ? WHERE id = ?
        """

    /// `orders(matching:)` per combination of present filters (bit 0 user, 1 status, 2 product,
    /// 3 origin). Placeholders follow that order, then `LIMIT ?`.
    public static let ordersMatching: [String] = (0..<16).map { mask in
        filtered(
            select: "SELECT \(orderColumns) FROM orders",
            columns: ["user_id", "status", "product_id", "origin_no"], mask: mask)
    }

    // MARK: contracts
    public static let contractColumns = """
        id, contract_id, user_id, product_id, status, auto_renew, expires_date, environment, \
        next_product_id, last_event_date, created_at, updated_at
        """
    public static let contractById = "SELECT \(contractColumns) FROM member_contracts WHERE contract_id = ?"
    public static let insertContract = """
        INSERT INTO member_contracts (contract_id, user_id, product_id, status, auto_renew, expires_date, \
        environment, next_product_id, last_event_date, created_at, updated_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    public static let updateContract = """
        UPDATE member_contracts SET contract_id = ?, user_id = ?, product_id = ?, status = ?, auto_renew = ?, \
        expires_date = ?, environment = ?, next_product_id = ?, last_event_date = ?, created_at = ?, \
        updated_at = ? WHERE id = ?
        """
    /// `contracts(matching:)` per combination of filters (bit 0 user, 1 status, 2 product), then `LIMIT ?`.
    public static let contractsMatching: [String] = (0..<8).map { mask in
        filtered(
            select: "SELECT \(contractColumns) FROM member_contracts",
            columns: ["user_id", "status", "product_id"], mask: mask)
    }

    // MARK: ledger
    /// `raw` is empty when `raw_packed` (``LedgerPacking``) or `raw_of` (the id of an earlier row with
    /// the same notification UUID and identical bytes) holds it; the sessions rebuild the text.
    public static let ledgerColumns = """
        id, received_at, source, notification_uuid, notification_type, subtype, transaction_id, \
        original_transaction_id, app_account_token, signed_date, verdict, detail, raw, raw_packed, raw_of
        """
    public static let insertLedger = """
        INSERT INTO iap_ledger (received_at, source, notification_uuid, notification_type, subtype, \
        transaction_id, original_transaction_id, app_account_token, signed_date, verdict, detail, raw, \
        raw_packed, raw_of) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// The first row holding these exact packed bytes for this notification UUID (#18.6).
    public static let ledgerFirstCopy = """
        SELECT id FROM iap_ledger WHERE notification_uuid = ? AND raw_of IS NULL AND raw_packed = ? \
        ORDER BY id LIMIT 1
        """
    /// The stored raw of the row a duplicate refers to.
    public static let ledgerRawById = "SELECT raw, raw_packed FROM iap_ledger WHERE id = ?"
    public static let ledgerChainByDigest = "SELECT chain FROM iap_ledger_chains WHERE digest = ?"
    public static let updateLedger = "UPDATE iap_ledger SET verdict = ?, detail = ? WHERE id = ?"
    public static let ledgerById = "SELECT \(ledgerColumns) FROM iap_ledger WHERE id = ?"
    public static let processedLedger = """
        SELECT \(ledgerColumns) FROM iap_ledger \
        WHERE notification_uuid = ? AND verdict NOT IN ('rejected', 'unmatched') ORDER BY id DESC LIMIT 1
        """
    /// Exactly-once: one row per notification UUID that was processed (any verdict but
    /// `rejected`/`unmatched`), inserted before the work in the same transaction.
    public static let insertClaim = "INSERT INTO iap_notification_claims (notification_uuid) VALUES (?)"
    public static let deleteClaim = "DELETE FROM iap_notification_claims WHERE notification_uuid = ?"
    /// The notification UUIDs an older schema's ledger already processed: the claims migration
    /// inserts them (each backend with its own `INSERT … IGNORE`).
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
    public static let unmatchedLedger = "SELECT \(prefixed(ledgerColumns, "l")) \(unresolvedUnmatched) ORDER BY l.id LIMIT ?"

    /// Ledger rows mentioning any of the ids; each list has `counts` placeholders (0 = clause left out).
    public static func ledgerMentioning(counts: (Int, Int, Int)) -> String {
        var clauses: [String] = []
        for (column, count) in [
            ("transaction_id", counts.0), ("original_transaction_id", counts.1), ("app_account_token", counts.2),
        ] where count > 0 {
            clauses.append("\(column) IN (\(Array(repeating: "?", count: count).joined(separator: ", ")))")
        }
        return "SELECT \(ledgerColumns) FROM iap_ledger WHERE \(clauses.joined(separator: " OR ")) "
            + "ORDER BY signed_date, id"
    }

    // MARK: audit
    public static let insertAudit = """
        INSERT INTO iap_audit (at, actor, command, reason, ticket, entity, entity_key, before_json, \
        after_json, ledger_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    public static let auditByEntity = """
        SELECT id, at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, ledger_id \
        FROM iap_audit WHERE entity = ? AND entity_key = ? ORDER BY id
        """
    public static let auditColumns = """
        id, at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, ledger_id
        """
    public static let auditById = "SELECT \(auditColumns) FROM iap_audit WHERE id = ?"
    /// Each filter is bound twice (`? IS NULL OR …`): actor, since, ticket; then `LIMIT ?`.
    public static let auditMatching = """
        SELECT \(auditColumns) FROM iap_audit \
        WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR at >= ?) AND (? IS NULL OR ticket = ?) \
        ORDER BY id DESC LIMIT ?
        """

    // MARK: facts
    public static let factExists = "SELECT count(*) FROM iap_facts WHERE fact_key = ? AND digest = ?"
    public static let insertFact = """
        INSERT INTO iap_facts (kind, fact_key, original_transaction_id, signed_date, source, digest, body) \
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    public static let factsByOriginal = """
        SELECT kind, fact_key, original_transaction_id, signed_date, source, body FROM iap_facts \
        WHERE original_transaction_id = ? ORDER BY signed_date, id
        """

    // MARK: counts
    public static let counts = """
        SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM member_contracts), \
        (SELECT count(*) FROM iap_ledger), (SELECT count(*) \(unresolvedUnmatched)), \
        (SELECT count(*) FROM iap_audit)
        """

    // MARK: schema
    public static let maxMigration = "SELECT coalesce(max(version), 0) FROM iap_schema_migrations"
    public static let recordMigration = "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"

    static func filtered(select: String, columns: [String], mask: Int) -> String {
        let conditions = columns.enumerated().filter { mask & (1 << $0.offset) != 0 }.map { "\($0.element) = ?" }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return select + whereClause + " ORDER BY id DESC LIMIT ?"
    }

    static func prefixed(_ columns: String, _ alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.filter { $0 != " " })" }
            .joined(separator: ", ")
    }
}
