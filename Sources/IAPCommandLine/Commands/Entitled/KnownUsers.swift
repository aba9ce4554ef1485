import FoundationEssentials
import SubscriptionEngine
import SubscriptionModel

/// Whether a user appears in the database at all, so that `entitled --user typo` is not a plain "no".
enum KnownUsers {
    /// The owner in an audited order's or contract's snapshot (JSON of the row).
    private struct Owner: Decodable {
        var userId: String?
    }

    /// True when `user` has an order or a contract, or had one (the audit trail holds a snapshot
    /// naming them: a contract transferred away). The audit is read only when the first two are
    /// empty, that is for a typo or a user whose every record moved.
    static func contains(_ user: String, in session: any StoreSession) throws -> Bool {
        if try !session.orders(matching: OrderFilter(userId: user, limit: 1)).isEmpty { return true }
        if try !session.contracts(matching: ContractFilter(userId: user, limit: 1)).isEmpty { return true }
        let decoder = JSONDecoder()
        for entry in try session.auditEntries(matching: AuditFilter())
        where entry.entity == .order || entry.entity == .contract {
            for json in [entry.before, entry.after].compactMap({ $0 })
            where (try? decoder.decode(Owner.self, from: Data(json.utf8)))?.userId == user {
                return true
            }
        }
        return false
    }
}
