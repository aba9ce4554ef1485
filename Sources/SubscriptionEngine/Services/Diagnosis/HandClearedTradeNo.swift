import IAPFoundation
import SubscriptionModel

extension Diagnosis {
    /// The hand change (not the engine's) that cleared `order`'s trade_no most recently, and the
    /// transaction it cleared, when the ledger still holds that transaction's signed facts.
    static func tradeNoClearedByHand(_ order: Order, in session: any StoreSession) throws -> (
        audit: Int64, transactionId: String
    )? {
        let entries = try session.audit(entity: .order, key: order.no)
        for entry in entries.sorted(by: { $0.id > $1.id }) {
            guard let field = entry.changedFields.first(where: { $0.column == "trade_no" }) else { continue }
            // The newest change of trade_no decides: only a hand change to empty is undone.
            guard entry.ledgerId == nil, case .string(let cleared)? = field.before, !cleared.isEmpty,
                field.after.map({ $0.isNull || $0 == .string("") }) ?? true
            else { return nil }
            let signed = try session.ledger(transactionIds: [cleared], originalTransactionIds: [], appAccountTokens: [])
            return signed.isEmpty ? nil : (entry.id, cleared)
        }
        return nil
    }
}
