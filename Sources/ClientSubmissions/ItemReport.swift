import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// The result of one input item of `notify`, `verify --apply`, `restore` and
/// `notify --replay-unmatched`, as the command-line contract promises it to scripts: line, verdict,
/// ids, changes, detail, error, the fields a restore row adds, and whether it was a dry run. Made
/// here from the typed results of the flows; the command layer prints it (JSON, NDJSON, CSV, table,
/// the summary line) and words the ``Advice`` of a refused item, which names commands and options.
public struct ItemReport {
    /// The input line (for a replay, the ledger id).
    public var line: Int
    /// The verdict: the engine's (`applied`, `duplicate`…), restore's (`restorable`…),
    /// `rejected`, or `not-applied`.
    public var verdict: ItemVerdict
    /// How the item ended (its exit status).
    public var outcome: ItemOutcome
    public var notificationUUID: String?
    public var notificationType: String?
    public var subtype: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    public var changes: [Change]
    public var detail: String?
    /// Why the item was refused or failed, with the command's advice when there is one.
    public var error: String?
    /// The fields a kind of row adds after the ids, in order (a restore row's `basis`, `orders`…).
    public var extra: [(key: String, value: JSONValue)]
    /// Simulated by a dry run (nothing was written).
    public var dryRun: Bool

    public init(
        line: Int, verdict: ItemVerdict, outcome: ItemOutcome, notificationUUID: String? = nil, notificationType: String? = nil,
        subtype: String? = nil, transactionId: String? = nil, originalTransactionId: String? = nil, changes: [Change] = [],
        detail: String? = nil, error: String? = nil, extra: [(key: String, value: JSONValue)] = [], dryRun: Bool = false
    ) {
        self.line = line
        self.verdict = verdict
        self.outcome = outcome
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.changes = changes
        self.detail = detail
        self.error = error
        self.extra = extra
        self.dryRun = dryRun
    }

    /// A pointer for a common mistake behind a refused item. The command layer words it (it names
    /// commands and options); nil from its wording: no pointer.
    public enum Advice {
        /// A JWS `notify` refused in verification: the report says what it was (another kind of
        /// JWS) and which check failed (environment, app, validity time, chain).
        case refusedNotification(VerificationReport)
        /// `notify` was given a StoreKit 1 app receipt.
        case receiptGivenToNotify
        /// `restore` was given a notification instead of a signed transaction.
        case notificationGivenToRestore
        /// The chain is not signed under the trusted root in use.
        case untrustedChain
    }

    // MARK: The results every flow shares

    /// A refused input item; `hint` (the command's words) follows the failure.
    public static func rejected(line: Int, _ failure: VerificationFailure, hint: String? = nil) -> ItemReport {
        ItemReport(
            line: line, verdict: .rejected, outcome: ItemOutcome(failure),
            error: failure.plainMessage + (hint.map { "; " + $0 } ?? ""))
    }

    /// A refused input item, and why.
    public static func rejected(line: Int, outcome: ItemOutcome = .invalid, _ message: String) -> ItemReport {
        ItemReport(line: line, verdict: .rejected, outcome: outcome, error: message)
    }

    /// A refused poison item (``StoredFields/violation(_:)``): its ids that fit the store, and why.
    public static func poison(line: Int, _ event: SubscriptionEvent, _ why: String) -> ItemReport {
        var report = ItemReport.rejected(line: line, why)
        report.notificationUUID = StoredFields.fitting(event.notificationUUID)
        report.notificationType = StoredFields.fitting(event.notificationType?.rawValue)
        report.subtype = StoredFields.fitting(event.subtype?.rawValue)
        report.transactionId = StoredFields.fitting(event.transaction?.transactionId)
        report.originalTransactionId = StoredFields.fitting(
            event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId)
        return report
    }

    /// An event applied through the engine: the engine's verdict, changes and detail.
    public static func applied(line: Int, event: SubscriptionEvent, outcome: Outcome) -> ItemReport {
        ItemReport(
            line: line, verdict: ItemVerdict(outcome.verdict), outcome: ItemOutcome(outcome.verdict),
            notificationUUID: event.notificationUUID, notificationType: event.notificationType?.rawValue,
            subtype: event.subtype?.rawValue, transactionId: event.transaction?.transactionId,
            originalTransactionId: event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId,
            changes: outcome.changes, detail: outcome.detail)
    }

    // MARK: Each flow's results

    /// `notify`: one ingested item; `hint` words the advice of a refused one.
    public init(line: Int, _ result: IngestResult, hint: (Advice) -> String?) {
        switch result {
        case .rejected(let refusal): self.init(line: line, refusal, hint: hint)
        case .poison(let event, let why): self = .poison(line: line, event, why)
        case .applied(let event, let outcome): self = .applied(line: line, event: event, outcome: outcome)
        }
    }

    /// `notify`: an item refused before the engine.
    public init(line: Int, _ refusal: Refusal, hint: (Advice) -> String?) {
        switch refusal {
        case .malformed(let failure): self = .rejected(line: line, failure)
        case .failedVerification(let failure, let report, let isReceipt):
            let advice: Advice = isReceipt ? .receiptGivenToNotify : .refusedNotification(report)
            self = .rejected(line: line, failure, hint: hint(advice))
        case .notApplicable: self = .rejected(line: line, refusal.reason)
        }
    }

    /// `notify --replay-unmatched`: one replayed ledger item (`line`: its ledger id).
    public init(line: Int, _ result: UnmatchedReplay.Result) {
        switch result {
        case .refusedJWS(let failure): self = .rejected(line: line, failure)
        case .refusedReceipt(let failure): self = .rejected(line: line, outcome: ItemOutcome(failure), "app receipt: " + failure.message)
        case .notApplicable(let why): self = .rejected(line: line, why)
        case .applied(let event, let outcome): self = .applied(line: line, event: event, outcome: outcome)
        }
    }

    /// `verify --apply` of an app receipt: one in-app entry's result.
    public init(line: Int, entry: InAppPurchase, _ result: ClientSubmission.EntryResult) {
        switch result {
        case .incomplete(let why): self = .rejected(line: line, outcome: result.outcome, why)
        case .skipped(let why):
            self.init(
                line: line, verdict: ItemVerdict(result.verdict), outcome: result.outcome, transactionId: entry.transactionId,
                originalTransactionId: entry.originalTransactionId, detail: why)
        case .applied(let event, let outcome): self = .applied(line: line, event: event, outcome: outcome)
        }
    }

    /// `restore`: one row of an item's result; `hint` words the advice of a refused JWS.
    public init(line: Int, _ row: RestoreSubmission.Row, hint: (Advice) -> String?) {
        switch row {
        case .unreadable(let failure): self = .rejected(line: line, failure)
        case .refusedReceipt, .notATransaction: self = .rejected(line: line, outcome: row.outcome, row.refusal ?? "")
        case .emptyReceipt:
            self.init(
                line: line, verdict: ItemVerdict(row.verdict), outcome: row.outcome,
                detail: "the app receipt holds no in-app purchase: nothing to restore")
        case .incompleteEntry(let why): self = .rejected(line: line, outcome: row.outcome, why)
        case .skippedEntry(let entry, let why):
            self.init(
                line: line, verdict: ItemVerdict(row.verdict), outcome: row.outcome, transactionId: entry.transactionId,
                originalTransactionId: entry.originalTransactionId, error: why)
        case .refusedJWS(let failure, let report):
            let advice: Advice? =
                report.kind == .notification
                ? .notificationGivenToRestore : failure.code == .untrustedChain ? .untrustedChain : nil
            self = .rejected(line: line, failure, hint: advice.flatMap(hint))
        case .restored(let tx, let result): self.init(line: line, result, tx: tx)
        }
    }

    /// `restore`: one restored transaction, with what the look-up (or `--apply`) found: `basis`,
    /// `orders`, `contract`, `owner`, `status`, `expires`, then `previousOwner` after a transfer and
    /// `engineVerdict` when the engine was called.
    public init(line: Int, _ result: RestoreResult, tx: TransactionFacts) {
        self.init(
            line: line, verdict: ItemVerdict(result.verdict), outcome: ItemOutcome(result.verdict), transactionId: tx.transactionId,
            originalTransactionId: tx.originalTransactionId, changes: result.changes, detail: result.detail)
        extra = [
            ("basis", result.basis.map { .string($0.rawValue) } ?? .null),
            ("orders", .string(result.orderNos.joined(separator: " "))),
            ("contract", result.contractId.map(JSONValue.string) ?? .null),
            ("owner", result.owner.map(JSONValue.string) ?? .null),
            ("status", result.contractStatus.map { .string($0.rawValue) } ?? .null),
            ("expires", result.contractExpires.map { .string(Timestamp.iso8601($0)) } ?? .null),
        ]
        if let previous = result.previousOwner { extra.append(("previousOwner", .string(previous))) }
        if let outcome = result.engineOutcome { extra.append(("engineVerdict", .string(outcome.verdict.rawValue))) }
    }
}

/// An all-or-nothing batch (`notify --atomic`) that one item stopped: it was rolled back, so every
/// line — those reported and those not read yet — is `not-applied` (``ItemVerdict/notApplied``), and the line that
/// caused it says why.
public struct AbortedBatch {
    /// The item that stopped the batch, as it was reported.
    public let cause: ItemReport
    /// Why, as the causing line says it: `verdict: error` (or its detail).
    public let why: String
    /// Every line in input order, rewritten: verdict `not-applied`, outcome `failed`, no changes.
    public let reports: [ItemReport]

    /// `reports`: the items reported before the abort, the last one its cause; `unread`: the lines
    /// not processed; `batch`: how the lines name the batch (the command's words).
    public init?(reports: [ItemReport], unread: [Int], batch: String) {
        guard let cause = reports.last else { return nil }
        self.cause = cause
        let why = "\(cause.verdict): \(cause.error ?? cause.detail ?? "failed")"
        self.why = why
        let lines = reports + unread.map { ItemReport(line: $0, verdict: .notApplied, outcome: .failed) }
        self.reports = lines.enumerated().map { index, report in
            ItemReport(
                line: report.line, verdict: .notApplied, outcome: .failed,
                notificationUUID: report.notificationUUID, notificationType: report.notificationType, subtype: report.subtype,
                transactionId: report.transactionId, originalTransactionId: report.originalTransactionId,
                error: index == reports.count - 1
                    ? why + "; \(batch) was rolled back: nothing was applied"
                    : "not applied: \(batch) was rolled back at line \(cause.line)",
                extra: report.extra)
        }
    }
}
