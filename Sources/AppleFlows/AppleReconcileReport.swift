import AppStoreAPI
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

extension ItemReport {
    /// `apple reconcile`: one difference (or problem) of a subscription; `line`: the subscription's
    /// number in the run. The row says which of Apple's answers it came from (`answer`) and is about
    /// `original` (the subscription asked about; nil for an item of the scope's look-up). In a dry run a
    /// change is a difference still to fix (outcome `failed`: the database does not agree with Apple);
    /// under `--apply` it was written, and the row is a success.
    public init(line: Int, original: String?, _ row: AppleReconcile.Row, dryRun: Bool) {
        let answer: AppleReconcile.Answer?
        switch row {
        case .applied(let from, let event, let outcome):
            answer = from
            self = .applied(line: line, event: event, outcome: outcome)
            if dryRun, !outcome.changes.isEmpty, self.outcome == .success { self.outcome = .failed }
        case .refused(let from, let failure):
            answer = from
            self = .rejected(line: line, failure)
        case .poison(let from, let event, let why):
            answer = from
            self = .poison(line: line, event, why)
        case .unknown(let error):
            answer = nil
            self.init(
                line: line, verdict: .unknown, outcome: .notFound,
                error: "Apple does not know subscription \(original ?? "?"): \(error.message)")
        }
        originalTransactionId = originalTransactionId ?? original
        extra = [("answer", answer.map { .string($0.rawValue) } ?? .null)]
        self.dryRun = dryRun
    }
}

extension AppleReconcile.Result {
    /// Apple does not know the subscription (nothing was asked further, nothing written).
    public var isUnknown: Bool {
        rows.contains { if case .unknown = $0 { true } else { false } }
    }

    /// Some answer changed orders or contracts: written under `--apply`, what a dry run would write.
    public var changed: Bool {
        rows.contains { if case .applied(_, _, let outcome) = $0 { !outcome.changes.isEmpty } else { false } }
    }

    /// Items refused: signed items that did not verify, and verified ones that do not fit the store
    /// (kept in the ledger as `rejected`, nothing of them applied).
    public var refusedItems: Int {
        rows.count { row in
            switch row {
            case .refused, .poison: true
            default: false
            }
        }
    }

    /// Whether an answer found no order or contract (no user) to attach it to: kept as `unmatched`.
    public var unmatched: Bool { rows.contains { $0.verdict == .unmatched } }

    /// Whether an answer names a subscription another user owns: kept as `conflict`.
    public var conflicts: Bool { rows.contains { $0.verdict == .conflict } }
}

extension AppleReconcile.Row {
    /// The engine's verdict of an applied answer; nil for the other rows.
    var verdict: Verdict? {
        if case .applied(_, _, let outcome) = self { outcome.verdict } else { nil }
    }
}
