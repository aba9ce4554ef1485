import StoreSQL

/// SQLite's dialect: what differs from the other engines, as data.
extension SQLDialect {
    static let sqlite: SQLDialect = {
        var dialect = sqliteBase
        dialect.afterErasure = ["VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"]
        return dialect
    }()

    private static let sqliteBase = SQLDialect(
        beginRead: ["BEGIN DEFERRED"],
        // IMMEDIATE takes the write lock up front, so check-then-insert is safe across processes.
        beginWrite: ["BEGIN IMMEDIATE"],
        // BEGIN IMMEDIATE already holds the only write lock.
        forUpdate: "", locksRows: false,
        noLimit: -1,  // SQLite's `LIMIT -1` means no limit
        savepoint: "SAVEPOINT {name}", releaseSavepoint: "RELEASE {name}", rollbackToSavepoint: "ROLLBACK TO {name}",
        releaseAfterRollbackTo: true,
        insertIgnore: "INSERT OR IGNORE", onDuplicateDoNothing: "ON CONFLICT ({key}) DO NOTHING",
        schemaProbeBegin: "BEGIN DEFERRED",
        tableExists: "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?",
        commitOutcomeCanBeUnknown: false,
        typeNames: [
            .id: "INTEGER PRIMARY KEY", .string: "TEXT", .text: "TEXT", .longText: "TEXT", .integer: "INTEGER",
            .smallInteger: "INTEGER", .bytes: "BLOB", .longBytes: "BLOB",
        ],
        // INTEGER PRIMARY KEY without AUTOINCREMENT: the largest rowid + 1, and BEGIN IMMEDIATE
        // makes this transaction the only writer.
        nextIdFollowsLargest: true)
}

/// Tests reach the shared session by its old name.
typealias SQLiteSession = SQLSession
