import SubscriptionModel

/// A table of the store over a column table (``ModelColumn``: name ↔ property): the statements that read
/// and write whole rows are generated from it, and rows are read back by column name.
public struct SQLTable<Row>: @unchecked Sendable {
    public let name: String
    /// `id` first, then the written columns, in the schema's order.
    public let columns: [ModelColumn<Row>]
    /// A row every column of which is then read from the result.
    private let blank: Row

    /// `INSERT INTO <table> (<every column but id>) VALUES (?, …)`, made once (the statement cache
    /// finds its prepared statement by this text at every row written).
    public let insert: String
    /// Rewrites every column of the row with `id = ?`.
    public let update: String

    public init(_ name: String, blank: Row, _ columns: [ModelColumn<Row>]) {
        precondition(columns.first?.name == "id", "a column table starts with id")
        self.name = name
        self.blank = blank
        self.columns = columns
        let written = columns.dropFirst().map(\.name)
        insert =
            "INSERT INTO \(name) (\(written.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: written.count).joined(separator: ", ") + ")"
        update = "UPDATE \(name) SET \(written.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
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

    /// ``insert`` of `rows` rows in one statement (`VALUES (…), (…)`): the values of each row's
    /// ``insertValues(_:)`` one after the other.
    public func insert(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: writtenNames.count).joined(separator: ", ") + ")"
        return "INSERT INTO \(name) (\(writtenNames.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// The values of ``insert``'s placeholders.
    public func insertValues(_ row: Row) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(columns.count)
        // By index: iterating would copy each column (its closures and names retained and released).
        for index in columns.indices.dropFirst() { values.append(SQLValue(columns[index].value(of: row))) }
        return values
    }

    /// The values of ``update``'s placeholders (the id last).
    public func updateValues(_ row: Row) -> [SQLValue] {
        var values = insertValues(row)
        values.append(SQLValue(columns[0].value(of: row)))
        return values
    }

    /// The result's rows as values, each column found by its name.
    public func decode(_ result: SQLResult) throws(StoreError) -> [Row] {
        var positions: [Int] = []
        positions.reserveCapacity(columns.count)
        for column in columns {
            // The engines return the names as the statement spells them (lower case): compared
            // as they are first, without a lower-cased copy of each.
            guard
                let index = result.columns.firstIndex(of: column.name)
                    ?? result.columns.firstIndex(where: { $0.lowercased() == column.name })
            else {
                throw .failure("column \(column.name) of \(name) is missing from the result [\(result.columns)]")
            }
            positions.append(index)
        }
        var rows: [Row] = []
        rows.reserveCapacity(result.rows.count)
        for fetched in result.rows {
            var row = blank
            for at in columns.indices {
                try columns[at].read(fetched.values[positions[at]].columnValue, into: &row, source: fetched.source)
            }
            rows.append(row)
        }
        return rows
    }
}
