import SubscriptionModel

/// A column's type, named per engine by ``SQLDialect/typeNames``.
public struct SQLType: Sendable, Equatable {
    public enum Kind: Sendable, Hashable {
        /// The row id: `INTEGER PRIMARY KEY` / `BIGINT NOT NULL AUTO_INCREMENT`.
        case id
        /// Short text with a maximum length (ids, codes).
        case string
        /// Text up to 64 KB.
        case text
        /// Long text (raw JWS, JSON).
        case longText
        /// A 64-bit integer (dates in ms, money in milliunits, ids).
        case integer
        /// A small integer (flags).
        case smallInteger
        /// Bytes with a maximum length (digests).
        case bytes
        /// Long bytes (packed raws, chains).
        case longBytes
    }

    public let kind: Kind
    public let size: Int?

    public static let id = SQLType(kind: .id, size: nil)
    public static func string(_ size: Int) -> SQLType { SQLType(kind: .string, size: size) }
    public static let text = SQLType(kind: .text, size: nil)
    public static let longText = SQLType(kind: .longText, size: nil)
    public static let integer = SQLType(kind: .integer, size: nil)
    public static let smallInteger = SQLType(kind: .smallInteger, size: nil)
    public static func bytes(_ size: Int) -> SQLType { SQLType(kind: .bytes, size: size) }
    public static let longBytes = SQLType(kind: .longBytes, size: nil)
}

/// A foreign key: the column refers to `table (column)`; `name` names the constraint where the
/// engine names them.
public struct SchemaReference: Sendable, Equatable {
    public let name: String
    public let table: String
    public let column: String
}

/// One column of the schema.
public struct SchemaColumn: Sendable, Equatable {
    public let name: String
    public let type: SQLType
    public let nullable: Bool
    /// The value rows that exist when the column is added get (`ALTER TABLE … ADD COLUMN … DEFAULT`);
    /// a SQL literal. Not part of `CREATE TABLE`: iapctl always writes every column.
    public let defaultForExistingRows: String?
    /// The only values allowed (a CHECK constraint), in order.
    public let allowed: [String]?
    public let references: SchemaReference?
    /// The column holds a user's id (your account id, as `orders create --user` took it): `users
    /// forget` replaces it with the user's alias. Marking a column here is all a new table needs.
    public let holdsUserId: Bool
    /// The column holds free text iapctl or support writes that may name a user (a reason, a
    /// detail, a row's JSON): `users forget` rewrites each mention of the user's id as the alias.
    public let namesUsers: Bool

    public init(
        _ name: String, _ type: SQLType, nullable: Bool = false, defaultForExistingRows: String? = nil,
        allowed: [String]? = nil, references: SchemaReference? = nil, holdsUserId: Bool = false,
        namesUsers: Bool = false
    ) {
        self.name = name
        self.type = type
        self.nullable = nullable
        self.defaultForExistingRows = defaultForExistingRows
        self.allowed = allowed
        self.references = references
        self.holdsUserId = holdsUserId
        self.namesUsers = namesUsers
    }

    /// The same column, marked as free text that may name a user (``namesUsers``).
    func namingUsers() -> SchemaColumn {
        SchemaColumn(
            name, type, nullable: nullable, defaultForExistingRows: defaultForExistingRows, allowed: allowed,
            references: references, holdsUserId: holdsUserId, namesUsers: true)
    }

    /// `name IN ('a','b')`.
    public var allowedCondition: String? {
        allowed.map { "\(name) IN (" + $0.map { "'\($0)'" }.joined(separator: ",") + ")" }
    }
}

/// An index the schema needs.
public struct SchemaIndex: Sendable, Equatable {
    public let name: String
    public let columns: [String]
    public let unique: Bool
    /// The index exists for a foreign key's lookups: only engines that need one there make it.
    public let forForeignKey: Bool

    public init(_ name: String, _ columns: [String], unique: Bool = false, forForeignKey: Bool = false) {
        self.name = name
        self.columns = columns
        self.unique = unique
        self.forForeignKey = forForeignKey
    }
}

/// One table: its columns (`id` first) and indexes.
public struct SchemaTable: Sendable, Equatable {
    public let name: String
    public var columns: [SchemaColumn]
    public var indexes: [SchemaIndex]

    public init(_ name: String, columns: [SchemaColumn], indexes: [SchemaIndex] = []) {
        self.name = name
        self.columns = columns
        self.indexes = indexes
    }
}

/// One step of a migration.
public enum SchemaStep: Sendable, Equatable {
    case createTable(SchemaTable)
    case addColumns(table: String, [SchemaColumn])
    /// `INSERT … IGNORE INTO table (columns) <select>`: a backfill that skips what exists.
    case insertIgnoring(table: String, columns: [String], select: String)
    /// A data step written per dialect: an idempotent `UPDATE` of existing rows (SQLite's may call
    /// the functions ``SQLiteStore`` registers, such as `iapctl_fact_digest`).
    case update(sqlite: String, mysql: String)
    /// SQLite keeps the table in the B-tree of its unique `key` (`WITHOUT ROWID`: the key stored
    /// once, not in the table and again in its unique index; `id` then an ordinary column nothing
    /// writes). The table's columns and keys stay as described; other engines keep it as it is.
    case withoutRowId(SchemaTable, key: String)
    /// Rewrites every row of an older stored form into the current one (``StoredFormConversion``:
    /// Swift code, the same on every backend, idempotent). Runs after the migration's DDL and
    /// before its drops.
    case convertStoredForms
    /// Rewrites every fact body of an earlier shape into the one ``FactBody`` writes, and refuses
    /// the migration on a body that cannot be read, naming the row (``FactBodyConversion``: Swift
    /// code, the same on every backend, idempotent). Runs after the migration's DDL.
    case rewriteFactBodies
    /// Drops columns no longer used, after the migration's data step (only those that exist).
    case dropColumns(table: String, [String])
    /// Drops a table no longer used, after the migration's data step (if it exists).
    case dropTable(String)

    /// Whether the step runs after the migration's data step (a drop).
    public var runsAfterData: Bool {
        switch self {
        case .dropColumns, .dropTable: return true
        default: return false
        }
    }
}

/// One ordered, recorded schema step (`iap_schema_migrations`).
public struct SchemaMigration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let steps: [SchemaStep]
    /// Creates its tables and indexes only where missing, even where DDL is transactional.
    public let ifMissing: Bool

    public init(version: Int, name: String, steps: [SchemaStep], ifMissing: Bool = false) {
        self.version = version
        self.name = name
        self.steps = steps
        self.ifMissing = ifMissing
    }

    /// The tables this migration creates or changes, as they are after it (in order of first mention).
    public func tables(after earlier: [SchemaTable]) -> [SchemaTable] { applied(to: earlier).touched }

    /// Every table after this migration, and those it creates or changes (not those it drops).
    public func applied(to earlier: [SchemaTable]) -> (all: [SchemaTable], touched: [SchemaTable]) {
        var tables = earlier
        var touched: [String] = []
        for step in steps {
            switch step {
            case .createTable(let table):
                tables.removeAll { $0.name == table.name }
                tables.append(table)
                if !touched.contains(table.name) { touched.append(table.name) }
            case .dropColumns(let name, let columns):
                guard let index = tables.firstIndex(where: { $0.name == name }) else { continue }
                tables[index].columns.removeAll { columns.contains($0.name) }
                if !touched.contains(name) { touched.append(name) }
            case .dropTable(let name):
                tables.removeAll { $0.name == name }
                touched.removeAll { $0 == name }
            case .addColumns(let name, let columns):
                guard let index = tables.firstIndex(where: { $0.name == name }) else { continue }
                tables[index].columns += columns
                if !touched.contains(name) { touched.append(name) }
            case .insertIgnoring, .update, .convertStoredForms, .rewriteFactBodies, .withoutRowId:
                break
            }
        }
        return (tables, touched.compactMap { name in tables.first { $0.name == name } })
    }
}

/// The ONE description of the schema, for every engine: ordered migrations, each rendered for each
/// dialect by its backend. Never edit a released migration: append a new one.
public enum StoreSchema {
    private static func key(_ name: String) -> SchemaColumn {
        SchemaColumn(name, .string(255), defaultForExistingRows: "''")
    }
    /// A user id column (``SchemaColumn/holdsUserId``).
    private static func userKey(_ name: String) -> SchemaColumn {
        SchemaColumn(name, .string(255), defaultForExistingRows: "''", holdsUserId: true)
    }
    private static func optionalKey(_ name: String) -> SchemaColumn { SchemaColumn(name, .string(255), nullable: true) }
    private static func date(_ name: String) -> SchemaColumn { SchemaColumn(name, .integer, nullable: true) }
    private static func stamp(_ name: String) -> SchemaColumn {
        SchemaColumn(name, .integer, defaultForExistingRows: "0")
    }
    private static let id = SchemaColumn("id", .id)

    static let orders = SchemaTable(
        "orders",
        columns: [
            id, key("no"), userKey("user_id"), key("product_id"),
            SchemaColumn(
                "status", .string(16), defaultForExistingRows: "'pending'",
                allowed: ["pending", "paid", "refunded", "revoked"]),
            optionalKey("trade_no"), optionalKey("origin_no"), date("purchase_date"), date("expires_date"),
            SchemaColumn("environment", .string(32), nullable: true),
            SchemaColumn("price", .integer, nullable: true),
            SchemaColumn("currency", .string(16), nullable: true),
            stamp("created_at"), stamp("updated_at"),
        ],
        indexes: [
            SchemaIndex("uq_orders_no", ["no"], unique: true),
            SchemaIndex("uq_orders_trade_no", ["trade_no"], unique: true),
            SchemaIndex("idx_orders_user_id", ["user_id"]),
            SchemaIndex("idx_orders_origin_no", ["origin_no"]),
            SchemaIndex("idx_orders_status", ["status"]),
            SchemaIndex("idx_orders_product_id", ["product_id"]),
        ])

    static let memberContracts = SchemaTable(
        "member_contracts",
        columns: [
            id, key("contract_id"), userKey("user_id"), key("product_id"),
            SchemaColumn(
                "status", .string(16), defaultForExistingRows: "'active'",
                allowed: ["active", "canceled", "grace_period", "billing_retry", "expired", "revoked"]),
            SchemaColumn("auto_renew", .smallInteger, defaultForExistingRows: "0"),
            date("expires_date"),
            SchemaColumn("environment", .string(32), nullable: true),
            optionalKey("next_product_id"),
            date("last_event_date"),
            stamp("created_at"), stamp("updated_at"),
        ],
        indexes: [
            SchemaIndex("uq_member_contracts_contract_id", ["contract_id"], unique: true),
            SchemaIndex("idx_member_contracts_user_id", ["user_id"]),
        ])

    static let ledger = SchemaTable(
        "iap_ledger",
        columns: [
            id, stamp("received_at"),
            SchemaColumn("source", .string(16), defaultForExistingRows: "'apple'"),
            optionalKey("notification_uuid"), optionalKey("notification_type"), optionalKey("subtype"),
            optionalKey("transaction_id"), optionalKey("original_transaction_id"), optionalKey("app_account_token"),
            date("signed_date"),
            SchemaColumn("verdict", .string(16), defaultForExistingRows: "'rejected'"),
            SchemaColumn("detail", .longText, nullable: true).namingUsers(),
            SchemaColumn("raw", .longText),
        ],
        indexes: [
            SchemaIndex("idx_iap_ledger_notification_uuid", ["notification_uuid"]),
            SchemaIndex("idx_iap_ledger_transaction_id", ["transaction_id"]),
            SchemaIndex("idx_iap_ledger_original_transaction_id", ["original_transaction_id"]),
            SchemaIndex("idx_iap_ledger_app_account_token", ["app_account_token"]),
            SchemaIndex("idx_iap_ledger_verdict", ["verdict"]),
        ])

    static let audit = SchemaTable(
        "iap_audit",
        columns: [
            id, stamp("at"), key("actor"),
            SchemaColumn("command", .text).namingUsers(),
            SchemaColumn("reason", .text, nullable: true).namingUsers(),
            optionalKey("ticket").namingUsers(),
            SchemaColumn("entity", .string(16), defaultForExistingRows: "'order'"),
            key("entity_key"),
            SchemaColumn("before_json", .longText, nullable: true).namingUsers(),
            SchemaColumn("after_json", .longText, nullable: true).namingUsers(),
            SchemaColumn(
                "ledger_id", .integer, nullable: true,
                references: SchemaReference(name: "fk_iap_audit_ledger", table: "iap_ledger", column: "id")),
        ],
        indexes: [
            SchemaIndex("idx_iap_audit_entity", ["entity", "entity_key"]),
            SchemaIndex("idx_iap_audit_ledger_id", ["ledger_id"], forForeignKey: true),
        ])

    static let claims = SchemaTable(
        "iap_notification_claims", columns: [id, key("notification_uuid")],
        indexes: [SchemaIndex("uq_iap_notification_claims_uuid", ["notification_uuid"], unique: true)])

    /// The migration that recomputes every stored fact's digest as ``FactDigest`` computes it.
    public static let factDigestMigrationName = "facts' digest: SHA-256 instead of FNV-1a"

    /// The migration that packs the ledger's details, the audit's before/after and the facts' bodies.
    public static let packedTextsMigrationName = "packed texts: ledger details, audit before/after, fact bodies"

    /// Ordered; never edit a released migration, append a new one.
    public static let migrations: [SchemaMigration] = [
        SchemaMigration(
            version: 1, name: "v1 orders, member_contracts, iap_ledger, iap_audit",
            steps: [.createTable(orders), .createTable(memberContracts), .createTable(ledger), .createTable(audit)]),
        // Ledger compaction: see LedgerPacking. New rows keep `raw` empty and hold
        // either the packed bytes or, for a re-delivery of identical bytes, the id of the first copy.
        // Rows written before keep their text: every form reads back as the same raw.
        SchemaMigration(
            version: 2, name: "ledger compaction: packed raw, certificate chains stored once, duplicates by reference",
            steps: [
                .addColumns(
                    table: "iap_ledger",
                    [SchemaColumn("raw_packed", .longBytes, nullable: true), SchemaColumn("raw_of", .integer, nullable: true)]),
                .createTable(
                    SchemaTable(
                        "iap_ledger_chains",
                        columns: [id, SchemaColumn("digest", .bytes(32)), SchemaColumn("chain", .longBytes)],
                        indexes: [SchemaIndex("uq_iap_ledger_chains_digest", ["digest"], unique: true)])),
            ]),
        // Exactly-once: the unique key a notification's processing takes before its work.
        SchemaMigration(
            version: 3, name: "notification claims (exactly-once)",
            steps: [
                .createTable(claims),
                .insertIgnoring(
                    table: "iap_notification_claims", columns: ["notification_uuid"],
                    select: StoreSQL.processedNotificationUUIDs),
            ]),
        // Self-contained: the engine's signed facts. Rows are derived from them.
        SchemaMigration(
            version: 4, name: "engine facts (iap_facts)",
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_facts",
                        columns: [
                            id,
                            SchemaColumn("kind", .string(16), allowed: ["transaction", "renewal", "notification"]),
                            key("fact_key"), key("original_transaction_id"),
                            SchemaColumn("signed_date", .integer, defaultForExistingRows: "0"),
                            SchemaColumn("source", .string(16), defaultForExistingRows: "'apple'"),
                            SchemaColumn("digest", .string(32), defaultForExistingRows: "''"),
                            SchemaColumn("body", .longText),
                        ],
                        indexes: [
                            SchemaIndex("uq_iap_facts_key_digest", ["fact_key", "digest"], unique: true),
                            SchemaIndex("idx_iap_facts_original", ["original_transaction_id", "signed_date"]),
                        ]))
            ],
            ifMissing: true),
        // Where repeated jobs resume: Notification History read and applied up to a
        // point, an interrupted `apple reconcile --all`.
        SchemaMigration(
            version: 5, name: "job checkpoints (iap_checkpoints)",
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_checkpoints",
                        columns: [id, key("name"), SchemaColumn("value", .longText), stamp("updated_at")],
                        indexes: [SchemaIndex("uq_iap_checkpoints_name", ["name"], unique: true)]))
            ]),
        // Hand overrides of derived fields: what support set, which facts it saw, and
        // when it stopped holding (`audit undo`, --clear-override, or a newer period Apple signed).
        SchemaMigration(
            version: 6, name: "hand overrides (iap_overrides)",
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_overrides",
                        columns: [
                            id,
                            SchemaColumn("entity", .string(16), defaultForExistingRows: "'order'"),
                            key("entity_key"), key("original_transaction_id"),
                            SchemaColumn("field", .string(32), defaultForExistingRows: "''"),
                            SchemaColumn("value", .text, nullable: true),
                            SchemaColumn(
                                "audit_id", .integer, defaultForExistingRows: "0",
                                references: SchemaReference(name: "fk_iap_overrides_audit", table: "iap_audit", column: "id")),
                            key("actor"),
                            SchemaColumn("reason", .text, nullable: true).namingUsers(),
                            optionalKey("ticket").namingUsers(),
                            stamp("at"),
                            date("seen_period"),
                            SchemaColumn("seen_facts", .integer, defaultForExistingRows: "0"),
                            date("lifted_at"),
                            SchemaColumn("lifted_by", .text, nullable: true).namingUsers(),
                        ],
                        indexes: [
                            SchemaIndex("idx_iap_overrides_entity", ["entity", "entity_key"]),
                            SchemaIndex("idx_iap_overrides_original", ["original_transaction_id", "lifted_at"]),
                            SchemaIndex("idx_iap_overrides_audit_id", ["audit_id"], forForeignKey: true),
                        ]))
            ]),
        // The facts' digest (the unique key with fact_key) is SHA-256 instead of a 64-bit FNV-1a:
        // every stored digest recomputed, so a fact received again is still found.
        // Self-contained, in any order after v4: SQLite through the function SQLiteStore registers
        // (FactDigest itself), MariaDB with SHA2 over the same text; the column keeps its width.
        SchemaMigration(
            version: 7, name: factDigestMigrationName,
            steps: [
                .update(
                    sqlite: "UPDATE iap_facts SET digest = iapctl_fact_digest(kind, fact_key, original_transaction_id, "
                        + "signed_date, source, body)",
                    mysql: "UPDATE iap_facts SET digest = LEFT(SHA2(CONCAT(kind, '|', fact_key, '|', original_transaction_id, "
                        + "'|', signed_date, '|', CASE source WHEN 'apple' THEN 'apple' WHEN 'apple_api' THEN 'apple_api' "
                        + "ELSE 'app' END, '|', body), 256), 32)")
            ]),
        // Database size, undone by v10: a ledger row's detail, an audit row's before/after JSON and a
        // fact's body are stored packed (``TextPacking``), their text columns then NULL (a packed
        // fact's `body` keeps only what `originalTransactionIds(appTransactionId:)` searches); an
        // applied item's detail that lists its changes refers to their audit rows (``DetailReference``).
        // Existing rows are packed by the same code; a row that cannot be packed keeps its text.
        SchemaMigration(
            version: 8, name: packedTextsMigrationName,
            steps: [
                .addColumns(table: "iap_ledger", [SchemaColumn("detail_packed", .longBytes, nullable: true)]),
                .addColumns(table: "iap_audit", [SchemaColumn("packed", .longBytes, nullable: true)]),
                .addColumns(table: "iap_facts", [SchemaColumn("body_packed", .longBytes, nullable: true)]),
                // (Its data step, which packed existing rows, is gone: schema v10 converts every
                // row of any earlier form into the readable one.)
                // A claim is its notification UUID: on SQLite stored once.
                .withoutRowId(claims, key: "notification_uuid"),
            ]),
        // Flat with history: the engine's per-subscription snapshot (which facts can
        // still decide the contract, and what the others left), kept with the contract. NULL until
        // an event derives it; any other writer of the subscription's rows clears it.
        SchemaMigration(
            version: 9, name: "engine snapshot (member_contracts.snapshot)",
            steps: [.addColumns(table: "member_contracts", [SchemaColumn("snapshot", .longText, nullable: true)])]),
        // A record you can read and trust: the audit's and the ledger's texts and the
        // facts' bodies plain again; a ledger raw one standard zstd frame of its exact bytes
        // (checksum on, no dictionary); each audit and ledger row with the SHA-256 of its fields
        // (``RowDigest``), checked on read. Every row of an older form is rewritten by
        // ``StoredFormConversion`` (the same Swift code on both backends), then the columns and the
        // chain table only the older forms used are dropped. Sources/StoreSQL/FORMATS.md.
        SchemaMigration(
            version: 10, name: readableStorageMigrationName,
            steps: [
                .addColumns(
                    table: "iap_ledger",
                    [
                        SchemaColumn("raw_zstd", .longBytes, nullable: true),
                        SchemaColumn("row_digest", .string(64), defaultForExistingRows: "''"),
                    ]),
                .addColumns(table: "iap_audit", [SchemaColumn("row_digest", .string(64), defaultForExistingRows: "''")]),
                .convertStoredForms,
                .dropColumns(table: "iap_ledger", ["raw", "raw_packed", "detail_packed"]),
                .dropColumns(table: "iap_audit", ["packed"]),
                .dropColumns(table: "iap_facts", ["body_packed"]),
                .dropTable("iap_ledger_chains"),
            ]),
        // Refund requests answered exactly once: the claim a sender takes (a unique key on the
        // request) in the same transaction as the check, before anything is sent to Apple, then
        // what it sent and what Apple answered. Plain text and JSON: support reads it with SELECT.
        SchemaMigration(
            version: 11, name: "refund answers (iap_refund_answers)",
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_refund_answers",
                        columns: [
                            id, key("request_key"), key("transaction_id"),
                            SchemaColumn(
                                "state", .string(16), defaultForExistingRows: "'claimed'",
                                allowed: ["claimed", "answered", "refused", "skipped"]),
                            stamp("claimed_at"), key("claimed_by"),
                            SchemaColumn("rule", .text, nullable: true),
                            SchemaColumn("body", .longText, nullable: true),
                            SchemaColumn("apple_status", .integer, nullable: true),
                            SchemaColumn("apple_error", .text, nullable: true),
                            SchemaColumn(
                                "audit_id", .integer, nullable: true,
                                references: SchemaReference(
                                    name: "fk_iap_refund_answers_audit", table: "iap_audit", column: "id")),
                            date("answered_at"),
                        ],
                        indexes: [
                            SchemaIndex("uq_iap_refund_answers_request", ["request_key"], unique: true),
                            SchemaIndex("idx_iap_refund_answers_transaction", ["transaction_id"]),
                            SchemaIndex("idx_iap_refund_answers_audit_id", ["audit_id"], forForeignKey: true),
                        ]))
            ]),
        // One fact codec: every stored body in the one shape FactBody writes and reads (keys matched
        // by name, strict), so nothing reads a body any other way. Bodies of an earlier shape (a
        // transaction written before `isFromReceipt` existed; other key orders, whitespace or
        // escapes) are rewritten with their digest; one that cannot be read refuses the migration.
        SchemaMigration(version: 12, name: factBodiesMigrationName, steps: [.rewriteFactBodies]),
        // Access given by hand for a time, in a table of its own: the orders and contracts keep
        // Apple's word. A grant ends by itself (`starts_at <= now < until_date`, not revoked): no
        // job. Plain columns: support reads them with SELECT.
        SchemaMigration(
            version: 13, name: grantsMigrationName,
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_grants",
                        columns: [
                            id, userKey("user_id"), key("product_id"), stamp("starts_at"),
                            SchemaColumn("until_date", .integer, defaultForExistingRows: "0"),
                            key("actor"), SchemaColumn("reason", .text).namingUsers(), optionalKey("ticket").namingUsers(),
                            SchemaColumn(
                                "audit_id", .integer, nullable: true,
                                references: SchemaReference(name: "fk_iap_grants_audit", table: "iap_audit", column: "id")),
                            date("revoked_at"),
                            SchemaColumn("revoked_by", .text, nullable: true).namingUsers(),
                        ],
                        indexes: [
                            SchemaIndex("idx_iap_grants_user", ["user_id", "until_date"]),
                            SchemaIndex("idx_iap_grants_until", ["until_date"]),
                            SchemaIndex("idx_iap_grants_audit_id", ["audit_id"], forForeignKey: true),
                        ]))
            ]),
        // What support learned about a customer, plain text with the audit row that recorded it.
        SchemaMigration(
            version: 14, name: customerNotesMigrationName,
            steps: [
                .createTable(
                    SchemaTable(
                        "iap_customer_notes",
                        columns: [
                            id, userKey("user_id"), stamp("at"), key("actor"), SchemaColumn("text", .text).namingUsers(),
                            optionalKey("ticket").namingUsers(),
                            SchemaColumn(
                                "audit_id", .integer, defaultForExistingRows: "0",
                                references: SchemaReference(
                                    name: "fk_iap_customer_notes_audit", table: "iap_audit", column: "id")),
                        ],
                        indexes: [
                            SchemaIndex("idx_iap_customer_notes_user", ["user_id"]),
                            SchemaIndex("idx_iap_customer_notes_audit_id", ["audit_id"], forForeignKey: true),
                        ]))
            ]),
    ]

    /// The migration that rewrites every fact body into the one stored shape.
    public static let factBodiesMigrationName = "fact bodies: one canonical shape, read by name"

    /// Every (table, column) of the current schema whose free text may name a user
    /// (``SchemaColumn/namesUsers``): what `users forget` rewrites mention by mention.
    public static var userTextColumns: [(table: String, column: String)] {
        currentTables.flatMap { table in table.columns.filter(\.namesUsers).map { (table.name, $0.name) } }
    }

    /// Every (table, column) of the current schema that holds a user's id (``SchemaColumn/holdsUserId``):
    /// what `users forget` rewrites.
    public static var userIdColumns: [(table: String, column: String)] {
        currentTables.flatMap { table in table.columns.filter(\.holdsUserId).map { (table.name, $0.name) } }
    }

    /// The migration that adds grants of access by hand (`iap_grants`).
    public static let grantsMigrationName = "grants of access by hand (iap_grants)"

    /// The migration that adds customer notes (`iap_customer_notes`).
    public static let customerNotesMigrationName = "customer notes (iap_customer_notes)"

    /// The migration that makes every stored form readable and checked (schema v10).
    public static let readableStorageMigrationName =
        "readable storage: plain audit, ledger details and fact bodies; raw JWS as checked zstd frames; row digests"

    /// The newest version this build knows.
    public static var supported: Int { migrations.last?.version ?? 0 }

    /// Runs the migration's data steps written in Swift (the same on every backend), in order;
    /// after its DDL and before its drops, inside the migration's transaction.
    public static func runSwiftDataSteps(_ migration: SchemaMigration, _ connection: any SQLConnection) throws(StoreError) {
        for step in migration.steps {
            switch step {
            case .convertStoredForms: try StoredFormConversion.run(connection, afterBatch: { () throws(StoreError) in })
            case .rewriteFactBodies: try FactBodyConversion.run(connection)
            default: continue
            }
        }
    }

    /// Each migration with the tables it creates or changes, as they are after it.
    public static var tablesByMigration: [(migration: SchemaMigration, tables: [SchemaTable])] {
        var current: [SchemaTable] = []
        var result: [(SchemaMigration, [SchemaTable])] = []
        for migration in migrations {
            let (all, touched) = migration.applied(to: current)
            current = all
            result.append((migration, touched))
        }
        return result
    }

    /// Every table of the current schema, in order of creation.
    public static var currentTables: [SchemaTable] {
        migrations.reduce([]) { tables, migration in migration.applied(to: tables).all }
    }
}
