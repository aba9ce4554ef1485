import SubscriptionModel

/// Maps MySQL/MariaDB error numbers to ``StoreError`` cases (the commands map those to exit codes).
enum MySQLErrorMapping {
    /// Server and client error numbers this backend distinguishes.
    enum Code {
        static let duplicateEntry: UInt32 = 1062  // ER_DUP_ENTRY
        static let diskFull: UInt32 = 1021  // ER_DISK_FULL
        static let tableFull: UInt32 = 1114  // ER_RECORD_FILE_FULL
        static let errorOnWrite: UInt32 = 1026  // ER_ERROR_ON_WRITE
        static let duplicateEntryWithKeyName: UInt32 = 1586  // ER_DUP_ENTRY_WITH_KEY_NAME
        static let lockWaitTimeout: UInt32 = 1205  // ER_LOCK_WAIT_TIMEOUT
        static let deadlock: UInt32 = 1213  // ER_LOCK_DEADLOCK
        static let databaseAccessDenied: UInt32 = 1044  // ER_DBACCESS_DENIED_ERROR
        static let accessDenied: UInt32 = 1045  // ER_ACCESS_DENIED_ERROR
        static let tableAccessDenied: UInt32 = 1142  // ER_TABLEACCESS_DENIED_ERROR
        static let columnAccessDenied: UInt32 = 1143  // ER_COLUMNACCESS_DENIED_ERROR
        static let specificAccessDenied: UInt32 = 1227  // ER_SPECIFIC_ACCESS_DENIED_ERROR
        static let accessDeniedNoPassword: UInt32 = 1698  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
        static let unknownDatabase: UInt32 = 1049  // ER_BAD_DB_ERROR
        static let noSuchTable: UInt32 = 1146  // ER_NO_SUCH_TABLE
        static let badField: UInt32 = 1054  // ER_BAD_FIELD_ERROR
        static let socketConnect: UInt32 = 2002  // CR_CONNECTION_ERROR
        static let tcpConnect: UInt32 = 2003  // CR_CONN_HOST_ERROR
        static let unknownHost: UInt32 = 2005  // CR_UNKNOWN_HOST
        static let serverGone: UInt32 = 2006  // CR_SERVER_GONE_ERROR
        static let serverLost: UInt32 = 2013  // CR_SERVER_LOST
        static let serverLostExtended: UInt32 = 2055  // CR_SERVER_LOST_EXTENDED
        static let disconnectedByServer: UInt32 = 4031  // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
        static let serverShutdown: UInt32 = 1053  // ER_SERVER_SHUTDOWN
        static let connectionKilled: UInt32 = 1927  // ER_CONNECTION_KILLED (MariaDB)
        static let tooManyConnections: UInt32 = 1040  // ER_CON_COUNT_ERROR
        static let queryInterrupted: UInt32 = 1317  // ER_QUERY_INTERRUPTED
        static let readOnlyTransaction: UInt32 = 1792  // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
        static let savepointMissing: UInt32 = 1305  // ER_SP_DOES_NOT_EXIST (iapctl calls no procedures)
        static let errorDuringCommit: UInt32 = 1180  // ER_ERROR_DURING_COMMIT (Galera: not in the primary component)
        static let nodeNotReady: UInt32 = 1047  // ER_UNKNOWN_COM_ERROR (Galera: WSREP has not yet prepared node)
        static let tableExists: UInt32 = 1050  // ER_TABLE_EXISTS_ERROR
        static let duplicateColumn: UInt32 = 1060  // ER_DUP_FIELDNAME
        static let duplicateKeyName: UInt32 = 1061  // ER_DUP_KEYNAME
        static let duplicateForeignKey: UInt32 = 1826  // ER_FK_DUP_NAME
        static let cantDropFieldOrKey: UInt32 = 1091  // ER_CANT_DROP_FIELD_OR_KEY
        static let unknownTable: UInt32 = 1051  // ER_BAD_TABLE_ERROR
    }

    /// True when a schema step failed because another `db init` made the same change first (two
    /// runs on two Galera nodes, whose `GET_LOCK` holds per node only): something added exists
    /// already, something dropped is gone already, the version row is there, or the two collided.
    /// Plan again from the schema as it is now and go on.
    static func isSchemaRace(_ code: UInt32) -> Bool {
        [
            Code.tableExists, Code.duplicateColumn, Code.duplicateKeyName, Code.duplicateForeignKey, Code.duplicateEntry,
            Code.cantDropFieldOrKey, Code.unknownTable, Code.deadlock,
        ].contains(code)
    }

    /// True when the unit's transaction cannot go on: the server rolled it back whole (deadlock,
    /// lost connection, a cluster that refused it), or may have (an interrupted statement, a missing
    /// savepoint), or kept it with one statement undone (a lock wait timeout). The store then rolls
    /// back and the whole unit is run again from the start, never continued or committed.
    static func rollsBackTransaction(_ code: UInt32) -> Bool {
        [
            Code.deadlock, Code.lockWaitTimeout, Code.queryInterrupted, Code.savepointMissing, Code.errorDuringCommit,
            Code.nodeNotReady,
        ].contains(code) || isConnectionLoss(code)
    }

    static func isConnectionLoss(_ code: UInt32) -> Bool {
        [
            Code.serverGone, Code.serverLost, Code.serverLostExtended, Code.disconnectedByServer,
            Code.serverShutdown, Code.connectionKilled,
        ].contains(code)
    }

    /// The ``StoreError`` for error `code` with server/client `message`, about `context`.
    ///
    /// Redaction is structural: the text of an authentication failure (1045, 1698) — the one
    /// exchange the password takes part in — is never echoed; iapctl says what failed in its own
    /// words, and `context` names user and host (from the URL, which holds no password). Every
    /// other server text quotes only names and SQL iapctl sent, which never carry the password,
    /// so it is kept verbatim (no search-and-replace that would mangle it or reveal the password).
    /// `clusterRetrySeconds`: how long a cluster that cannot take writes is tried again (1047, 1180).
    static func storeError(
        code: UInt32, sqlState: String, message: String, context: String, clusterRetrySeconds: Double = 60
    ) -> StoreError {
        let authentication = code == Code.accessDenied || code == Code.accessDeniedNoPassword
        var text = authentication ? "\(context): access denied (MySQL error \(code)" : "\(context): \(message) (MySQL error \(code)"
        if !sqlState.isEmpty, sqlState != "00000", sqlState != "HY000" { text += ", SQLSTATE \(sqlState)" }
        text += ")"
        switch code {
        case Code.duplicateEntry, Code.duplicateEntryWithKeyName:
            return .conflict(text)
        case Code.lockWaitTimeout:
            return .busy(text + "; another transaction holds the rows: retry", .lockWaitTimeout)
        case Code.deadlock:
            return .busy(text + "; the transaction was rolled back: retry", .deadlock)
        case Code.queryInterrupted, Code.savepointMissing:
            return .busy(
                text + "; the server ended the transaction (a cluster abort or KILL QUERY): it was rolled back whole: retry",
                .transactionLost)
        case Code.errorDuringCommit, Code.nodeNotReady:
            return .busy(
                text + "; the database node cannot take writes now (a cluster node outside the primary component "
                    + "or not yet synced): the transaction was rolled back: retry, or use another node",
                .clusterUnavailable(retryForSeconds: clusterRetrySeconds))
        case Code.tooManyConnections:
            return .busy(text + "; retry later", .tooManyConnections)
        case Code.accessDenied, Code.databaseAccessDenied, Code.tableAccessDenied, Code.columnAccessDenied,
            Code.specificAccessDenied, Code.accessDeniedNoPassword:
            return .accessDenied(text + "; check the user, IAPCTL_DB_PASSWORD or the option file, and the grants")
        case Code.diskFull, Code.tableFull, Code.errorOnWrite:
            return .ioFailure(text + "; the server's disk may be full")
        case Code.unknownDatabase:
            return .notFound(text + "; create it (iapctl db init) or fix the database name")
        case Code.noSuchTable, Code.badField:
            return .schemaMismatch(text + "; the iapctl schema is missing or incomplete: run iapctl db init")
        case Code.socketConnect, Code.tcpConnect, Code.unknownHost:
            return .unavailable(text + "; is the server running and reachable? retry when it is")
        case _ where isConnectionLoss(code):
            return .unavailable(text + "; the connection was lost: retry")
        default:
            return .failure(text)
        }
    }
}
