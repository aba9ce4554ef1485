import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Who is applying events, for the audit trail.
public struct EngineContext: Sendable {
    /// The OS user or `--actor` running the command.
    public var actor: String
    /// The command, e.g. `notify`, `verify --apply`, `restore --apply`.
    public var command: String
    /// The command's `--reason`: the audit rows' reason (nil: the event's type, as without it).
    public var reason: String?
    /// The command's `--ticket`, recorded in every audit row.
    public var ticket: String?

    public init(actor: String, command: String, reason: String? = nil, ticket: String? = nil) {
        self.actor = actor
        self.command = command
        self.reason = reason
        self.ticket = ticket
    }
}

/// The one subscription-event engine: turns verified Apple notifications, client submissions and
/// restored transactions into the same changes of `orders` and `member_contracts`.
///
/// Rules (see docs): payments are recorded exactly once per `transactionId`; a notification is
/// processed once per `notificationUUID`; a contract's state follows the newest `signedDate`
/// (older state changes are `stale`); money facts are recorded whatever their order; nothing is
/// invented — an event with no order or contract to attach to is `unmatched`.
public final class SubscriptionEventEngine: Sendable {
    let now: @Sendable () -> Int64
    let newOrderNo: @Sendable () -> String

    /// - Parameters:
    ///   - now: milliseconds since the epoch (injectable for tests).
    ///   - newOrderNo: order numbers for orders the engine creates (renewals): a new UUID by default.
    public init(
        now: @escaping @Sendable () -> Int64 = Timestamp.now,
        newOrderNo: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.now = now
        self.newOrderNo = newOrderNo
    }

    /// Applies `event` in its own write transaction, with its ledger and audit rows, under the
    /// engine's one ``RetryPolicy`` (a unique-key race is run again and then finds the work done; a
    /// busy database, which rolled the transaction back whole, is retried with a short pause).
    /// With `dryRun` everything is rolled back and the outcome says what would have changed.
    public func apply(
        _ event: SubscriptionEvent, to store: any Store, context: EngineContext, dryRun: Bool = false
    ) throws -> Outcome {
        try RetryPolicy.run {
            var outcome = try store.write(commit: !dryRun) { session in
                try self.apply(event, in: session, context: context)
            }
            if dryRun { outcome.ledgerId = nil }
            return outcome
        }
    }

    /// Applies `event` inside an open batch transaction, in its own savepoint, so a failure undoes
    /// only this event; a unique-key race is run again under the ``RetryPolicy`` when
    /// `retryingConflicts` (a batch that must fail on the first error passes false).
    public func apply(
        _ event: SubscriptionEvent, inSavepointOf session: any StoreSession, context: EngineContext,
        retryingConflicts: Bool = true
    ) throws -> Outcome {
        try RetryPolicy.inSavepoint(of: session, retryingConflicts: retryingConflicts) {
            try apply(event, in: session, context: context)
        }
    }

    /// Applies `event` inside an open transaction; the caller commits (use a savepoint per event
    /// in batches so one failure rolls back only that event).
    ///
    /// - Parameter replaying: the ledger row of an earlier `unmatched` item being retried; its
    ///   verdict is rewritten instead of a new row being added.
    public func apply(
        _ event: SubscriptionEvent, in session: any StoreSession, context: EngineContext,
        replaying: Int64? = nil
    ) throws -> Outcome {
        var run = EngineRun(event: event, session: session, context: context, now: now(), newOrderNo: newOrderNo)
        run.replayingId = replaying
        let outcome = try run.decide()
        return try run.record(outcome, replaying: replaying)
    }

    /// Re-derives the orders and contract of one subscription (or one-time purchase) from its kept
    /// facts and writes what differs, with audit rows giving `reason`. Nothing happens to a
    /// subscription without facts or without an owner.
    public func rederive(
        originalTransactionId: String, in session: any StoreSession, context: EngineContext, reason: String
    ) throws -> [Change] {
        try rederiveAudited(originalTransactionId: originalTransactionId, in: session, context: context, reason: reason).changes
    }

    /// ``rederive(originalTransactionId:in:context:reason:)``, with the id of each change's audit row
    /// (in the order of the changes).
    func rederiveAudited(
        originalTransactionId: String, in session: any StoreSession, context: EngineContext, reason: String
    ) throws -> (changes: [Change], auditIds: [Int64]) {
        var run = EngineRun(
            event: SubscriptionEvent(source: .apple, raw: ""), session: session, context: context, now: now(),
            newOrderNo: newOrderNo)
        run.auditReason = reason
        guard try !session.facts(originalTransactionId: originalTransactionId).isEmpty else { return ([], []) }
        _ = try run.reconcile(originalTransactionId)
        // The rows are now the derivation of every fact: the next event derives (and keeps) a new snapshot.
        try session.saveContractSnapshot(contractId: originalTransactionId, nil)
        let ids = try run.writeAudits()
        return (run.changes, ids)
    }
}
