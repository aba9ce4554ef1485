internal import CMariaDB
import SubscriptionModel

/// Turns the connection's and statements' native errors into ``StoreError`` values (never quoting
/// an authentication failure's text: see ``MySQLErrorMapping/storeError(code:sqlState:message:context:)``),
/// and remembers when the server rolled the whole transaction back.
final class ErrorReporter {
    /// Set when an error meant the server rolled back the open transaction (deadlock, lost
    /// connection); the store then refuses to go on (or commit) inside that transaction.
    var transactionAborted: StoreError?
    /// Seconds a cluster node that cannot take writes is tried again (the connection's I/O timeout).
    var clusterRetrySeconds: Double = 60

    func connectionError(_ handle: UnsafeMutablePointer<MYSQL>, context: String) -> StoreError {
        let code = mysql_errno(handle)
        let message = mysql_error(handle).map { String(cString: $0) } ?? ""
        let state = mysql_sqlstate(handle).map { String(cString: $0) } ?? ""
        return make(code: code, sqlState: state, message: message, context: context)
    }

    func statementError(_ stmt: UnsafeMutablePointer<MYSQL_STMT>, context: String) -> StoreError {
        let code = mysql_stmt_errno(stmt)
        let message = mysql_stmt_error(stmt).map { String(cString: $0) } ?? ""
        let state = mysql_stmt_sqlstate(stmt).map { String(cString: $0) } ?? ""
        return make(code: code, sqlState: state, message: message, context: context)
    }

    /// The MySQL error number of the last error reported (0: none yet).
    var lastCode: UInt32 = 0

    private func make(code: UInt32, sqlState: String, message: String, context: String) -> StoreError {
        lastCode = code
        guard code != 0 else { return .failure(context + ": unknown MySQL error") }
        let error = MySQLErrorMapping.storeError(
            code: code, sqlState: sqlState, message: message, context: context, clusterRetrySeconds: clusterRetrySeconds)
        if MySQLErrorMapping.rollsBackTransaction(code), transactionAborted == nil {
            transactionAborted = error
        }
        return error
    }

    /// The error for a transaction the server ended without an error on the statement (a
    /// cluster's brute-force abort seen only as a warning, no transaction open after a statement),
    /// remembered so nothing more runs or commits in it.
    func transactionLost(_ why: String, context: String) -> StoreError {
        let error = StoreError.busy(
            "\(context): the server ended the transaction under this write (\(why)); it was rolled back whole: retry",
            .transactionLost)
        if transactionAborted == nil { transactionAborted = error }
        return error
    }
}
