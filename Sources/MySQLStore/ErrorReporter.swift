internal import CMariaDB
import SubscriptionEngine

/// Turns the connection's and statements' native errors into ``StoreError`` values (never quoting
/// an authentication failure's text: see ``MySQLErrorMapping/storeError(code:sqlState:message:context:)``),
/// and remembers when the server rolled the whole transaction back.
final class ErrorReporter {
    /// Set when an error meant the server rolled back the open transaction (deadlock, lost
    /// connection); the store then refuses to go on (or commit) inside that transaction.
    var transactionAborted: StoreError?

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

    private func make(code: UInt32, sqlState: String, message: String, context: String) -> StoreError {
        guard code != 0 else { return .failure(context + ": unknown MySQL error") }
        let error = MySQLErrorMapping.storeError(
            code: code, sqlState: sqlState, message: message, context: context)
        if MySQLErrorMapping.rollsBackTransaction(code), transactionAborted == nil {
            transactionAborted = error
        }
        return error
    }
}
