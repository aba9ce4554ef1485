import SubscriptionModel

/// The ids the shell completion scripts offer (`iapctl __complete KIND PREFIX`): distinct user ids,
/// contract ids or order numbers that start with a prefix, in order, read through the indexes on
/// those columns (a range, not a scan).
public enum CompletedIds: String, CaseIterable, Sendable {
    case users, contracts, orders

    /// The query: the ids from `prefix` (inclusive) up to `prefix` followed by the highest code point,
    /// then `LIMIT ?`.
    var sql: String {
        switch self {
        case .users:
            "SELECT user_id FROM orders WHERE user_id >= ? AND user_id < ? "
                + "UNION SELECT user_id FROM member_contracts WHERE user_id >= ? AND user_id < ? ORDER BY 1 LIMIT ?"
        case .contracts:
            "SELECT contract_id FROM member_contracts WHERE contract_id >= ? AND contract_id < ? ORDER BY 1 LIMIT ?"
        case .orders: "SELECT no FROM orders WHERE no >= ? AND no < ? ORDER BY 1 LIMIT ?"
        }
    }
}

extension SQLSession {
    /// At most `limit` ids of `kind` that start with `prefix` (exactly: a collation that compares
    /// without case may bring others into the range; they are left out).
    public func completedIds(_ kind: CompletedIds, prefix: String, limit: Int) throws(StoreError) -> [String] {
        let range: [SQLValue] = [.text(prefix), .text(prefix + "\u{10FFFF}")]
        let values = (kind == .users ? range + range : range) + [.int(Int64(limit))]
        var ids: [String] = []
        for row in try query(kind.sql, values).rows {
            if let id = try row.optionalText(0), id.hasPrefix(prefix) { ids.append(id) }
        }
        return ids
    }
}
