import SubscriptionDerivation
import SubscriptionModel

/// `notify --gap-report` and `apple notifications --gaps`: which notifications Apple sent (per its
/// notification history) that the ledger never applied, with Apple's send attempts; with `apply`,
/// exactly those are replayed through the engine.
public enum NotificationGaps {
    /// One send attempt of Apple's (`sendAttempts`).
    public struct SendAttempt: Sendable, Equatable {
        public var date: Int64?
        public var result: String?

        public init(date: Int64?, result: String?) {
            self.date = date
            self.result = result
        }
    }

    /// One notification of the history, verified and mapped by the caller.
    public enum Item: Sendable {
        /// It failed verification: reported as `rejected`.
        case rejected(notificationUUID: String?, message: String)
        /// Verified, but not an event the engine takes (or without a notificationUUID): left out.
        case skipped
        /// A verified notification as the engine's event, with Apple's send attempts.
        case notification(SubscriptionEvent, attempts: [SendAttempt])
    }

    /// Where the ledger stands on a missing notification.
    public enum LedgerState: String, Sendable {
        /// It was received but matched nothing (yet).
        case unmatched
        /// It never arrived.
        case neverReceived = "never received"
    }

    /// One row of the report, in the history's order.
    public enum Row: Sendable, Equatable {
        case rejected(notificationUUID: String?, message: String)
        /// A notification the ledger never applied; `outcome` is the engine's when it was replayed.
        case missing(SubscriptionEvent, notificationUUID: String, ledger: LedgerState, attempts: [SendAttempt], outcome: Outcome?)
    }

    /// Compares `items` with the ledger of `store`; with `apply`, replays the missing ones through
    /// `engine`, one transaction each (rolled back when `dryRun`). Applied or ignored notifications and
    /// repeats of one UUID are left out.
    public static func compare(
        _ items: [Item], store: any Store, apply: Bool, engine: SubscriptionEventEngine, context: EngineContext,
        dryRun: Bool
    ) throws -> [Row] {
        let unmatched = Set(try store.read { try $0.unmatchedLedger(limit: nil) }.compactMap(\.notificationUUID))
        var rows: [Row] = []
        var seen = Set<String>()
        for item in items {
            switch item {
            case .rejected(let uuid, let message):
                rows.append(.rejected(notificationUUID: uuid, message: message))
            case .skipped:
                continue
            case .notification(let event, let attempts):
                guard let uuid = event.notificationUUID, seen.insert(uuid).inserted else { continue }
                if try store.read({ try $0.processedLedgerEntry(notificationUUID: uuid) }) != nil { continue }
                let outcome = apply ? try engine.apply(event, to: store, context: context, dryRun: dryRun) : nil
                rows.append(
                    .missing(
                        event, notificationUUID: uuid, ledger: unmatched.contains(uuid) ? .unmatched : .neverReceived,
                        attempts: attempts, outcome: outcome))
            }
        }
        return rows
    }
}
