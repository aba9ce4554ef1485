import StoreSQL
import SubscriptionModel

/// What the connected database has: tables, columns and indexes (from `information_schema`).
struct SchemaSnapshot {
    struct Index {
        let unique: Bool
        let columns: [String]
    }

    /// Lower-cased table name → lower-cased column names.
    var columns: [String: Set<String>] = [:]
    /// Lower-cased table name → lower-cased column name → its `DATA_TYPE` (`varchar`, `tinyint`…).
    var types: [String: [String: String]] = [:]
    /// Lower-cased table name → indexes.
    var indexes: [String: [Index]] = [:]

    static let tablesSQL = """
        SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
        """
    static let columnsSQL = """
        SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
        """
    static let indexesSQL = """
        SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS \
        WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX
        """

    /// Reads the current database's schema.
    static func read(_ connection: Connection) throws(StoreError) -> SchemaSnapshot {
        var snapshot = SchemaSnapshot()
        for row in try connection.rows(tablesSQL) {
            snapshot.columns[try row.text(0).lowercased(), default: []] = []
        }
        for row in try connection.rows(columnsSQL) {
            let table = try row.text(0).lowercased()
            let column = try row.text(1).lowercased()
            snapshot.columns[table, default: []].insert(column)
            snapshot.types[table, default: [:]][column] = try row.text(2).lowercased()
        }
        // Rows come ordered by table, index and position: consecutive rows with the same table
        // and index name form one index.
        var keys: [(table: String, name: String)] = []
        var built: [(unique: Bool, columns: [String])] = []
        for row in try connection.rows(indexesSQL) {
            let table = try row.text(0).lowercased()
            let name = try row.text(1)
            let unique = try row.int(2) == 0
            let column = try row.text(4).lowercased()
            if let last = keys.last, last.table == table, last.name == name {
                built[built.count - 1].columns.append(column)
            } else {
                keys.append((table, name))
                built.append((unique, [column]))
            }
        }
        for (key, index) in zip(keys, built) {
            snapshot.indexes[key.table, default: []].append(Index(unique: index.unique, columns: index.columns))
        }
        return snapshot
    }

    func hasTable(_ name: String) -> Bool { columns[name.lowercased()] != nil }

    func has(column: String, in table: String) -> Bool {
        columns[table.lowercased()]?.contains(column.lowercased()) ?? false
    }

    /// True when an index on `table` serves `spec`: same leading columns (all of them, exactly, for a
    /// unique index, which must itself be unique).
    func satisfies(_ spec: IndexSpec, in table: String) -> Bool {
        let wanted = spec.columns.map { $0.lowercased() }
        let existing = indexes[table.lowercased()] ?? []
        if wanted == ["id"] { return true }
        return existing.contains { index in
            if spec.unique { return index.unique && index.columns == wanted }
            return index.columns.starts(with: wanted)
        }
    }
}

/// The statements that bring a database from a snapshot to the schema, and the items it lacks.
enum SchemaPlan {
    /// One step: the statement and the item it adds (for `db status`).
    struct Step: Equatable {
        let item: String
        let statement: String
    }

    /// The columns of existing tables whose type cannot hold what iapctl stores (a shop's
    /// `status TINYINT`, `user_id BIGINT`, dates in `INT`), each with how to migrate it.
    static func incompatibleColumns(for tables: [TableSpec], in snapshot: SchemaSnapshot) -> [String] {
        var found: [String] = []
        for table in tables {
            guard let types = snapshot.types[table.name.lowercased()] else { continue }
            for column in table.columns {
                guard let actual = types[column.name.lowercased()] else { continue }
                let wanted = column.definition.prefix { $0 != " " && $0 != "(" }.lowercased()
                let accepted: Set<String>
                switch wanted {
                case "varchar", "text", "mediumtext":
                    accepted = ["varchar", "char", "text", "tinytext", "mediumtext", "longtext"]
                case "bigint": accepted = ["bigint"]
                case "tinyint": accepted = ["tinyint", "smallint", "mediumint", "int", "bigint", "bit"]
                default: accepted = [wanted]
                }
                // A raw JWS or audit JSON needs MEDIUMTEXT (TEXT holds 64 KB).
                let tooSmallText = wanted == "mediumtext" && ["text", "tinytext", "varchar", "char"].contains(actual)
                guard !accepted.contains(actual) || tooSmallText else { continue }
                let definition = column.definition.replacing(" AUTO_INCREMENT", with: "")
                found.append(
                    "column \(table.name).\(column.name) is \(actual.uppercased()), iapctl needs \(definition): "
                        + "convert its values, then ALTER TABLE \(table.name) MODIFY \(column.name) \(definition)")
            }
        }
        return found
    }

    /// Steps for `tables` against `snapshot`: CREATE TABLE for a missing table; ADD COLUMN / ADD
    /// INDEX for what an existing table lacks. Never a DROP or a change of an existing column.
    static func steps(for tables: [TableSpec], in snapshot: SchemaSnapshot) -> [Step] {
        var steps: [Step] = []
        for table in tables {
            guard snapshot.hasTable(table.name) else {
                steps.append(Step(item: "table \(table.name)", statement: table.createStatement))
                continue
            }
            for column in table.columns where !snapshot.has(column: column.name, in: table.name) {
                steps.append(
                    Step(
                        item: "column \(table.name).\(column.name)",
                        statement: "ALTER TABLE \(table.name) ADD COLUMN \(column.name) \(column.addDefinition)"))
            }
            for index in table.indexes where !snapshot.satisfies(index, in: table.name) {
                steps.append(
                    Step(
                        item: "\(index.itemName) on \(table.name)",
                        statement: "ALTER TABLE \(table.name) ADD \(index.clause)"))
            }
        }
        return steps
    }
}
