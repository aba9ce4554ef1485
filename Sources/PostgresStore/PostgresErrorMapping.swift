import SubscriptionModel

/// Maps PostgreSQL's SQLSTATE codes (and a lost connection) to ``StoreError`` cases; the commands
/// map those to exit codes. PostgreSQL aborts the whole transaction on any error; the store then
/// rolls it back and, for the codes below that say so, runs the whole unit again.
enum PostgresErrorMapping {
    /// The SQLSTATE codes this backend distinguishes.
    enum Code {
        static let uniqueViolation = "23505"
        static let serializationFailure = "40001"
        static let deadlock = "40P01"
        static let lockNotAvailable = "55P03"  // lock_timeout, NOWAIT
        static let queryCanceled = "57014"  // statement_timeout, a cancel request
        static let adminShutdown = "57P01"
        static let crashShutdown = "57P02"
        static let cannotConnectNow = "57P03"  // starting up, shutting down, in recovery
        static let readOnlyTransaction = "25006"  // a standby, or default_transaction_read_only
        static let inFailedTransaction = "25P02"
        static let tooManyConnections = "53300"
        static let diskFull = "53100"
        static let outOfMemory = "53200"
        static let ioError = "58030"
        static let invalidPassword = "28P01"
        static let invalidAuthorization = "28000"
        static let insufficientPrivilege = "42501"
        static let invalidCatalogName = "3D000"  // the database does not exist
        static let undefinedTable = "42P01"
        static let undefinedColumn = "42703"
        static let duplicateDatabase = "42P04"
        static let invalidStatementName = "26000"  // no prepared statement of that name
        static let duplicatePreparedStatement = "42P05"
    }

    /// True when the unit cannot go on and must be run again whole: the server rolled it back
    /// (deadlock, serialization failure), or it ended the session or cannot write (shutdown,
    /// failover to a standby that is read-only, a lost connection).
    static func rollsBackUnit(_ state: String?) -> Bool {
        guard let state else { return true }  // no SQLSTATE: the connection was lost
        return [
            Code.serializationFailure, Code.deadlock, Code.lockNotAvailable, Code.adminShutdown, Code.crashShutdown,
            Code.cannotConnectNow, Code.readOnlyTransaction,
        ].contains(state) || state.hasPrefix("08")
    }

    /// The ``StoreError`` for a failed statement: `state` its SQLSTATE (nil when the connection
    /// was lost and there is none), `message` the server's or libpq's text, `context` what was done
    /// where. An authentication failure's text is never echoed (iapctl says what failed in its own
    /// words; `context` names the URL, which holds no password).
    static func storeError(state: String?, message: String, context: String) -> StoreError {
        guard let state else {
            return .busy(
                "\(context): the connection to the server was lost (\(message)); the transaction was rolled back "
                    + "whole: retry (a failover or restart may be in progress)", .transactionLost)
        }
        let authentication = state == Code.invalidPassword || state == Code.invalidAuthorization
        let text =
            authentication
            ? "\(context): password authentication failed (SQLSTATE \(state))"
            : "\(context): \(message) (SQLSTATE \(state))"
        switch state {
        case Code.uniqueViolation:
            return .conflict(text)
        case Code.deadlock:
            return .busy(text + "; the transaction was rolled back: retry", .deadlock)
        case Code.serializationFailure:
            return .busy(text + "; the transaction was rolled back: retry", .deadlock)
        case Code.lockNotAvailable:
            return .busy(text + "; another transaction holds the rows: retry", .lockWaitTimeout)
        case Code.adminShutdown, Code.crashShutdown:
            return .busy(
                text + "; the server ended the session (a shutdown, restart or failover): the transaction was rolled "
                    + "back whole: retry", .transactionLost)
        case Code.cannotConnectNow:
            return .busy(text + "; the server is starting, stopping or in recovery: retry", .transactionLost)
        case Code.readOnlyTransaction:
            return .busy(
                text + "; the server is read-only (a standby, e.g. after a failover): the transaction was rolled back: "
                    + "retry, and list every host with target_session_attrs=read-write", .transactionLost)
        case Code.tooManyConnections:
            return .busy(text + "; retry later", .tooManyConnections)
        case Code.invalidPassword, Code.invalidAuthorization, Code.insufficientPrivilege:
            return .accessDenied(
                text + "; check the user, its password (PGPASSWORD, ~/.pgpass or a service file) and the grants")
        case Code.diskFull, Code.ioError:
            return .ioFailure(text + "; the server's disk may be full")
        case Code.invalidCatalogName:
            return .notFound(text + "; create it (iapctl db init) or fix the database name")
        case Code.invalidStatementName, Code.duplicatePreparedStatement:
            // This connection prepared the statement (or has not): only a pooler that hands the
            // transaction another server connection makes the server disagree.
            return .misconfigured(
                text + "; the server connection does not hold the statements iapctl prepared on its own: a pooler "
                    + "in transaction mode that does not track prepared statements (PgBouncer before 1.21, or "
                    + "without max_prepared_statements)? Set max_prepared_statements (PgBouncer 1.21 or later), use "
                    + "session mode, or connect to the server directly")
        case Code.undefinedTable, Code.undefinedColumn:
            return .schemaMismatch(text + "; the iapctl schema is missing or incomplete: run iapctl db init")
        case _ where state.hasPrefix("08"):
            return .busy(
                text + "; the connection was lost: the transaction was rolled back whole: retry", .transactionLost)
        default:
            return .failure(text)
        }
    }
}
