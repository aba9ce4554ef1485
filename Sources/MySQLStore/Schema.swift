import StoreSQL

/// The schema in MySQL's dialect, described as data so `migrate()` can create what is missing and
/// add what an existing (seed) table lacks, without ever dropping or rewriting anything.
///
/// Table and column names and meanings are shared with the SQLite backend. Ids are
/// `VARCHAR(255)` in `utf8mb4_bin` (exact, case-sensitive comparisons, like SQLite's); dates and
/// money are `BIGINT` (milliseconds since the epoch; milliunits); raw JWS and JSON are `MEDIUMTEXT`.
struct ColumnSpec: Sendable {
    let name: String
    /// The definition in `CREATE TABLE`.
    let definition: String
    /// The definition in `ALTER TABLE … ADD COLUMN` on an existing table that may hold rows:
    /// `NOT NULL` columns get a default there so existing rows stay valid.
    let addDefinition: String

    init(_ name: String, _ definition: String, whenAdded: String? = nil) {
        self.name = name
        self.definition = definition
        self.addDefinition = whenAdded ?? definition
    }
}

/// An index the schema needs. An existing index satisfies it when it covers the same leading
/// columns (and is unique, for a unique one), whatever its name.
struct IndexSpec: Sendable {
    let name: String
    let columns: [String]
    let unique: Bool

    var clause: String {
        (unique ? "UNIQUE KEY " : "KEY ") + "\(name) (\(columns.joined(separator: ", ")))"
    }

    var itemName: String { (unique ? "unique index " : "index ") + "(\(columns.joined(separator: ", ")))" }
}

/// One table: created in full when missing; completed column by column and index by index when present.
struct TableSpec: Sendable {
    let name: String
    let columns: [ColumnSpec]
    let indexes: [IndexSpec]
    /// Extra clauses for `CREATE TABLE` only (CHECK, FOREIGN KEY): not added to existing tables.
    let constraints: [String]

    var createStatement: String {
        var lines = columns.map { "    \($0.name) \($0.definition)" }
        lines.append("    PRIMARY KEY (id)")
        lines += indexes.map { "    \($0.clause)" }
        lines += constraints.map { "    \($0)" }
        return "CREATE TABLE IF NOT EXISTS \(name) (\n" + lines.joined(separator: ",\n") + "\n) "
            + Schema.tableOptions
    }
}

/// One ordered, recorded schema step (`iap_schema_migrations`): the tables it ensures.
struct MySQLMigration: Sendable {
    let version: Int
    let name: String
    let tables: [TableSpec]
    /// Idempotent data steps run after the tables exist (e.g. a backfill).
    var statements: [String] = []
}

enum Schema {
    static let tableOptions = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC"

    static let migrationsTable = "iap_schema_migrations"
    static let migrationsTableDDL = """
        CREATE TABLE IF NOT EXISTS iap_schema_migrations (
            version INT NOT NULL,
            name VARCHAR(255) NOT NULL,
            applied_at BIGINT NOT NULL,
            PRIMARY KEY (version)
        ) \(tableOptions)
        """

    private static let id = ColumnSpec(
        "id", "BIGINT NOT NULL AUTO_INCREMENT", whenAdded: "BIGINT NOT NULL AUTO_INCREMENT UNIQUE KEY")
    private static func key(_ name: String, null: Bool = false) -> ColumnSpec {
        null
            ? ColumnSpec(name, "VARCHAR(255) NULL")
            : ColumnSpec(name, "VARCHAR(255) NOT NULL", whenAdded: "VARCHAR(255) NOT NULL DEFAULT ''")
    }
    private static func date(_ name: String) -> ColumnSpec { ColumnSpec(name, "BIGINT NULL") }
    private static func stamp(_ name: String) -> ColumnSpec {
        ColumnSpec(name, "BIGINT NOT NULL", whenAdded: "BIGINT NOT NULL DEFAULT 0")
    }

    static let orders = TableSpec(
        name: "orders",
        columns: [
            id, key("no"), key("user_id"), key("product_id"),
            ColumnSpec("status", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'pending'"),
            key("trade_no", null: true), key("origin_no", null: true),
            date("purchase_date"), date("expires_date"),
            ColumnSpec("environment", "VARCHAR(32) NULL"),
            ColumnSpec("price", "BIGINT NULL"),
            ColumnSpec("currency", "VARCHAR(16) NULL"),
            stamp("created_at"), stamp("updated_at"),
        ],
        indexes: [
            IndexSpec(name: "uq_orders_no", columns: ["no"], unique: true),
            IndexSpec(name: "uq_orders_trade_no", columns: ["trade_no"], unique: true),
            IndexSpec(name: "idx_orders_user_id", columns: ["user_id"], unique: false),
            IndexSpec(name: "idx_orders_origin_no", columns: ["origin_no"], unique: false),
            IndexSpec(name: "idx_orders_status", columns: ["status"], unique: false),
            IndexSpec(name: "idx_orders_product_id", columns: ["product_id"], unique: false),
        ],
        constraints: ["CONSTRAINT ck_orders_status CHECK (status IN ('pending','paid','refunded','revoked'))"])

    static let memberContracts = TableSpec(
        name: "member_contracts",
        columns: [
            id, key("contract_id"), key("user_id"), key("product_id"),
            ColumnSpec("status", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'active'"),
            ColumnSpec("auto_renew", "TINYINT NOT NULL", whenAdded: "TINYINT NOT NULL DEFAULT 0"),
            date("expires_date"),
            ColumnSpec("environment", "VARCHAR(32) NULL"),
            key("next_product_id", null: true),
            date("last_event_date"),
            stamp("created_at"), stamp("updated_at"),
        ],
        indexes: [
            IndexSpec(name: "uq_member_contracts_contract_id", columns: ["contract_id"], unique: true),
            IndexSpec(name: "idx_member_contracts_user_id", columns: ["user_id"], unique: false),
        ],
        constraints: [
            "CONSTRAINT ck_member_contracts_status CHECK (status IN "
                + "('active','canceled','grace_period','billing_retry','expired','revoked'))"
        ])

    static let ledger = TableSpec(
        name: "iap_ledger",
        columns: [
            id, stamp("received_at"),
            ColumnSpec("source", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'apple'"),
            key("notification_uuid", null: true),
            key("notification_type", null: true), key("subtype", null: true),
            key("transaction_id", null: true), key("original_transaction_id", null: true),
            key("app_account_token", null: true),
            date("signed_date"),
            ColumnSpec("verdict", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'rejected'"),
            ColumnSpec("detail", "MEDIUMTEXT NULL"),
            ColumnSpec("raw", "MEDIUMTEXT NOT NULL"),
        ],
        indexes: [
            IndexSpec(name: "idx_iap_ledger_notification_uuid", columns: ["notification_uuid"], unique: false),
            IndexSpec(name: "idx_iap_ledger_transaction_id", columns: ["transaction_id"], unique: false),
            IndexSpec(
                name: "idx_iap_ledger_original_transaction_id", columns: ["original_transaction_id"], unique: false),
            IndexSpec(name: "idx_iap_ledger_app_account_token", columns: ["app_account_token"], unique: false),
            IndexSpec(name: "idx_iap_ledger_verdict", columns: ["verdict"], unique: false),
        ],
        constraints: [])

    /// Ledger compaction (issue 17, #18.6): the packed raw (StoreSQL.LedgerPacking) or, for a
    /// re-delivery of identical bytes, the id of the first copy; `raw` is then empty.
    static let ledgerPacked = TableSpec(
        name: "iap_ledger",
        columns: ledger.columns + [
            ColumnSpec("raw_packed", "MEDIUMBLOB NULL"),
            ColumnSpec("raw_of", "BIGINT NULL"),
        ],
        indexes: ledger.indexes,
        constraints: ledger.constraints)

    /// Each distinct certificate chain of a packed raw, once, by its SHA-256.
    static let ledgerChains = TableSpec(
        name: "iap_ledger_chains",
        columns: [
            id,
            ColumnSpec("digest", "VARBINARY(32) NOT NULL"),
            ColumnSpec("chain", "MEDIUMBLOB NOT NULL"),
        ],
        indexes: [IndexSpec(name: "uq_iap_ledger_chains_digest", columns: ["digest"], unique: true)],
        constraints: [])

    static let audit = TableSpec(
        name: "iap_audit",
        columns: [
            id, stamp("at"),
            ColumnSpec("actor", "VARCHAR(255) NOT NULL", whenAdded: "VARCHAR(255) NOT NULL DEFAULT ''"),
            ColumnSpec("command", "TEXT NOT NULL"),
            ColumnSpec("reason", "TEXT NULL"),
            ColumnSpec("ticket", "VARCHAR(255) NULL"),
            ColumnSpec("entity", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'order'"),
            key("entity_key"),
            ColumnSpec("before_json", "MEDIUMTEXT NULL"),
            ColumnSpec("after_json", "MEDIUMTEXT NULL"),
            ColumnSpec("ledger_id", "BIGINT NULL"),
        ],
        indexes: [
            IndexSpec(name: "idx_iap_audit_entity", columns: ["entity", "entity_key"], unique: false),
            IndexSpec(name: "idx_iap_audit_ledger_id", columns: ["ledger_id"], unique: false),
        ],
        constraints: ["CONSTRAINT fk_iap_audit_ledger FOREIGN KEY (ledger_id) REFERENCES iap_ledger (id)"])

    /// The engine's signed facts (issue #13): rows are derived from them.
    static let facts = TableSpec(
        name: "iap_facts",
        columns: [
            id,
            ColumnSpec("kind", "VARCHAR(16) NOT NULL"),
            key("fact_key"), key("original_transaction_id"),
            ColumnSpec("signed_date", "BIGINT NOT NULL", whenAdded: "BIGINT NOT NULL DEFAULT 0"),
            ColumnSpec("source", "VARCHAR(16) NOT NULL", whenAdded: "VARCHAR(16) NOT NULL DEFAULT 'apple'"),
            ColumnSpec("digest", "VARCHAR(32) NOT NULL", whenAdded: "VARCHAR(32) NOT NULL DEFAULT ''"),
            ColumnSpec("body", "MEDIUMTEXT NOT NULL"),
        ],
        indexes: [
            IndexSpec(name: "uq_iap_facts_key_digest", columns: ["fact_key", "digest"], unique: true),
            IndexSpec(name: "idx_iap_facts_original", columns: ["original_transaction_id", "signed_date"], unique: false),
        ],
        constraints: [
            "CONSTRAINT ck_iap_facts_kind CHECK (kind IN ('transaction','renewal','notification'))"
        ])

    /// Ordered; never edit a released migration, append a new one.
    static let migrations: [MySQLMigration] = [
        MySQLMigration(
            version: 1, name: "v1 orders, member_contracts, iap_ledger, iap_audit",
            tables: [orders, memberContracts, ledger, audit]),
        MySQLMigration(
            version: 2, name: "ledger compaction: packed raw, certificate chains stored once, duplicates by reference",
            tables: [ledgerPacked, ledgerChains]),
        MySQLMigration(
            version: 3, name: "notification claims (exactly-once)", tables: [notificationClaims],
            statements: [
                "INSERT IGNORE INTO iap_notification_claims (notification_uuid) " + StoreSQL.processedNotificationUUIDs
            ]),
        // Self-contained: the engine's signed facts.
        MySQLMigration(version: 4, name: "engine facts (iap_facts)", tables: [facts]),
    ]

    /// Exactly-once: the unique key a notification's processing takes before its work.
    static let notificationClaims = TableSpec(
        name: "iap_notification_claims",
        columns: [id, key("notification_uuid")],
        indexes: [IndexSpec(name: "uq_iap_notification_claims_uuid", columns: ["notification_uuid"], unique: true)],
        constraints: [])

    /// The newest version this build knows.
    static var supported: Int { migrations.last?.version ?? 0 }

    /// Every table of the current schema (the union of all migrations; later specs win).
    static var currentTables: [TableSpec] {
        var byName: [String: Int] = [:]
        var tables: [TableSpec] = []
        for migration in migrations {
            for table in migration.tables {
                if let index = byName[table.name] {
                    tables[index] = table
                } else {
                    byName[table.name] = tables.count
                    tables.append(table)
                }
            }
        }
        return tables
    }
}
