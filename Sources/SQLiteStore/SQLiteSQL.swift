/// SQLite's own statements; everything the backends share is in ``StoreSQL``.
enum SQLiteSQL {
    static let migrationsTableExists =
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'iap_schema_migrations'"
    /// A certificate chain of a packed ledger raw, unless one with its digest is stored already.
    static let insertLedgerChain =
        "INSERT INTO iap_ledger_chains (digest, chain) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING"
}
