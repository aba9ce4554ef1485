import StoreSQL

/// MySQL/MariaDB's own statements; everything the backends share is in ``StoreSQL``.
enum MySQLSQL {
    /// No-limit value for `LIMIT ?`.
    static let noLimit = Int64.max

    /// Locking variants for write transactions: a concurrent writer of the same row waits for our
    /// commit and then reads the committed row (no lost updates).
    static let orderByNoForUpdate = StoreSQL.orderByNo + " FOR UPDATE"
    static let orderByTradeNoForUpdate = StoreSQL.orderByTradeNo + " FOR UPDATE"
    static let contractByIdForUpdate = StoreSQL.contractById + " FOR UPDATE"
    static let ledgerByIdForUpdate = StoreSQL.ledgerById + " FOR UPDATE"

    /// A certificate chain of a packed ledger raw, unless one with its digest is stored already
    /// (a no-op update instead of an error, so a concurrent insert of the same chain is no conflict).
    static let insertLedgerChain =
        "INSERT INTO iap_ledger_chains (digest, chain) VALUES (?, ?) ON DUPLICATE KEY UPDATE digest = digest"

    // MARK: schema
    static let migrationsTableExists = """
        SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
        """
    static let migrationLock = "SELECT GET_LOCK(?, ?)"
    static let migrationUnlock = "SELECT RELEASE_LOCK(?)"
    static let currentDatabase = "SELECT DATABASE()"
    static let lockWaitTimeout = "SET SESSION innodb_lock_wait_timeout = ?"
}
