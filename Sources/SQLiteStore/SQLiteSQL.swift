/// SQLite's own statements; everything the backends share is in ``StoreSQL``.
enum SQLiteSQL {
    static let migrationsTableExists =
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'iap_schema_migrations'"
}
