import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `restore [--apply [--dry-run]]` of one user's input items: each a device's restored signed
/// transaction or its StoreKit 1 app receipt (each in-app entry a restored transaction), verified,
/// then looked up by ``RestoreService`` (nothing written) or, with `--apply`, made true in the
/// database (``ClientSubmission/restore(_:raw:user:policy:reason:explicitOrder:service:store:context:dryRun:each:)``);
/// under `--apply` a refused item whose bytes could be read is kept in the ledger as `rejected`.
public struct RestoreSubmission {
    /// What `--apply` may do.
    public struct Apply {
        /// What may happen to another user's purchase.
        public let policy: RestorePolicy
        /// Why, for the audit trail (a policy other than `keep` needs one).
        public let reason: String?
        /// Everything is rolled back: the rows say what would happen.
        public let dryRun: Bool

        public init(policy: RestorePolicy = .keep, reason: String? = nil, dryRun: Bool = false) {
            self.policy = policy
            self.reason = reason
            self.dryRun = dryRun
        }
    }

    /// One row of an item's result: an item gives one, a receipt one per in-app entry.
    public enum Row {
        /// The item could not be read: nothing to keep.
        case unreadable(VerificationFailure)
        /// An app receipt that failed verification.
        case refusedReceipt(VerificationFailure)
        /// A valid app receipt without in-app entries: nothing to restore.
        case emptyReceipt
        /// A receipt entry without the ids the engine needs.
        case incompleteEntry(String)
        /// A receipt entry that is not restorable (cancelled when the receipt was made), and why.
        case skippedEntry(InAppPurchase, String)
        /// A JWS that failed verification as a signed transaction; the report says what it was.
        case refusedJWS(VerificationFailure, VerificationReport)
        /// A verified JWS that is not a signed transaction with the ids the engine needs.
        case notATransaction
        /// One restored transaction: the service's answer (under `--apply`, what it did).
        case restored(TransactionFacts, RestoreResult)

        /// The verdict: the service's for a restored transaction, `unknown` for an empty receipt,
        /// else `rejected`.
        public var verdict: RestoreVerdict {
            switch self {
            case .restored(_, let result): result.verdict
            case .emptyReceipt: .unknown
            default: .rejected
            }
        }

        public var outcome: ItemOutcome {
            switch self {
            case .unreadable(let failure), .refusedReceipt(let failure), .refusedJWS(let failure, _): ItemOutcome(failure)
            case .emptyReceipt: .notFound
            case .incompleteEntry, .notATransaction: .invalid
            case .skippedEntry: .failed
            case .restored(_, let result): ItemOutcome(result.verdict)
            }
        }

        /// Why the item was refused, as the ledger keeps it under `--apply` (nil for rows not kept
        /// on their own: entries of a receipt, restored transactions, what could not be read or
        /// held nothing).
        public var refusal: String? {
            switch self {
            case .refusedReceipt(let failure): "app receipt: " + failure.message
            case .refusedJWS(let failure, _): failure.message
            case .notATransaction: RestoreSubmission.notATransaction
            default: nil
            }
        }
    }

    /// Why a verified JWS that is not a usable signed transaction is refused.
    public static let notATransaction = "not a signed transaction with transactionId, originalTransactionId and productId"

    public let user: String
    /// The order `--order` names for the product fallback.
    public let explicitOrder: String?
    /// nil: look-ups only, nothing written.
    public let apply: Apply?
    public let store: any Store
    public let service: RestoreService
    public let context: EngineContext
    /// `received_at` of the ledger rows of refused items.
    public let clock: () -> Int64
    /// Under `--apply`: runs with an item's verified transactions before they are applied, in no
    /// transaction of the item's (`restore` asks Apple about a lapsed owner's contract here, so the
    /// policy decides on the database brought in line with Apple).
    public var beforeApply: (([TransactionFacts]) throws -> Void)?

    public init(
        user: String, explicitOrder: String? = nil, apply: Apply?, store: any Store,
        service: RestoreService = RestoreService(engine: SubscriptionEventEngine()), context: EngineContext,
        clock: @escaping () -> Int64 = Timestamp.now
    ) {
        self.user = user
        self.explicitOrder = explicitOrder
        self.apply = apply
        self.store = store
        self.service = service
        self.context = context
        self.clock = clock
    }

    /// One input item: verified, then each restored transaction looked up or, under `--apply`,
    /// applied, the item's transactions in one transaction (every entry of a receipt's subscription
    /// linked once one of them matches). `each` receives every row once final, in order (a
    /// receipt's refused entries before its restored ones); a refused item is kept in the ledger
    /// before its row is delivered.
    public func restore(_ item: WebhookBody.Item, verifiers: ClientVerifiers, each: (Row) throws -> Void) throws {
        let raw: String
        switch item.result {
        case .failure(let failure):
            try each(.unreadable(failure))
            return
        case .success(let token): raw = token
        }
        var restored: [TransactionFacts] = []
        if ReceiptInput.der(fromBase64: raw) != nil {
            let report = try verifiers.receipts().verify(base64: raw)
            guard let receipt = report.receipt, report.isValid else {
                try refuse(raw, .refusedReceipt(report.failure ?? VerificationFailure(.invalidContainer, "not a receipt")), each)
                return
            }
            if receipt.inApp.isEmpty {
                try each(.emptyReceipt)
                return
            }
            for entry in ReceiptMapping.entries(of: receipt) {
                switch ReceiptMapping.entry(entry, of: receipt) {
                case .facts(let facts): restored.append(facts)
                case .incomplete(let why): try each(.incompleteEntry(why))
                case .skipped(let why): try each(.skippedEntry(entry, why))
                }
            }
        } else {
            let report = try verifiers.jws().verify(raw, as: .transaction)
            if let failure = report.failure {
                try refuse(raw, .refusedJWS(failure, report), each)
                return
            }
            guard let payload = report.transaction, let tx = EventMapping.facts(payload) else {
                try refuse(raw, .notATransaction, each)
                return
            }
            restored = [tx]
        }
        if let apply {
            try beforeApply?(restored)
            try ClientSubmission.restore(
                restored, raw: raw, user: user, policy: apply.policy, reason: apply.reason, explicitOrder: explicitOrder,
                service: service, store: store, context: context, dryRun: apply.dryRun
            ) { tx, result in try each(.restored(tx, result)) }
        } else {
            let results = try restored.map { tx in
                try store.read { try service.lookup(tx, user: user, explicitOrder: explicitOrder, in: $0) }
            }
            let looked = Array(zip(restored, results))
            for (tx, found) in looked {
                var result = found
                // An entry nothing matches is linked with the one of its subscription that matches.
                if result.verdict == .unknown,
                    let anchor = looked.first(where: {
                        $0.0.originalTransactionId == tx.originalTransactionId && $0.1.verdict != .unknown
                    })
                {
                    result.detail +=
                        "; transaction \(anchor.0.transactionId) of the same subscription matched: applying links this one with it"
                }
                try each(.restored(tx, result))
            }
        }
    }

    /// A refused item: kept in the ledger under `--apply` (source `restore`), then reported.
    private func refuse(_ raw: String, _ row: Row, _ each: (Row) throws -> Void) throws {
        if let apply, let why = row.refusal {
            try ClientSubmission.reject(raw, why: why, source: .restore, store: store, dryRun: apply.dryRun, clock: clock)
        }
        try each(row)
    }
}
