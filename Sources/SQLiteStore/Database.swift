internal import CSQLite
import StoreSQL
import SubscriptionEngine

/// One SQLite connection; owns its `sqlite3*` and closes it once, in `deinit`.
///
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`): one connection belongs to one thread at a time.
final class Database {
    let path: String
    let handle: OpaquePointer
    /// Prepared statements reused across calls, keyed by their SQL text.
    private var statements = StatementCache<Statement>()

    /// Opens `path` with `flags` (`SQLITE_OPEN_*`); the error mapping is the caller's.
    init(path: String, flags: Int32) throws(StoreError) {
        // libsqlite3 is loaded here, on the first database opened (CSQLite), not at start.
        try SQLiteError.requireLibrary()
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_EXRESCODE, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError.make(rc, db: db, sql: nil)
            // A handle is usually returned even on failure and must still be closed.
            sqlite3_close_v2(db)
            throw error
        }
        self.path = path
        self.handle = db
        let ext = sqlite3_extended_result_codes(db, 1)
        guard ext == SQLITE_OK else { throw SQLiteError.make(ext, db: db, sql: nil) }
        // For the migration that recomputes the facts' digests (whoever runs its script).
        try registerFactDigestFunction()
    }

    deinit {
        statements.removeAll()  // finalize every cached statement before closing
        // close_v2 never fails with SQLITE_BUSY: outstanding statements make it a zombie closed later.
        let rc = sqlite3_close_v2(handle)
        assert(rc == SQLITE_OK, "sqlite3_close_v2 failed: \(rc)")
    }

    /// Sets the busy handler: a locked database is retried for up to `milliseconds` before `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) throws(StoreError) {
        let rc = sqlite3_busy_timeout(handle, milliseconds)
        guard rc == SQLITE_OK else { throw SQLiteError.make(rc, db: handle, sql: nil) }
    }

    /// The cached prepared statement for `sql`, preparing it on first use. Call `reset()` after use.
    /// `shaped`: the text varies with a number of values (IN lists; never with values).
    func cached(_ sql: String, shaped: Bool = false) throws(StoreError) -> Statement {
        try statements.statement(sql, shaped: shaped) { [handle] sql throws(StoreError) in
            try Statement(db: handle, sql: sql, persistent: true)
        }
    }

    /// A one-off prepared statement (not cached).
    func prepare(_ sql: String) throws(StoreError) -> Statement {
        try Statement(db: handle, sql: sql, persistent: false)
    }

    /// Runs one cached statement that returns no rows (BEGIN, COMMIT, SAVEPOINT…).
    func execute(_ sql: String) throws(StoreError) {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.run()
    }

    /// Runs a script of statements without parameters (schema DDL only; never built from values).
    func executeScript(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard rc == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            throw SQLiteError.map(rc, message: message, sql: sql)
        }
    }

    /// The first column of the first row of `sql` as text (PRAGMAs).
    func scalarText(_ sql: String) throws(StoreError) -> String? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    /// The first column of the first row of `sql` as an integer.
    func scalarInt(_ sql: String) throws(StoreError) -> Int64? {
        let statement = try cached(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// Rowid of the last successful INSERT on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT/UPDATE/DELETE.
    var changes: Int32 { sqlite3_changes(handle) }

    /// True when no transaction is open (SQLite may roll back by itself after some errors).
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }
}

extension Database: SQLConnection {
    func query(_ sql: String, _ values: [SQLValue], shaped: Bool) throws(StoreError) -> SQLResult {
        try cached(sql, shaped: shaped).results(values)
    }

    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64) {
        _ = try cached(sql).results(values)
        return (Int64(changes), lastInsertRowID)
    }

    var inTransaction: Bool { !isAutocommit }

    /// SQLite never rolls back behind the caller's back without leaving autocommit on.
    var transactionAborted: StoreError? { nil }

    func transactionWillBegin() {}
}
