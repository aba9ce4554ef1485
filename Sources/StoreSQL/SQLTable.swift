import SubscriptionEngine

/// One column of a row type: its name in the database and the property that holds it. Reading
/// and binding both go through it, so a column is declared once.
public struct SQLColumn<Row>: @unchecked Sendable {
    public let name: String
    /// The property is a `Bool` (stored as 0 or 1): shown as a boolean.
    public let isFlag: Bool
    let read: (inout Row, SQLValue, String) throws(StoreError) -> Void
    let value: (Row) -> SQLValue

    public init<V: SQLColumnValue>(_ name: String, _ path: WritableKeyPath<Row, V>) {
        self.name = name
        isFlag = V.self == Bool.self || V.self == Bool?.self
        read = { row, value, source throws(StoreError) in
            row[keyPath: path] = try V(sql: value, column: name, source: source)
        }
        value = { $0[keyPath: path].sqlValue }
    }

    /// The value `row` stores in this column.
    public func value(of row: Row) -> SQLValue { value(row) }
}

/// The column table of one row type: the table's name, its `id` key and every other column in
/// the schema's order. The statements that read and write whole rows are generated from it, and
/// rows are read back by column name.
public struct SQLTable<Row>: @unchecked Sendable {
    public let name: String
    /// `id` first, then the written columns.
    public let columns: [SQLColumn<Row>]
    /// A row every column of which is then read from the result.
    private let blank: Row

    public init(_ name: String, blank: Row, id: WritableKeyPath<Row, Int64>, _ columns: [SQLColumn<Row>]) {
        self.name = name
        self.blank = blank
        self.columns = [SQLColumn("id", id)] + columns
    }

    public var columnNames: [String] { columns.map(\.name) }
    /// Every column but `id`, in order: what an insert writes.
    public var writtenNames: [String] { columnNames.dropFirst().map { $0 } }

    /// `id, a, b…`, or `t.id AS id, t.a AS a…` for a table alias.
    public func selectList(alias: String? = nil) -> String {
        guard let alias else { return columnNames.joined(separator: ", ") }
        return columnNames.map { "\(alias).\($0) AS \($0)" }.joined(separator: ", ")
    }

    /// `SELECT <every column> FROM <table>` followed by `rest` (a WHERE/ORDER clause or empty).
    public func select(_ rest: String = "") -> String {
        "SELECT \(selectList()) FROM \(name)" + (rest.isEmpty ? "" : " " + rest)
    }

    public var insert: String {
        "INSERT INTO \(name) (\(writtenNames.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: writtenNames.count).joined(separator: ", ") + ")"
    }

    /// Rewrites every column of the row with `id = ?`.
    public var update: String {
        "UPDATE \(name) SET \(writtenNames.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
    }

    /// The values of ``insert``'s placeholders.
    public func insertValues(_ row: Row) -> [SQLValue] { columns.dropFirst().map { $0.value(row) } }

    /// The values of ``update``'s placeholders (the id last).
    public func updateValues(_ row: Row) -> [SQLValue] { insertValues(row) + [columns[0].value(row)] }

    /// The result's rows as values, each column found by its name.
    public func decode(_ result: SQLResult) throws(StoreError) -> [Row] {
        var positions: [Int] = []
        for column in columns {
            guard let index = result.columns.firstIndex(where: { $0.lowercased() == column.name }) else {
                throw .failure("column \(column.name) of \(name) is missing from the result [\(result.columns)]")
            }
            positions.append(index)
        }
        var rows: [Row] = []
        rows.reserveCapacity(result.rows.count)
        for fetched in result.rows {
            var row = blank
            for (column, index) in zip(columns, positions) {
                try column.read(&row, fetched.values[index], fetched.source)
            }
            rows.append(row)
        }
        return rows
    }
}
