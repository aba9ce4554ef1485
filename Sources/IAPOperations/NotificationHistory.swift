import AppStoreJWS
import SubscriptionEngine

/// The gap report (`notify --gap-report FILE`, `apple notifications history --gap-report/--apply`):
/// which notifications of Apple's history the ledger never applied, and with `apply` those replayed
/// through the engine.
public enum NotificationHistory {
    /// One notification of the history the ledger has not applied (or that was refused).
    public enum Gap {
        /// It failed verification (the notification's UUID when its payload could be read); with
        /// `apply` it is kept in the ledger as `rejected`.
        case rejected(item: Int, VerificationFailure, notificationUUID: String?)
        /// Never applied: `unmatched` when the ledger holds it as unmatched (else never received);
        /// with `apply`, the engine's outcome.
        case missing(item: Int, SubscriptionEvent, unmatched: Bool, outcome: Outcome?)
    }

    /// Verifies each signed notification of `history` (in order; a UUID seen twice counts once)
    /// and hands each gap to `each`. Notifications the ledger already processed are left out. With
    /// `apply` each missing one is applied through the engine in its own transaction (rolled back
    /// when `dryRun`).
    public static func gaps(
        in history: [String], verifier: AppStoreVerifier, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, apply: Bool, dryRun: Bool, each: (Gap) throws -> Void
    ) throws {
        let unmatched = Set(try store.read { try $0.unmatchedLedger(limit: nil) }.compactMap(\.notificationUUID))
        var seen = Set<String>()
        for (index, jws) in history.enumerated() {
            let report = verifier.verify(jws, as: .notification)
            if let failure = report.failure {
                if apply {
                    try RejectedItems.keep(jws, source: .apple, why: failure.message, store: store, dryRun: dryRun)
                }
                try each(.rejected(item: index, failure, notificationUUID: report.notification?.notificationUUID))
                continue
            }
            guard let event = EventMapping.event(from: report, raw: jws, source: .apple),
                let uuid = event.notificationUUID
            else { continue }
            guard seen.insert(uuid).inserted else { continue }
            if try store.read({ try $0.processedLedgerEntry(notificationUUID: uuid) }) != nil { continue }
            let outcome = apply ? try engine.apply(event, to: store, context: context, dryRun: dryRun) : nil
            try each(.missing(item: index, event, unmatched: unmatched.contains(uuid), outcome: outcome))
        }
    }
}
