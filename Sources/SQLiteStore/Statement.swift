internal import CSQLite
import StoreSQL
import SubscriptionModel

/// One prepared statement; owns its `sqlite3_stmt` and finalizes it once, in `deinit`.
///
/// Values are only ever bound (`sqlite3_bind_*`), never spliced into ``sql``.
final class Statement {
    let sql: String
    private let handle: OpaquePointer
    private let db: OpaquePointer

    /// Prepares `sql` on `db`; `persistent` hints SQLite that the statement is cached and reused.
    init(db: OpaquePointer, sql: String, persistent: Bool) throws(StoreError) {
        var stmt: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(db, sql, -1, flags, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            // On failure `stmt` is NULL; finalize(NULL) is a harmless no-op.
            sqlite3_finalize(stmt)
            throw SQLiteError.make(rc, db: db, sql: sql)
        }
        self.sql = sql
        self.handle = stmt
        self.db = db
    }

    deinit {
        // The return code only repeats the last step's error, which was already reported.
        sqlite3_finalize(handle)
    }

    // MARK: binding (1-based indexes)

    /// Binds a text value, or NULL for nil.
    func bind(_ value: String?, at index: Int32) throws(StoreError) {
        guard var value else { return try check(sqlite3_bind_null(handle, index)) }
        let rc = value.withUTF8 { bytes -> Int32 in
            // A NULL pointer would bind NULL, so the empty string gets a real (empty) buffer.
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, iapctl_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), iapctl_sqlite_transient())
            }
        }
        try check(rc)
    }

    /// Binds a blob, or NULL for nil.
    func bind(_ value: [UInt8]?, at index: Int32) throws(StoreError) {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        let rc = value.withUnsafeBytes { bytes -> Int32 in
            // A NULL pointer would bind NULL, so an empty blob gets zeroblob.
            guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), iapctl_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds an integer value, or NULL for nil.
    func bind(_ value: Int64?, at index: Int32) throws(StoreError) {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds a boolean as 0 or 1.
    func bind(_ value: Bool, at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, index, value ? 1 : 0))
    }

    /// Binds any ``SQLValue``.
    func bind(_ value: SQLValue, at index: Int32) throws(StoreError) {
        switch value {
        case .null: try check(sqlite3_bind_null(handle, index))
        case .int(let number): try bind(number, at: index)
        case .text(let text): try bind(text, at: index)
        case .bytes(let bytes): try bind(bytes, at: index)
        }
    }

    // MARK: stepping

    /// Advances to the next row: true when a row is available, false when done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError.make(rc, db: db, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(StoreError) {
        while try step() {}
    }

    /// Makes the statement reusable: resets it and clears its bindings.
    ///
    /// `sqlite3_reset`'s return code repeats the error of the last `step` (already thrown);
    /// `sqlite3_clear_bindings` always returns `SQLITE_OK`.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: columns (0-based indexes)

    /// The text in column `index`, or nil for NULL.
    func text(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        // column_text first, then column_bytes (SQLite's documented order).
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The bytes in column `index`, or nil for NULL.
    func blob(_ index: Int32) -> [UInt8]? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The integer in column `index`, or nil for NULL.
    func int64(_ index: Int32) -> Int64? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return sqlite3_column_int64(handle, index)
    }

    /// Column `index` of the current row as the value SQLite holds.
    func value(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .int(sqlite3_column_int64(handle, index))
        case SQLITE_BLOB: return .bytes(blob(index) ?? [])
        default: return .text(text(index) ?? "")
        }
    }

    /// The result's column names (the `AS` name, else the column's): read once per prepared
    /// statement (they do not change while it lives: a schema change re-prepares nothing here).
    private(set) lazy var columnNames: [String] = (0..<sqlite3_column_count(handle)).map(columnName)
    /// Where result rows say they come from (made once, not per row).
    private lazy var source = "SQL: \(sql)"

    /// Binds `values` at 1…, steps through every row, and resets the statement.
    func results(_ values: [SQLValue]) throws(StoreError) -> SQLResult {
        defer { reset() }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
        let count = sqlite3_column_count(handle)
        var rows: [SQLRow] = []
        while try step() {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(count))
            for index in 0..<count { values.append(value(index)) }
            rows.append(SQLRow(values: values, source: source))
        }
        return SQLResult(columns: columnNames, rows: rows)
    }

    /// The text in a NOT NULL column.
    func requiredText(_ index: Int32) throws(StoreError) -> String {
        guard let value = text(index) else { throw unexpectedNull(index) }
        return value
    }

    /// The integer in a NOT NULL column.
    func requiredInt64(_ index: Int32) throws(StoreError) -> Int64 {
        guard let value = int64(index) else { throw unexpectedNull(index) }
        return value
    }

    /// Decodes a NOT NULL text column into an enum, failing clearly on an unknown value.
    func required<E: RawRepresentable>(_ type: E.Type, _ index: Int32) throws(StoreError) -> E
    where E.RawValue == String {
        let raw = try requiredText(index)
        guard let value = E(rawValue: raw) else {
            throw .failure("unexpected value in column \(columnName(index)): \(String(reflecting: raw)) [SQL: \(sql)]")
        }
        return value
    }

    private func unexpectedNull(_ index: Int32) -> StoreError {
        .failure("unexpected NULL in column \(columnName(index)) [SQL: \(sql)]")
    }

    private func columnName(_ index: Int32) -> String {
        sqlite3_column_name(handle, index).map { String(cString: $0) } ?? "#\(index)"
    }

    private func check(_ rc: Int32) throws(StoreError) {
        guard rc == SQLITE_OK else { throw SQLiteError.make(rc, db: db, sql: sql) }
    }
}
