import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// The client path through the one engine: `verify --apply` of a signed transaction or of a
/// StoreKit 1 receipt's in-app entries, and `restore --apply` of a device's restored transactions.
public enum ClientSubmission {
    /// What became of a verified JWS submitted with `verify --apply`.
    public enum TransactionResult {
        /// Not a signed transaction (a notification, renewal info…): nothing changed, kept in the
        /// ledger as `rejected`.
        case notATransaction(PayloadKind)
        /// A transaction without transactionId, originalTransactionId or productId: nothing
        /// changed, kept in the ledger as `rejected`.
        case incomplete
        /// Its fields do not fit the store: refused, kept in the ledger as `rejected`.
        case poison(SubscriptionEvent, why: String)
        /// The engine's outcome.
        case applied(SubscriptionEvent, Outcome)
    }

    /// `verify --apply` of a valid report: a signed transaction through the engine as a client
    /// submission, in its own transaction (rolled back when `dryRun`).
    public static func applyTransaction(
        _ report: VerificationReport, jws: String, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, dryRun: Bool, clock: () -> Int64 = Timestamp.now
    ) throws -> TransactionResult {
        guard report.kind == .transaction else {
            try reject(jws, why: "not a signed transaction (\(report.kind.rawValue))", store: store, dryRun: dryRun, clock: clock)
            return .notATransaction(report.kind)
        }
        guard let event = EventMapping.event(from: report, raw: jws, source: .client) else {
            try reject(
                jws, why: "the transaction lacks transactionId, originalTransactionId or productId", store: store,
                dryRun: dryRun, clock: clock)
            return .incomplete
        }
        if let why = StoredFields.violation(event) {
            let entry = StoredFields.rejectedEntry(event, detail: why, receivedAt: clock())
            _ = try store.write(commit: !dryRun) { try $0.appendLedger(entry) }
            return .poison(event, why: why)
        }
        return .applied(event, try engine.apply(event, to: store, context: context, dryRun: dryRun))
    }

    /// A JWS or receipt submitted with `verify --apply` that was refused (failed verification, not
    /// applicable): kept in the ledger as `rejected` with why, source `client`, once per distinct
    /// bytes; nothing else changes. A dry run keeps nothing.
    public static func reject(
        _ raw: String, why: String, source: EventSource = .client, store: any Store, dryRun: Bool,
        clock: () -> Int64 = Timestamp.now
    ) throws {
        try RejectedItems.keep(raw, source: source, why: why, store: store, dryRun: dryRun, clock: clock)
    }

    /// What became of one in-app entry of a receipt submitted with `verify --apply`.
    public enum EntryResult {
        /// Lacks the ids the engine needs: nothing written.
        case incomplete(String)
        /// Not applicable (cancelled when the receipt was made): nothing written.
        case skipped(String)
        /// The engine's outcome.
        case applied(SubscriptionEvent, Outcome)
    }

    /// `verify --apply` of a verified receipt: each in-app entry (oldest purchase first) through the
    /// engine as a client submission, each in its own transaction; `each` receives each entry's
    /// result as it is final. The receipt is kept once, in the ledger row of its first applied
    /// entry; the others point there.
    public static func applyReceipt(
        _ receipt: AppReceipt, raw: String, store: any Store, engine: SubscriptionEventEngine, context: EngineContext,
        dryRun: Bool, each: (InAppPurchase, EntryResult) throws -> Void
    ) throws {
        var kept: Int64? = nil
        for entry in ReceiptMapping.entries(of: receipt) {
            switch ReceiptMapping.entry(entry, of: receipt) {
            case .incomplete(let why): try each(entry, .incomplete(why))
            case .skipped(let why): try each(entry, .skipped(why))
            case .facts(let facts):
                let event = ReceiptMapping.event(facts, receipt: receipt, raw: kept.map(ReceiptMapping.reference) ?? raw)
                let outcome = try engine.apply(event, to: store, context: context, dryRun: dryRun)
                if kept == nil, !dryRun { kept = outcome.ledgerId }
                try each(entry, .applied(event, outcome))
            }
        }
    }

    /// `restore --apply` of one input item's restored transactions (one JWS, or a receipt's
    /// entries) in one transaction (rolled back when `dryRun`, so a dry run predicts the real one),
    /// in ``RestoreService/applicationOrder(_:user:explicitOrder:in:)``: per subscription the entry
    /// that matches first, so every entry of it is linked in this run. `each` receives each result
    /// once final, in the order given. A receipt (`raw`) is kept once, with its first applied entry.
    public static func restore(
        _ restored: [TransactionFacts], raw: String, user: String, policy: RestorePolicy, reason: String?,
        explicitOrder: String?, service: RestoreService, store: any Store, context: EngineContext, dryRun: Bool,
        each: (TransactionFacts, RestoreResult) throws -> Void
    ) throws {
        let results = try store.write(commit: !dryRun) { session in
            var kept: Int64? = nil
            var results: [Int: RestoreResult] = [:]
            for index in try service.applicationOrder(restored, user: user, explicitOrder: explicitOrder, in: session) {
                let tx = restored[index]
                let itemRaw = tx.isFromReceipt ? kept.map(ReceiptMapping.reference) ?? raw : raw
                let result = try service.apply(
                    tx, raw: itemRaw, user: user, policy: policy, reason: reason, explicitOrder: explicitOrder,
                    context: context, in: session)
                if kept == nil { kept = result.engineOutcome?.ledgerId }
                results[index] = result
            }
            return results
        }
        for (index, tx) in restored.enumerated() {
            guard var result = results[index] else { continue }
            // Say what was done, not what could be (a dry run keeps `restorable`).
            if !dryRun { result.verdict = RestoreVerdict.committed(result) }
            try each(tx, result)
        }
    }
}

/// `notify --replay-unmatched`: every ledger item still `unmatched`, verified again and retried
/// through the engine, rewriting its own ledger row.
public enum UnmatchedReplay {
    /// What became of one replayed ledger item.
    public enum Result {
        /// The JWS no longer verifies (e.g. an expired or different trust configuration).
        case refusedJWS(VerificationFailure)
        /// The receipt no longer verifies.
        case refusedReceipt(VerificationFailure)
        /// Not something the engine can apply, and why.
        case notApplicable(String)
        /// The engine's outcome.
        case applied(SubscriptionEvent, Outcome)
    }

    /// The ledger items still `unmatched`, oldest first.
    public static func pending(in store: any Store) throws -> [LedgerEntry] {
        try store.read { try $0.unmatchedLedger(limit: nil) }
    }

    /// Verifies `entry` again (a JWS with `jws`, an in-app entry of an app receipt with the
    /// verifier `receipts` makes, asked only for receipts) and applies it through the engine in its
    /// own transaction (rolled back when `dryRun`).
    public static func replay(
        _ entry: LedgerEntry, jws verifier: AppStoreVerifier, receipts: () throws -> ReceiptVerifier, store: any Store,
        engine: SubscriptionEventEngine, context: EngineContext, dryRun: Bool
    ) throws -> Result {
        if ReceiptMapping.isReceipt(entry) {
            return try replayReceipt(entry, verifier: try receipts(), store: store, engine: engine, context: context, dryRun: dryRun)
        }
        let report = verifier.verify(entry.raw)
        if let failure = report.failure { return .refusedJWS(failure) }
        guard let event = EventMapping.event(from: report, raw: entry.raw, source: entry.source) else {
            return .notApplicable("ledger item is not an applicable JWS")
        }
        let outcome = try store.write(commit: !dryRun) { session in
            try engine.apply(event, in: session, context: context, replaying: entry.id)
        }
        return .applied(event, outcome)
    }

    /// A ledger item that came from a receipt: the receipt is verified again and the in-app entry
    /// with the item's transactionId goes through the engine once more.
    static func replayReceipt(
        _ entry: LedgerEntry, verifier: ReceiptVerifier, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, dryRun: Bool
    ) throws -> Result {
        var raw = entry.raw
        if let id = ReceiptMapping.referencedLedgerId(raw) {
            guard let original = try store.read({ try $0.ledgerEntry(id: id) }) else {
                return .notApplicable("ledger #\(id), which holds its receipt, is gone")
            }
            raw = original.raw
        }
        let report = verifier.verify(base64: raw)
        guard let receipt = report.receipt, report.isValid else {
            return .refusedReceipt(report.failure ?? VerificationFailure(.invalidContainer, "not a receipt"))
        }
        guard let inApp = receipt.inApp.first(where: { $0.transactionId != nil && $0.transactionId == entry.transactionId }),
            case .facts(let facts) = ReceiptMapping.entry(inApp, of: receipt)
        else {
            return .notApplicable("the receipt holds no applicable entry \(entry.transactionId ?? "?")")
        }
        let event = ReceiptMapping.event(facts, receipt: receipt, raw: entry.raw)  // the reference stays a reference
        let outcome = try store.write(commit: !dryRun) { session in
            try engine.apply(event, in: session, context: context, replaying: entry.id)
        }
        return .applied(event, outcome)
    }
}
