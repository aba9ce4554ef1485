import StoreSQL

/// A column as MySQL's DDL needs it (rendered from ``StoreSchema`` by ``Schema``), so `migrate()` can
/// create what is missing and add what an existing (seed) table lacks, without ever dropping or
/// rewriting anything.
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
    /// Idempotent data steps (e.g. a backfill), run in the transaction that records the version,
    /// after every pending migration's tables exist.
    var statements: [String] = []
    /// What the migration drops after its data step, each only where it exists.
    var drops: [MySQLDrop] = []
}

/// A column (or, `column` nil, a table) a migration drops after its data step.
struct MySQLDrop: Sendable, Equatable {
    let table: String
    let column: String?

    var statement: String {
        column.map { "ALTER TABLE \(table) DROP COLUMN \($0)" } ?? "DROP TABLE IF EXISTS \(table)"
    }

    /// Whether there is something to drop in `snapshot`.
    func applies(to snapshot: SchemaSnapshot) -> Bool {
        guard let column else { return snapshot.hasTable(table) }
        return snapshot.has(column: column, in: table)
    }
}

/// The schema (``StoreSchema``, shared by every backend) rendered in MySQL's DDL. MySQL commits DDL
/// implicitly, so a migration here is the tables it ensures, completed step by step (``SchemaPlan``).
enum Schema {
    static let tableOptions = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC"

    static let migrationsTable = StoreSQL.migrationsTable
    static let migrationsTableDDL = StoreSQL.serverMigrationsTableDDL(tableOptions: tableOptions)

    private static let dialect = SQLDialect.mysql

    /// Ordered, as ``StoreSchema/migrations``.
    static let migrations: [MySQLMigration] = StoreSchema.tablesByMigration.map { migration, tables in
        MySQLMigration(
            version: migration.version, name: migration.name, tables: tables.map(render),
            statements: migration.steps.compactMap { step in
                switch step {
                case .insertIgnoring(let table, let columns, let select):
                    return "\(dialect.insertIgnore) INTO \(table) (\(columns.joined(separator: ", "))) " + select
                case .update(_, let mysql): return mysql
                case .createTable, .addColumns, .convertStoredForms, .rewriteFactBodies, .withoutRowId, .dropColumns, .dropTable:
                    return nil
                }
            },
            drops: migration.steps.flatMap { step -> [MySQLDrop] in
                switch step {
                case .dropColumns(let table, let columns): return columns.map { MySQLDrop(table: table, column: $0) }
                case .dropTable(let table): return [MySQLDrop(table: table, column: nil)]
                default: return []
                }
            })
    }

    /// The newest version this build knows.
    static var supported: Int { migrations.last?.version ?? 0 }

    /// Every table of the current schema.
    static var currentTables: [TableSpec] { StoreSchema.currentTables.map(render) }

    static func render(_ table: SchemaTable) -> TableSpec {
        TableSpec(
            name: table.name,
            columns: table.columns.map { column in
                if column.type.kind == .id {
                    let definition = dialect.typeName(column.type)
                    // An AUTO_INCREMENT column added to an existing table must be a key.
                    return ColumnSpec(column.name, definition, whenAdded: definition + " UNIQUE KEY")
                }
                let definition = dialect.typeName(column.type) + (column.nullable ? " NULL" : " NOT NULL")
                return ColumnSpec(
                    column.name, definition,
                    whenAdded: column.defaultForExistingRows.map { definition + " DEFAULT \($0)" })
            },
            // InnoDB needs an index on a foreign key's column: it is part of the table here.
            indexes: table.indexes.map { IndexSpec(name: $0.name, columns: $0.columns, unique: $0.unique) },
            constraints: table.columns.compactMap { column in
                column.allowedCondition.map { "CONSTRAINT ck_\(table.name)_\(column.name) CHECK (\($0))" }
            }
                + table.columns.compactMap { column in
                    column.references.map {
                        "CONSTRAINT \($0.name) FOREIGN KEY (\(column.name)) REFERENCES \($0.table) (\($0.column))"
                    }
                })
    }
}
