import SubscriptionModel

/// What one backend's connection offers the shared session and transaction runner. Values are
/// always bound to `?` placeholders; statements are prepared once and reused by their text.
public protocol SQLConnection: AnyObject {
    /// Runs a statement without values or rows (transaction control, savepoints, DDL).
    func execute(_ sql: String) throws(StoreError)
    /// Runs a query with `values` bound. `shaped`: the text varies with the number of values (IN
    /// lists), so the backend may keep fewer of them prepared.
    func query(_ sql: String, _ values: [SQLValue], shaped: Bool) throws(StoreError) -> SQLResult
    /// Runs an INSERT/UPDATE/DELETE with `values` bound: the rows it changed (matched) and the id
    /// of the row it inserted.
    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64)
    /// False when no transaction is open any more (an engine may roll back by itself after an error).
    var inTransaction: Bool { get }
    /// Set when an error made the server roll the whole open transaction back (deadlock, lost
    /// connection): nothing may run or commit in that transaction any more.
    var transactionAborted: StoreError? { get }
    /// Called before a transaction begins: forget the previous transaction's abort.
    func transactionWillBegin()
}

extension SQLConnection {
    public func query(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) -> SQLResult {
        try query(sql, values, shaped: false)
    }
}
