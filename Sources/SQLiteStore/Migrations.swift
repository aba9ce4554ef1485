import StoreSQL

/// One ordered, recorded schema step as SQLite runs it.
struct Migration: Sendable {
    let version: Int
    let name: String
    /// DDL only: no values are ever part of it.
    let script: String
    /// DDL run after the migration's data step (its drops); empty for most.
    var afterData: String = ""
}

/// The schema (``StoreSchema``, shared by every backend) rendered in SQLite's DDL. SQLite's DDL is
/// transactional: ``SQLiteStore/migrate(then:)`` runs every pending script, the data steps, the
/// caller's work and the version rows inside one write transaction.
enum Migrations {
    static let tableDDL = """
        CREATE TABLE IF NOT EXISTS iap_schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at INTEGER NOT NULL
        )
        """

    static let all: [Migration] = StoreSchema.migrations.map { migration in
        let statements = migration.steps.flatMap { render($0, ifMissing: migration.ifMissing) }
        return Migration(
            version: migration.version, name: migration.name,
            script: statements.map { $0 + ";\n" }.joined(),
            afterData: afterData(migration).map { $0 + ";\n" }.joined())
    }

    /// The newest version this build knows (without rendering ``all``: opening a store needs only
    /// this, and rendering every script was 1.9 M instructions of each `notify` process).
    static var supported: Int { StoreSchema.migrations.last?.version ?? 0 }

    private static let dialect = SQLDialect.sqlite

    static func render(_ step: SchemaStep, ifMissing: Bool) -> [String] {
        let guarded = ifMissing ? "IF NOT EXISTS " : ""
        switch step {
        case .createTable(let table):
            // A one-column unique index is the column's UNIQUE; a wider one a table constraint.
            let uniqueColumns = Set(table.indexes.filter { $0.unique && $0.columns.count == 1 }.map { $0.columns[0] })
            var lines = table.columns.map { "    " + definition($0, unique: uniqueColumns.contains($0.name)) }
            lines += table.indexes.filter { $0.unique && $0.columns.count > 1 }.map {
                "    UNIQUE (\($0.columns.joined(separator: ", ")))"
            }
            let create = "CREATE TABLE \(guarded)\(table.name) (\n" + lines.joined(separator: ",\n") + "\n)"
            // SQLite needs no index of its own for a foreign key.
            let indexes = table.indexes.filter { !$0.unique && !$0.forForeignKey }.map {
                "CREATE INDEX \(guarded)\($0.name) ON \(table.name) (\($0.columns.joined(separator: ", ")))"
            }
            return [create] + indexes
        case .addColumns(let table, let columns):
            return columns.map { column in
                "ALTER TABLE \(table) ADD COLUMN \(definition(column, unique: false))"
                    + (column.defaultForExistingRows.map { " DEFAULT \($0)" } ?? "")
            }
        case .insertIgnoring(let table, let columns, let select):
            return ["\(dialect.insertIgnore) INTO \(table) (\(columns.joined(separator: ", ")))\n\(select)"]
        case .update(let sqlite, _):
            return [sqlite]
        case .withoutRowId(let table, let key):
            // Rebuilt (SQLite cannot change a table's storage in place): copied, dropped, renamed.
            let rebuilt = "iapctl_rebuild_" + table.name
            let columns = table.columns.map { column in
                if column.type.kind == .id { return "    \(column.name) INTEGER" }
                return "    " + definition(column, unique: false) + (column.name == key ? " PRIMARY KEY" : "")
            }
            let names = table.columns.map(\.name).joined(separator: ", ")
            return [
                "CREATE TABLE \(rebuilt) (\n" + columns.joined(separator: ",\n") + "\n) WITHOUT ROWID",
                "INSERT INTO \(rebuilt) (\(names)) SELECT \(names) FROM \(table.name)",
                "DROP TABLE \(table.name)",
                "ALTER TABLE \(rebuilt) RENAME TO \(table.name)",
            ]
                + table.indexes.filter { !($0.unique && $0.columns == [key]) && !$0.forForeignKey }.map {
                    "CREATE \($0.unique ? "UNIQUE " : "")INDEX \($0.name) ON \(table.name) (\($0.columns.joined(separator: ", ")))"
                }
        case .convertStoredForms, .rewriteFactBodies, .dropColumns, .dropTable:
            return []  // after the script: see afterData(_:)
        }
    }

    /// The statements of a migration that run after its data step (``StoredFormConversion``): its drops.
    static func afterData(_ migration: SchemaMigration) -> [String] {
        migration.steps.flatMap { step -> [String] in
            switch step {
            case .dropColumns(let table, let columns): return columns.map { "ALTER TABLE \(table) DROP COLUMN \($0)" }
            case .dropTable(let table): return ["DROP TABLE IF EXISTS \(table)"]
            default: return []
            }
        }
    }

    /// `name TYPE [NOT NULL] [UNIQUE] [CHECK (…)] [REFERENCES t (c)]`.
    private static func definition(_ column: SchemaColumn, unique: Bool) -> String {
        var text = "\(column.name) \(dialect.typeName(column.type))"
        if !column.nullable, column.type.kind != .id { text += " NOT NULL" }
        if unique { text += " UNIQUE" }
        if let condition = column.allowedCondition { text += " CHECK (\(condition))" }
        if let reference = column.references { text += " REFERENCES \(reference.table) (\(reference.column))" }
        return text
    }
}
