import StoreSQL

/// The schema (``StoreSchema``, shared by every backend) rendered in PostgreSQL's DDL. PostgreSQL's
/// DDL is transactional: ``PostgresStore/migrate(then:)`` runs every pending migration's DDL, its
/// data steps, its drops, the caller's work and the version rows in ONE transaction, under an
/// advisory lock, so a kill anywhere leaves no trace and `db init` from several processes at
/// once runs one after the other.
enum Schema {
    /// One migration as PostgreSQL runs it.
    struct Migration: Sendable {
        let version: Int
        let name: String
        /// DDL and data steps in SQL, in order (``StoredFormConversion`` runs after them).
        let statements: [String]
        /// Whether the Swift conversion of older stored forms runs after ``statements``.
        let convertsStoredForms: Bool
        /// DDL run after the data step (its drops).
        let afterData: [String]
    }

    static let dialect = SQLDialect.postgres

    /// The data steps written per engine (``SchemaStep/update(sqlite:mysql:)``) in PostgreSQL's
    /// SQL, by migration version. Every `.update` step needs one (a test checks it).
    static let updates: [Int: String] = [
        // The facts' digest as schema v7 stored it: the first 32 hex digits of the SHA-256 of the
        // fact's identity (as MySQL's SHA2 form; v10 turns them into base64url).
        7: "UPDATE iap_facts SET digest = left(encode(sha256(convert_to(kind || '|' || fact_key || '|' || "
            + "original_transaction_id || '|' || signed_date::text || '|' || CASE source WHEN 'apple' THEN 'apple' "
            + "WHEN 'apple_api' THEN 'apple_api' ELSE 'app' END || '|' || body, 'UTF8')), 'hex'), 32)"
    ]

    /// Ordered, as ``StoreSchema/migrations``.
    static let migrations: [Migration] = StoreSchema.migrations.map(render)

    /// The newest version this build knows.
    static var supported: Int { StoreSchema.migrations.last?.version ?? 0 }

    static func render(_ migration: SchemaMigration) -> Migration {
        Migration(
            version: migration.version, name: migration.name,
            statements: migration.steps.flatMap { render($0, version: migration.version, ifMissing: migration.ifMissing) },
            convertsStoredForms: migration.steps.contains(.convertStoredForms),
            afterData: migration.steps.flatMap { step -> [String] in
                switch step {
                case .dropColumns(let table, let columns): return columns.map { "ALTER TABLE \(table) DROP COLUMN \($0)" }
                case .dropTable(let table): return ["DROP TABLE IF EXISTS \(table)"]
                default: return []
                }
            })
    }

    static func render(_ step: SchemaStep, version: Int, ifMissing: Bool) -> [String] {
        let guarded = ifMissing ? "IF NOT EXISTS " : ""
        switch step {
        case .createTable(let table):
            var lines = table.columns.map { "    " + definition($0) }
            lines.append("    PRIMARY KEY (id)")
            lines += table.indexes.filter(\.unique).map {
                "    CONSTRAINT \($0.name) UNIQUE (\($0.columns.joined(separator: ", ")))"
            }
            lines += table.columns.compactMap { column in
                column.allowedCondition.map { "    CONSTRAINT ck_\(table.name)_\(column.name) CHECK (\($0))" }
            }
            lines += table.columns.compactMap { column in
                column.references.map {
                    "    CONSTRAINT \($0.name) FOREIGN KEY (\(column.name)) REFERENCES \($0.table) (\($0.column))"
                }
            }
            let create = "CREATE TABLE \(guarded)\(table.name) (\n" + lines.joined(separator: ",\n") + "\n)"
            // PostgreSQL does not index a foreign key's column by itself: the schema's index is made.
            let indexes = table.indexes.filter { !$0.unique }.map {
                "CREATE INDEX \(guarded)\($0.name) ON \(table.name) (\($0.columns.joined(separator: ", ")))"
            }
            return [create] + indexes
        case .addColumns(let table, let columns):
            return columns.map { column in
                "ALTER TABLE \(table) ADD COLUMN \(definition(column))"
                    + (column.defaultForExistingRows.map { " DEFAULT \($0)" } ?? "")
            }
        case .insertIgnoring(let table, let columns, let select):
            return ["INSERT INTO \(table) (\(columns.joined(separator: ", "))) \(select) ON CONFLICT DO NOTHING"]
        case .update:
            guard let sql = updates[version] else {
                preconditionFailure("migration \(version) has a data step without a PostgreSQL form (Schema.updates)")
            }
            return [sql]
        case .withoutRowId, .convertStoredForms, .rewriteFactBodies, .dropColumns, .dropTable:
            return []  // SQLite's storage only; the conversion and the drops run after the statements
        }
    }

    /// `name TYPE [NOT NULL]`.
    static func definition(_ column: SchemaColumn) -> String {
        var text = "\(column.name) \(dialect.typeName(column.type))"
        if !column.nullable, column.type.kind != .id { text += " NOT NULL" }
        return text
    }
}
