import AppStoreAPI
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionEngine

extension ItemReport {
    /// `apple reconcile`: one difference (or problem) of a subscription; `line`: the subscription's
    /// number in the run. The row says which of Apple's answers it came from (`answer`) and is about
    /// `original` (the subscription asked about; nil for an item of the scope's look-up). A change is a difference (outcome `failed`: the
    /// database did not agree with Apple).
    public init(line: Int, original: String?, _ row: AppleReconcile.Row, dryRun: Bool) {
        let answer: AppleReconcile.Answer?
        switch row {
        case .applied(let from, let event, let outcome):
            answer = from
            self = .applied(line: line, event: event, outcome: outcome)
            if !outcome.changes.isEmpty, self.outcome == .success { self.outcome = .failed }
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
