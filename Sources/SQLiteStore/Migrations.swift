import StoreSQL

/// One ordered, recorded schema step.
struct Migration: Sendable {
    let version: Int
    let name: String
    /// DDL only: no values are ever part of it.
    let script: String
}

/// The schema this build writes, as an ordered list of migrations recorded in `iap_schema_migrations`.
///
/// Table and column names are shared with the MySQL backend; never edit a released migration,
/// append a new one.
enum Migrations {
    static let tableDDL = """
        CREATE TABLE IF NOT EXISTS iap_schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at INTEGER NOT NULL
        )
        """

    static let all: [Migration] = [
        Migration(
            version: 1, name: "v1 orders, member_contracts, iap_ledger, iap_audit",
            script: """
                CREATE TABLE orders (
                    id INTEGER PRIMARY KEY,
                    no TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('pending','paid','refunded','revoked')),
                    trade_no TEXT UNIQUE,
                    origin_no TEXT,
                    purchase_date INTEGER,
                    expires_date INTEGER,
                    environment TEXT,
                    price INTEGER,
                    currency TEXT,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE INDEX idx_orders_user_id ON orders (user_id);
                CREATE INDEX idx_orders_origin_no ON orders (origin_no);
                CREATE INDEX idx_orders_status ON orders (status);
                CREATE INDEX idx_orders_product_id ON orders (product_id);

                CREATE TABLE member_contracts (
                    id INTEGER PRIMARY KEY,
                    contract_id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN
                        ('active','canceled','grace_period','billing_retry','expired','revoked')),
                    auto_renew INTEGER NOT NULL,
                    expires_date INTEGER,
                    environment TEXT,
                    next_product_id TEXT,
                    last_event_date INTEGER,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE INDEX idx_member_contracts_user_id ON member_contracts (user_id);

                CREATE TABLE iap_ledger (
                    id INTEGER PRIMARY KEY,
                    received_at INTEGER NOT NULL,
                    source TEXT NOT NULL,
                    notification_uuid TEXT,
                    notification_type TEXT,
                    subtype TEXT,
                    transaction_id TEXT,
                    original_transaction_id TEXT,
                    app_account_token TEXT,
                    signed_date INTEGER,
                    verdict TEXT NOT NULL,
                    detail TEXT,
                    raw TEXT NOT NULL
                );
                CREATE INDEX idx_iap_ledger_notification_uuid ON iap_ledger (notification_uuid);
                CREATE INDEX idx_iap_ledger_transaction_id ON iap_ledger (transaction_id);
                CREATE INDEX idx_iap_ledger_original_transaction_id ON iap_ledger (original_transaction_id);
                CREATE INDEX idx_iap_ledger_app_account_token ON iap_ledger (app_account_token);
                CREATE INDEX idx_iap_ledger_verdict ON iap_ledger (verdict);

                CREATE TABLE iap_audit (
                    id INTEGER PRIMARY KEY,
                    at INTEGER NOT NULL,
                    actor TEXT NOT NULL,
                    command TEXT NOT NULL,
                    reason TEXT,
                    ticket TEXT,
                    entity TEXT NOT NULL,
                    entity_key TEXT NOT NULL,
                    before_json TEXT,
                    after_json TEXT,
                    ledger_id INTEGER REFERENCES iap_ledger (id)
                );
                CREATE INDEX idx_iap_audit_entity ON iap_audit (entity, entity_key);
                """),
        // Ledger compaction (issue 17, #18.6): see StoreSQL.LedgerPacking. New rows keep `raw` empty
        // and hold either the packed bytes or, for a re-delivery of identical bytes, the id of the
        // first copy. Rows written before keep their text: every form reads back as the same raw.
        Migration(
            version: 2, name: "ledger compaction: packed raw, certificate chains stored once, duplicates by reference",
            script: """
                ALTER TABLE iap_ledger ADD COLUMN raw_packed BLOB;
                ALTER TABLE iap_ledger ADD COLUMN raw_of INTEGER;
                CREATE TABLE iap_ledger_chains (
                    id INTEGER PRIMARY KEY,
                    digest BLOB NOT NULL UNIQUE,
                    chain BLOB NOT NULL
                );
                """),
        // Exactly-once: the unique key a notification's processing takes before its work.
        Migration(
            version: 3, name: "notification claims (exactly-once)",
            script: """
                CREATE TABLE iap_notification_claims (
                    id INTEGER PRIMARY KEY,
                    notification_uuid TEXT NOT NULL UNIQUE
                );
                INSERT OR IGNORE INTO iap_notification_claims (notification_uuid)
                """ + StoreSQL.processedNotificationUUIDs + ";"),
        // Self-contained: the engine's signed facts (issue #13). Rows are derived from them.
        Migration(
            version: 4, name: "engine facts (iap_facts)",
            script: """
                CREATE TABLE IF NOT EXISTS iap_facts (
                    id INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL CHECK (kind IN ('transaction','renewal','notification')),
                    fact_key TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    signed_date INTEGER NOT NULL,
                    source TEXT NOT NULL,
                    digest TEXT NOT NULL,
                    body TEXT NOT NULL,
                    UNIQUE (fact_key, digest)
                );
                CREATE INDEX IF NOT EXISTS idx_iap_facts_original ON iap_facts (original_transaction_id, signed_date);
                """),
    ]

    /// The newest version this build knows.
    static var supported: Int { all.last?.version ?? 0 }
}
