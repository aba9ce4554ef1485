internal import CMariaDB
import StoreSQL
import SubscriptionModel

/// One server-side prepared statement (`MYSQL_STMT`), owned here and closed once in `deinit`.
///
/// Values are always bound to `?` placeholders. Result columns are bound once, at prepare time
/// (``ResultColumns``): integer columns as `BIGINT`, everything else as text into a growable buffer.
final class PreparedStatement {
    let sql: String
    private let stmt: UnsafeMutablePointer<MYSQL_STMT>
    private let errors: ErrorReporter
    private let trips: RoundTripCounter
    let parameterCount: Int
    /// Nil for a statement without a result set. An `INSERT … RETURNING` is prepared by MariaDB
    /// without its columns (MDEV-27013): they are bound after its first execute instead.
    private var columns: ResultColumns?
    /// The result's column names (the `AS` name, else the column's).
    var columnNames: [String] { columns?.names ?? [] }

    /// Prepares `sql` on `connection`'s handle.
    init(
        connection: UnsafeMutablePointer<MYSQL>, sql: String, errors: ErrorReporter, trips: RoundTripCounter
    ) throws(StoreError) {
        self.sql = sql
        self.errors = errors
        self.trips = trips
        guard let stmt = mysql_stmt_init(connection) else {
            throw errors.connectionError(connection, context: "cannot allocate a statement [SQL: \(sql)]")
        }
        self.stmt = stmt
        trips.add("PREPARE " + sql)
        let utf8 = Array(sql.utf8)
        let rc = utf8.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                mysql_stmt_prepare(stmt, $0, UInt(buffer.count))
            }
        }
        if rc != 0 {
            let error = errors.statementError(stmt, context: "cannot prepare [SQL: \(sql)]")
            _ = mysql_stmt_close(stmt)
            throw error
        }
        parameterCount = Int(mysql_stmt_param_count(stmt))
        if mysql_stmt_field_count(stmt) > 0 {
            do {
                columns = try ResultColumns(stmt, sql: sql, errors: errors)
            } catch {
                _ = mysql_stmt_close(stmt)
                throw error
            }
        }
    }

    deinit {
        // Also frees any result still buffered; the handle is closed exactly once, here (the
        // result buffers after it, with `columns`).
        _ = mysql_stmt_close(stmt)
    }

    /// Runs the statement with `parameters` bound; returns the rows (empty for statements without
    /// a result set).
    @discardableResult
    func query(_ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try execute(parameters)
        if columns == nil, mysql_stmt_field_count(stmt) > 0 {
            columns = try ResultColumns(stmt, sql: sql, errors: errors)
        }
        guard let columns else { return [] }
        guard mysql_stmt_store_result(stmt) == 0 else {
            throw errors.statementError(stmt, context: "cannot read the result [SQL: \(sql)]")
        }
        defer { _ = mysql_stmt_free_result(stmt) }
        var rows: [SQLRow] = []
        while true {
            let rc = mysql_stmt_fetch(stmt)
            if rc == MYSQL_NO_DATA { break }
            guard rc == 0 || rc == MYSQL_DATA_TRUNCATED else {
                throw errors.statementError(stmt, context: "cannot fetch a row [SQL: \(sql)]")
            }
            rows.append(SQLRow(values: try columns.currentRow(), source: sql))
        }
        return rows
    }

    /// Runs a statement without a result set; returns the rows it matched and the new AUTO_INCREMENT id.
    @discardableResult
    func run(_ parameters: [SQLValue]) throws(StoreError) -> (affectedRows: UInt64, insertId: Int64) {
        try execute(parameters)
        if mysql_stmt_field_count(stmt) > 0 {
            // Not expected; drain so the statement can be reused.
            _ = mysql_stmt_free_result(stmt)
        }
        return (mysql_stmt_affected_rows(stmt), Int64(bitPattern: mysql_stmt_insert_id(stmt)))
    }

    // MARK: private

    private func execute(_ parameters: [SQLValue]) throws(StoreError) {
        guard parameters.count == parameterCount else {
            throw .failure(
                "programmer error: \(parameters.count) values for \(parameterCount) placeholders [SQL: \(sql)]")
        }
        let count = max(parameterCount, 1)
        let binds = UnsafeMutablePointer<MYSQL_BIND>.allocate(capacity: count)
        binds.initialize(repeating: MYSQL_BIND(), count: count)
        var owned: [UnsafeMutableRawPointer] = []
        defer {
            for buffer in owned { buffer.deallocate() }
            binds.deallocate()
        }
        for (i, value) in parameters.enumerated() {
            switch value {
            case .null:
                binds[i].buffer_type = MYSQL_TYPE_NULL
            case .int(let number):
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
                buffer.storeBytes(of: number, as: Int64.self)
                owned.append(buffer)
                binds[i].buffer_type = MYSQL_TYPE_LONGLONG
                binds[i].buffer = buffer
            case .text(let text):
                let bytes = Array(text.utf8)
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                owned.append(buffer)
                binds[i].buffer_type = MYSQL_TYPE_STRING
                binds[i].buffer = buffer
                binds[i].buffer_length = UInt(bytes.count)
            case .bytes(let bytes):
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                bytes.withUnsafeBytes { if let base = $0.baseAddress { buffer.copyMemory(from: base, byteCount: $0.count) } }
                owned.append(buffer)
                binds[i].buffer_type = MYSQL_TYPE_BLOB
                binds[i].buffer = buffer
                binds[i].buffer_length = UInt(bytes.count)
            }
        }
        if parameterCount > 0, mysql_stmt_bind_param(stmt, binds) != 0 {
            throw errors.statementError(stmt, context: "cannot bind values [SQL: \(sql)]")
        }
        trips.add(sql)
        guard mysql_stmt_execute(stmt) == 0 else {
            throw errors.statementError(stmt, context: "statement failed [SQL: \(sql)]")
        }
    }
}

/// A prepared statement's result columns and the buffers they are fetched into, registered with
/// `mysql_stmt_bind_result`: valid while the statement is (its owner frees them after closing it).
private final class ResultColumns {
    let stmt: UnsafeMutablePointer<MYSQL_STMT>
    let sql: String
    let errors: ErrorReporter
    let columnCount: Int
    let columnIsInteger: [Bool]
    /// Binary columns (character set 63, `binary`) are read as bytes, not text.
    let columnIsBinary: [Bool]
    let names: [String]
    private let resultBinds: UnsafeMutablePointer<MYSQL_BIND>
    private let integers: UnsafeMutablePointer<Int64>
    private let lengths: UnsafeMutablePointer<UInt>
    private let nulls: UnsafeMutablePointer<my_bool>
    private let truncated: UnsafeMutablePointer<my_bool>
    private let textBuffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private static let textBufferSize = 512

    /// Reads `stmt`'s result metadata and binds a buffer to each column.
    init(_ stmt: UnsafeMutablePointer<MYSQL_STMT>, sql: String, errors: ErrorReporter) throws(StoreError) {
        self.stmt = stmt
        self.sql = sql
        self.errors = errors
        columnCount = Int(mysql_stmt_field_count(stmt))
        var isInteger: [Bool] = []
        var isUnsigned: [Bool] = []
        var isBinary: [Bool] = []
        var names: [String] = []
        guard let metadata = mysql_stmt_result_metadata(stmt) else {
            throw errors.statementError(stmt, context: "no result metadata [SQL: \(sql)]")
        }
        defer { mysql_free_result(metadata) }
        guard let fields = mysql_fetch_fields(metadata) else { throw StoreError.failure("no result fields [SQL: \(sql)]") }
        for i in 0..<columnCount {
            let type = fields[i].type
            let integerTypes = [
                MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_LONG, MYSQL_TYPE_LONGLONG, MYSQL_TYPE_INT24,
            ]
            isInteger.append(integerTypes.contains(type))
            isUnsigned.append(fields[i].flags & UInt32(UNSIGNED_FLAG) != 0)
            let binaryTypes = [
                MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_BLOB, MYSQL_TYPE_MEDIUM_BLOB, MYSQL_TYPE_LONG_BLOB,
                MYSQL_TYPE_VAR_STRING, MYSQL_TYPE_STRING, MYSQL_TYPE_VARCHAR,
            ]
            isBinary.append(binaryTypes.contains(type) && fields[i].charsetnr == 63)
            names.append(fields[i].name.map { String(cString: $0) } ?? "")
        }
        columnIsInteger = isInteger
        columnIsBinary = isBinary
        self.names = names

        let count = max(columnCount, 1)
        resultBinds = .allocate(capacity: count)
        resultBinds.initialize(repeating: MYSQL_BIND(), count: count)
        integers = .allocate(capacity: count)
        integers.initialize(repeating: 0, count: count)
        lengths = .allocate(capacity: count)
        lengths.initialize(repeating: 0, count: count)
        nulls = .allocate(capacity: count)
        nulls.initialize(repeating: 0, count: count)
        truncated = .allocate(capacity: count)
        truncated.initialize(repeating: 0, count: count)
        textBuffers = .allocate(capacity: count)
        textBuffers.initialize(repeating: nil, count: count)

        for i in 0..<columnCount {
            resultBinds[i].length = lengths + i
            resultBinds[i].is_null = nulls + i
            resultBinds[i].error = truncated + i
            if isInteger[i] {
                resultBinds[i].buffer_type = MYSQL_TYPE_LONGLONG
                resultBinds[i].buffer = UnsafeMutableRawPointer(integers + i)
                resultBinds[i].is_unsigned = isUnsigned[i] ? 1 : 0
            } else {
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.textBufferSize, alignment: 8)
                textBuffers[i] = buffer
                resultBinds[i].buffer_type = MYSQL_TYPE_STRING
                resultBinds[i].buffer = buffer
                resultBinds[i].buffer_length = UInt(Self.textBufferSize)
            }
        }
        if columnCount > 0, mysql_stmt_bind_result(stmt, resultBinds) != 0 {
            throw errors.statementError(stmt, context: "cannot bind the result columns [SQL: \(sql)]")
        }
    }

    deinit {
        for i in 0..<max(columnCount, 1) { textBuffers[i]?.deallocate() }
        textBuffers.deallocate()
        truncated.deallocate()
        nulls.deallocate()
        lengths.deallocate()
        integers.deallocate()
        resultBinds.deallocate()
    }

    /// Copies the fetched row out of the bound buffers, fetching long text columns in full.
    func currentRow() throws(StoreError) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(columnCount)
        for i in 0..<columnCount {
            if nulls[i] != 0 {
                values.append(.null)
            } else if columnIsInteger[i] {
                values.append(.int(integers[i]))
            } else {
                let length = Int(lengths[i])
                let bytes: [UInt8]
                if length <= Self.textBufferSize {
                    bytes = Array(UnsafeRawBufferPointer(start: textBuffers[i], count: length))
                } else {
                    bytes = try fetchLong(column: i, length: length)
                }
                values.append(columnIsBinary[i] ? .bytes(bytes) : .text(String(decoding: bytes, as: UTF8.self)))
            }
        }
        return values
    }

    private func fetchLong(column: Int, length: Int) throws(StoreError) -> [UInt8] {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 1)
        defer { buffer.deallocate() }
        let fetchedLength = UnsafeMutablePointer<UInt>.allocate(capacity: 1)
        fetchedLength.initialize(to: 0)
        defer { fetchedLength.deallocate() }
        let bind = UnsafeMutablePointer<MYSQL_BIND>.allocate(capacity: 1)
        bind.initialize(to: MYSQL_BIND())
        defer { bind.deallocate() }
        bind.pointee.buffer_type = MYSQL_TYPE_STRING
        bind.pointee.buffer = buffer
        bind.pointee.buffer_length = UInt(length)
        bind.pointee.length = fetchedLength
        guard mysql_stmt_fetch_column(stmt, bind, UInt32(column), 0) == 0 else {
            throw errors.statementError(stmt, context: "cannot fetch column \(column + 1) [SQL: \(sql)]")
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: min(Int(fetchedLength.pointee), length)))
    }
}
