import IAPFoundation
import SubscriptionModel

/// The product type Apple signed for a transaction, as the stored facts keep it: the newest
/// signed version of the transaction that names one. Found through the transaction's order
/// (`origin_no`) or its ledger rows (`originalTransactionId`); nil when the database does not know it.
public enum StoredProductType {
    public static func of(transactionId: String, in session: any StoreSession) throws -> ProductTypeName? {
        var originals: [String] = []
        if let origin = try session.order(tradeNo: transactionId)?.originNo { originals.append(origin) }
        for entry in try session.ledger(transactionIds: [transactionId], originalTransactionIds: [], appAccountTokens: []) {
            if let original = entry.originalTransactionId, !originals.contains(original) { originals.append(original) }
        }
        for original in originals {
            let versions = try session.facts(originalTransactionId: original)
                .filter { $0.kind == .transaction && $0.key == transactionId }
                .sorted { $0.signedDate > $1.signedDate }
            for fact in versions {
                if case .known(let type)? = try FactBody.transaction(fact.body, key: fact.key).type { return type }
            }
        }
        return nil
    }
}
