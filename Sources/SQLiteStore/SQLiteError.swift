internal import CSQLite
import SubscriptionEngine

/// Maps SQLite result codes to ``StoreError``; messages carry SQLite's text, never the SQL or bound values.
enum SQLiteError {
    /// Loads libsqlite3 (on the first call; see CSQLite) and throws, naming the library and the Debian
    /// package, when it or one of the functions iapctl calls is missing.
    static func requireLibrary() throws(StoreError) {
        if let message = iapctl_sqlite_unavailable() { throw .libraryUnavailable(String(cString: message)) }
    }

    /// The error for result code `code` (extended) on connection `db`, raised while running `sql`.
    static func make(_ code: Int32, db: OpaquePointer?, sql: String?) -> StoreError {
        let message: String
        if let db, sqlite3_errcode(db) != SQLITE_OK {
            message = String(cString: sqlite3_errmsg(db))
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        return map(code, message: message, sql: sql)
    }

    /// Maps an extended result code and its message to a ``StoreError``.
    static func map(_ code: Int32, message: String, sql: String?) -> StoreError {
        switch code & 0xFF {
        case SQLITE_CONSTRAINT:
            if code == iapctl_sqlite_constraint_unique() || code == iapctl_sqlite_constraint_primarykey() {
                return .conflict("duplicate \(constrainedColumns(message)) (\(message))")
            }
            return .failure("constraint violated: \(message)")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(
                "database is busy: \(message) (another process held the lock past the timeout; retry)", .lockedPastTimeout)
        case SQLITE_CANTOPEN:
            return .unavailable("cannot open database: \(message)")
        case SQLITE_CORRUPT:
            return .failure("the database file is corrupt: \(message)")
        case SQLITE_NOTADB:
            return .failure("the file is not an SQLite database: \(message)")
        case SQLITE_READONLY:
            return .accessDenied(
                "the database is read-only for this user (\(message)): look-ups work, changes need write access "
                    + "to the file and its folder")
        case SQLITE_PERM, SQLITE_AUTH:
            return .accessDenied("database refused access: \(message)")
        case SQLITE_FULL, SQLITE_IOERR:
            return .ioFailure("cannot write the database (\(message)): the disk may be full")
        default:
            return .failure("SQLite error \(code): \(message)")
        }
    }

    /// `orders.trade_no` from SQLite's "UNIQUE constraint failed: orders.trade_no".
    static func constrainedColumns(_ message: String) -> String {
        let marker = "constraint failed: "
        guard let range = message.firstRange(of: marker) else { return "value" }
        return String(message[range.upperBound...])
    }
}
