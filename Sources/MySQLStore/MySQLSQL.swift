/// Every SQL text the store prepares. Only `?` placeholders: values are always bound.
enum MySQLSQL {
    /// No-limit value for `LIMIT ?`.
    static let noLimit = Int64.max

    // MARK: orders
    static let orderColumns = """
        id, no, user_id, product_id, status, trade_no, origin_no, purchase_date, expires_date, \
        environment, price, currency, created_at, updated_at
        """
    static let orderByNo = "SELECT \(orderColumns) FROM orders WHERE no = ?"
    static let orderByTradeNo = "SELECT \(orderColumns) FROM orders WHERE trade_no = ?"
    /// Locking variants for write transactions: a concurrent writer of the same row waits for our
    /// commit and then reads the committed row (no lost updates).
    static let orderByNoForUpdate = orderByNo + " FOR UPDATE"
    static let orderByTradeNoForUpdate = orderByTradeNo + " FOR UPDATE"
    static let ordersByOriginNo =
        "SELECT \(orderColumns) FROM orders WHERE origin_no = ? ORDER BY purchase_date, id"
    static let insertOrder = """
        INSERT INTO orders (no, user_id, product_id, status, trade_no, origin_no, purchase_date, \
        expires_date, environment, price, currency, created_at, updated_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let updateOrder = """
        UPDATE orders SET no = ?, user_id = ?, product_id = ?, status = ?, trade_no = ?, origin_no = ?, \
        purchase_date = ?, expires_date = ?, environment = ?, price = ?, currency = ?, created_at = ?, \
        updated_at = ? WHERE id = ?
        """

    /// `orders(matching:)` per combination of present filters (bit 0 user, 1 status, 2 product,
    /// 3 origin). Placeholders follow that order, then `LIMIT ?`.
    static let ordersMatching: [String] = (0..<16).map { mask in
        filtered(
            select: "SELECT \(orderColumns) FROM orders",
            columns: ["user_id", "status", "product_id", "origin_no"], mask: mask)
    }

    // MARK: contracts
    static let contractColumns = """
        id, contract_id, user_id, product_id, status, auto_renew, expires_date, environment, \
        next_product_id, last_event_date, created_at, updated_at
        """
    static let contractById = "SELECT \(contractColumns) FROM member_contracts WHERE contract_id = ?"
    static let contractByIdForUpdate = contractById + " FOR UPDATE"
    static let insertContract = """
        INSERT INTO member_contracts (contract_id, user_id, product_id, status, auto_renew, expires_date, \
        environment, next_product_id, last_event_date, created_at, updated_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let updateContract = """
        UPDATE member_contracts SET contract_id = ?, user_id = ?, product_id = ?, status = ?, auto_renew = ?, \
        expires_date = ?, environment = ?, next_product_id = ?, last_event_date = ?, created_at = ?, \
        updated_at = ? WHERE id = ?
        """
    /// `contracts(matching:)` per combination of filters (bit 0 user, 1 status, 2 product), then `LIMIT ?`.
    static let contractsMatching: [String] = (0..<8).map { mask in
        filtered(
            select: "SELECT \(contractColumns) FROM member_contracts",
            columns: ["user_id", "status", "product_id"], mask: mask)
    }

    // MARK: ledger
    static let ledgerColumns = """
        id, received_at, source, notification_uuid, notification_type, subtype, transaction_id, \
        original_transaction_id, app_account_token, signed_date, verdict, detail, raw
        """
    static let insertLedger = """
        INSERT INTO iap_ledger (received_at, source, notification_uuid, notification_type, subtype, \
        transaction_id, original_transaction_id, app_account_token, signed_date, verdict, detail, raw) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let updateLedger = "UPDATE iap_ledger SET verdict = ?, detail = ? WHERE id = ?"
    static let ledgerById = "SELECT \(ledgerColumns) FROM iap_ledger WHERE id = ?"
    static let ledgerByIdForUpdate = ledgerById + " FOR UPDATE"
    static let processedLedger = """
        SELECT \(ledgerColumns) FROM iap_ledger \
        WHERE notification_uuid = ? AND verdict NOT IN ('rejected', 'unmatched') ORDER BY id DESC LIMIT 1
        """
    /// Unmatched rows not superseded by a later row that processed the same notification UUID.
    static let unresolvedUnmatched = """
        FROM iap_ledger AS l WHERE l.verdict = 'unmatched' AND NOT EXISTS (\
        SELECT 1 FROM iap_ledger AS later WHERE later.notification_uuid = l.notification_uuid \
        AND later.id > l.id AND later.verdict NOT IN ('rejected', 'unmatched'))
        """
    static let unmatchedLedger = "SELECT \(prefixed(ledgerColumns, "l")) \(unresolvedUnmatched) ORDER BY l.id LIMIT ?"

    /// Ledger rows mentioning any of the ids; each list has `counts` placeholders (0 = clause left out).
    static func ledgerMentioning(counts: (Int, Int, Int)) -> String {
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
    static let insertAudit = """
        INSERT INTO iap_audit (at, actor, command, reason, ticket, entity, entity_key, before_json, \
        after_json, ledger_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let auditByEntity = """
        SELECT id, at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, ledger_id \
        FROM iap_audit WHERE entity = ? AND entity_key = ? ORDER BY id
        """
    static let auditColumns = """
        id, at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, ledger_id
        """
    static let auditById = "SELECT \(auditColumns) FROM iap_audit WHERE id = ?"
    /// Each filter is bound twice (`? IS NULL OR …`): actor, since, ticket; then `LIMIT ?`.
    static let auditMatching = """
        SELECT \(auditColumns) FROM iap_audit \
        WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR at >= ?) AND (? IS NULL OR ticket = ?) \
        ORDER BY id DESC LIMIT ?
        """

    // MARK: counts
    static let counts = """
        SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM member_contracts), \
        (SELECT count(*) FROM iap_ledger), (SELECT count(*) \(unresolvedUnmatched)), \
        (SELECT count(*) FROM iap_audit)
        """

    // MARK: schema
    static let migrationsTableExists = """
        SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
        """
    static let maxMigration = "SELECT coalesce(max(version), 0) FROM iap_schema_migrations"
    static let recordMigration = "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"
    static let migrationLock = "SELECT GET_LOCK(?, ?)"
    static let migrationUnlock = "SELECT RELEASE_LOCK(?)"
    static let currentDatabase = "SELECT DATABASE()"
    static let lockWaitTimeout = "SET SESSION innodb_lock_wait_timeout = ?"

    private static func filtered(select: String, columns: [String], mask: Int) -> String {
        let conditions = columns.enumerated().filter { mask & (1 << $0.offset) != 0 }.map { "\($0.element) = ?" }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return select + whereClause + " ORDER BY id DESC LIMIT ?"
    }

    private static func prefixed(_ columns: String, _ alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.filter { $0 != " " })" }
            .joined(separator: ", ")
    }
}
