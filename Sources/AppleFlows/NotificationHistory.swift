import AppStoreJWS
import ClientSubmissions
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// The gap report (`notify --gap-report FILE`, `apple notifications history --gap-report/--apply`):
/// verifies and maps each notification of Apple's history, keeps the refused ones in the ledger
/// when applying, and leaves the comparison with the ledger to the engine's ``NotificationGaps``.
public enum NotificationHistory {
    /// One notification of Apple's history: its signed payload and Apple's send attempts.
    public struct Entry: Sendable {
        public var jws: String
        public var attempts: [NotificationGaps.SendAttempt]

        public init(jws: String, attempts: [NotificationGaps.SendAttempt] = []) {
            self.jws = jws
            self.attempts = attempts
        }
    }

    /// Why a document is not a Get Notification History response.
    public enum ResponseRefusal: Error, Sendable, Equatable {
        /// It has no `notificationHistory` array.
        case noHistoryArray
        /// An item of it has no `signedPayload` string.
        case noSignedPayload
    }

    /// The notifications of one Get Notification History response, in order, each with Apple's send
    /// attempts (`sendAttempts`; none when it is missing).
    public static func entries(in response: JSONValue) throws(ResponseRefusal) -> [Entry] {
        guard case .array(let history)? = response["notificationHistory"] else { throw .noHistoryArray }
        var entries: [Entry] = []
        for item in history {
            guard let jws = item["signedPayload"]?.stringValue else { throw .noSignedPayload }
            var attempts: [NotificationGaps.SendAttempt] = []
            if case .array(let list)? = item["sendAttempts"] {
                attempts = list.map {
                    NotificationGaps.SendAttempt(date: $0["attemptDate"]?.int64Value, result: $0["sendAttemptResult"]?.stringValue)
                }
            }
            entries.append(Entry(jws: jws, attempts: attempts))
        }
        return entries
    }

    /// The gap report: its rows, and how many of them were applied, are still not applied or were rejected.
    public struct Gaps: Sendable {
        public var rows: [NotificationGaps.Row]
        /// Missing ones replayed with an outcome that counts as success (``ItemOutcome/success``).
        public var applied = 0
        /// Missing ones not replayed, or replayed without success.
        public var remaining = 0
        /// Ones that failed verification.
        public var rejected = 0

        /// Counts `rows`.
        public init(_ rows: [NotificationGaps.Row]) {
            self.rows = rows
            for row in rows {
                switch row {
                case .rejected: rejected += 1
                case .missing(_, _, _, _, let outcome?) where ItemOutcome(outcome.verdict) == .success: applied += 1
                case .missing: remaining += 1
                }
            }
        }

        /// Nothing is missing (or everything missing was applied) and nothing was rejected: exit 0.
        public var isClosed: Bool { remaining == 0 && rejected == 0 }
    }

    /// Verifies each signed notification of `history` (in order) and compares them with the ledger
    /// (``NotificationGaps/compare(_:store:apply:engine:context:dryRun:)``): notifications the ledger
    /// already processed and repeats of one UUID are left out. With `apply` each missing one is
    /// applied through the engine in its own transaction (rolled back when `dryRun`), and each one that
    /// fails verification is kept in the ledger as `rejected` (property 9). `refused` hears each
    /// verification failure as it is found.
    public static func gaps(
        in history: [Entry], verifier: AppStoreVerifier, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, apply: Bool, dryRun: Bool, refused: (VerificationFailure) -> Void = { _ in }
    ) throws -> Gaps {
        var items: [NotificationGaps.Item] = []
        for entry in history {
            let report = verifier.verify(entry.jws, as: .notification)
            if let failure = report.failure {
                refused(failure)
                if apply {
                    try RejectedItems.keep(entry.jws, source: .apple, why: failure.message, store: store, dryRun: dryRun)
                }
                items.append(.rejected(notificationUUID: report.notification?.notificationUUID, message: failure.message))
                continue
            }
            guard let event = EventMapping.event(from: report, raw: entry.jws, source: .apple) else {
                items.append(.skipped)
                continue
            }
            items.append(.notification(event, attempts: entry.attempts))
        }
        return Gaps(
            try NotificationGaps.compare(items, store: store, apply: apply, engine: engine, context: context, dryRun: dryRun))
    }
}
