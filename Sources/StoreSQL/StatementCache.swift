import SubscriptionModel

/// One connection's prepared statements by their text: each prepared once and reused. Texts whose
/// shape varies with a number of values (IN lists) are kept apart, at most `shapedLimit` of them.
public struct StatementCache<Statement> {
    private var plain: [String: Statement] = [:]
    private var shaped: [String: Statement] = [:]
    private let shapedLimit: Int

    public init(shapedLimit: Int = .max) { self.shapedLimit = shapedLimit }

    /// The statement for `sql`, made by `prepare` on first use.
    public mutating func statement(
        _ sql: String, shaped isShaped: Bool = false, prepare: (String) throws(StoreError) -> Statement
    ) throws(StoreError) -> Statement {
        if let cached = isShaped ? shaped[sql] : plain[sql] { return cached }
        let statement = try prepare(sql)
        if isShaped {
            if shaped.count >= shapedLimit { shaped.removeAll() }
            shaped[sql] = statement
        } else {
            plain[sql] = statement
        }
        return statement
    }

    /// Drops every statement (before the connection closes: they belong to it).
    public mutating func removeAll() {
        shaped.removeAll()
        plain.removeAll()
    }
}
