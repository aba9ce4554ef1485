import StoreSQL

/// MySQL/MariaDB's dialect: what differs from the other engines, as data.
extension SQLDialect {
    static let mysql = SQLDialect(
        // A listing is one point in time: REPEATABLE READ with a consistent snapshot.
        beginRead: [
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
        ],
        // The marker savepoint is released before COMMIT (``SQLDialect/beforeCommit``): if the
        // server ended the transaction under the unit, it is missing (1305) and nothing commits.
        beginWrite: ["START TRANSACTION READ WRITE", "SAVEPOINT \(unitMarker)"],
        // Locking reads in write transactions: a concurrent writer of the same row waits for our
        // commit and then reads the committed row (no lost updates).
        forUpdate: " FOR UPDATE", locksRows: true,
        noLimit: Int64.max,
        savepoint: "SAVEPOINT {name}", releaseSavepoint: "RELEASE SAVEPOINT {name}",
        rollbackToSavepoint: "ROLLBACK TO SAVEPOINT {name}", releaseAfterRollbackTo: false,
        // Savepoint names depend on the nesting depth only: the next item's SAVEPOINT replaces a
        // kept one, and a ROLLBACK TO an outer one drops it (one round trip less per item).
        releaseKeptSavepoint: false,
        // A no-op update instead of an error, so a concurrent insert of the same key is no conflict.
        insertIgnore: "INSERT IGNORE", onDuplicateDoNothing: "ON DUPLICATE KEY UPDATE {key} = {key}",
        schemaProbeBegin: nil,
        tableExists: "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
        // After a lost connection nobody can tell whether the server committed.
        commitOutcomeCanBeUnknown: true,
        typeNames: [
            .id: "BIGINT NOT NULL AUTO_INCREMENT", .string: "VARCHAR({size})", .text: "TEXT", .longText: "MEDIUMTEXT",
            .integer: "BIGINT", .smallInteger: "TINYINT", .bytes: "VARBINARY({size})", .longBytes: "MEDIUMBLOB",
        ],
        beforeCommit: ["RELEASE SAVEPOINT \(unitMarker)"])

    /// MariaDB's: MySQL's, and an INSERT can return a result (10.5+, the oldest server supported).
    static let mariadb: SQLDialect = {
        var dialect = SQLDialect.mysql
        dialect.insertReturning = true
        return dialect
    }()

    /// The savepoint that marks a write unit's own transaction.
    static let unitMarker = "iapctl_unit"
}

/// MySQL/MariaDB's own statements beyond the shared ones (session settings, the migration lock).
enum MySQLSQL {
    static let migrationLock = "SELECT GET_LOCK(?, ?)"
    static let migrationUnlock = "SELECT RELEASE_LOCK(?)"
    static let currentDatabase = "SELECT DATABASE()"
    static let lockWaitTimeout = "SET SESSION innodb_lock_wait_timeout = ?"
    static let capLockWaitTimeout = "SET SESSION innodb_lock_wait_timeout = LEAST(@@SESSION.innodb_lock_wait_timeout, ?)"
}
