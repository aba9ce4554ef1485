import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionDerivation
import SubscriptionModel

/// Turns the in-app entries of a verified StoreKit 1 receipt into the engine's input: the same
/// ``TransactionFacts`` a signed transaction gives (the client path of `verify --apply` and
/// `restore`), flagged ``TransactionFacts/isFromReceipt`` so the engine treats them as a
/// lower-authority submission. The only place that knows both receipts and the engine.
public enum ReceiptMapping {
    /// One entry's facts, or why it cannot go to the engine.
    public enum Entry {
        case facts(TransactionFacts)
        /// Not applicable: the reason, for people (e.g. cancelled when the receipt was made).
        case skipped(String)
        /// Lacks the ids the engine needs.
        case incomplete(String)
    }

    /// The receipt's in-app entries oldest purchase first (ties by transaction id), the order in which
    /// they are applied and reported: the first purchase of a subscription is then the one the
    /// product fallback links, and its renewals follow by original transaction id.
    public static func entries(of receipt: AppReceipt) -> [InAppPurchase] {
        receipt.inApp.sorted {
            ($0.purchaseDate ?? Int64.max, $0.transactionId ?? "") < ($1.purchaseDate ?? Int64.max, $1.transactionId ?? "")
        }
    }

    /// The facts of in-app entry `entry` of `receipt`. The receipt's creation date stands for
    /// `signedDate` (it is when Apple signed what the entry says); there is no appAccountToken, price
    /// or product type in a receipt. An entry Apple had cancelled (refund) when the receipt was made
    /// is skipped: a receipt never revokes anything; Apple's notification does.
    public static func entry(_ entry: InAppPurchase, of receipt: AppReceipt) -> Entry {
        guard let id = entry.transactionId, !id.isEmpty, let original = entry.originalTransactionId, !original.isEmpty,
            let product = entry.productId, !product.isEmpty
        else {
            return .incomplete("the in-app entry lacks transaction_id, original_transaction_id or product_id")
        }
        if let cancelled = entry.cancellationDate {
            return .skipped(
                "transaction \(id) was cancelled on \(Timestamp.iso8601(cancelled)) according to the receipt; "
                    + "a receipt never revokes: apply Apple's REFUND notification")
        }
        var facts = TransactionFacts(
            transactionId: id, originalTransactionId: original, productId: product, appAccountToken: nil,
            purchaseDate: entry.purchaseDate, originalPurchaseDate: entry.originalPurchaseDate, expiresDate: entry.expiresDate,
            environment: receipt.environment, signedDate: receipt.creationDate)
        facts.isFromReceipt = true
        return .facts(facts)
    }

    /// Whether a ledger item came from a receipt (its raw text is a base64 PKCS#7 or a
    /// ``reference(to:)``, never a JWS, which starts `eyJ` and holds dots).
    public static func isReceipt(_ entry: LedgerEntry) -> Bool { entry.isReceiptSubmission }

    public static let referencePrefix = LedgerEntry.receiptReferencePrefix

    /// The ledger text of the second and later entries of one receipt: the receipt is kept once per
    /// submission, in the row of its first applied entry, and the others point there.
    public static func reference(to ledgerId: Int64) -> String { referencePrefix + String(ledgerId) }

    /// The ledger id a ``reference(to:)`` names.
    public static func referencedLedgerId(_ raw: String) -> Int64? {
        guard raw.hasPrefix(referencePrefix) else { return nil }
        return Int64(raw.dropFirst(referencePrefix.count))
    }

    /// The engine event of one entry's facts (source `client`, as `verify --apply` of a JWS); `raw`
    /// is the receipt's base64, kept in the ledger.
    public static func event(_ facts: TransactionFacts, receipt: AppReceipt, raw: String) -> SubscriptionEvent {
        SubscriptionEvent(
            source: .client, signedDate: receipt.creationDate, environment: receipt.environment, bundleId: receipt.bundleId,
            transaction: facts, raw: raw)
    }
}
