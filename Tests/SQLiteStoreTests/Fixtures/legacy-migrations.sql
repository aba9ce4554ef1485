-- The SQLite schema scripts of iapctl before the shared schema description (issue #12), copied
-- verbatim from Sources/SQLiteStore/Migrations.swift at commit 2fc8d09 (v3's backfill with
-- StoreSQL.processedNotificationUUIDs spelled out). Frozen: the test builds a database from them and
-- checks the rendered migrations give the same schema. Each migration starts at a '-- version N' line.
-- version 1
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
-- version 2
ALTER TABLE iap_ledger ADD COLUMN raw_packed BLOB;
ALTER TABLE iap_ledger ADD COLUMN raw_of INTEGER;
CREATE TABLE iap_ledger_chains (
    id INTEGER PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    chain BLOB NOT NULL
);
-- version 3
CREATE TABLE iap_notification_claims (
    id INTEGER PRIMARY KEY,
    notification_uuid TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO iap_notification_claims (notification_uuid)
SELECT DISTINCT notification_uuid FROM iap_ledger WHERE notification_uuid IS NOT NULL AND verdict NOT IN ('rejected', 'unmatched');
-- version 4
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
