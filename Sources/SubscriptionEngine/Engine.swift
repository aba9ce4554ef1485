import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who is applying events, for the audit trail.
public struct EngineContext: Sendable {
    /// The OS user or `--actor` running the command.
    public var actor: String
    /// The command, e.g. `notify`, `verify --apply`, `restore --apply`.
    public var command: String

    public init(actor: String, command: String) {
        self.actor = actor
        self.command = command
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

    /// Applies `event` in its own write transaction, with its ledger and audit rows.
    ///
    /// A unique-key race with another process is retried, and then finds the work done. A busy
    /// database (a MySQL deadlock or lock wait timeout, SQLite's busy timeout) is retried too, at
    /// most ``busyAttempts`` times in all with a short growing pause, since the transaction was
    /// rolled back whole and running it again is safe.
    /// With `dryRun` everything is rolled back and the outcome says what would have changed.
    public func apply(
        _ event: SubscriptionEvent, to store: any Store, context: EngineContext, dryRun: Bool = false
    ) throws -> Outcome {
        var conflicts = 0
        var busy = 1
        while true {
            do {
                var outcome = try store.write(commit: !dryRun) { session in
                    try self.apply(event, in: session, context: context)
                }
                if dryRun { outcome.ledgerId = nil }
                return outcome
            } catch StoreError.conflict where conflicts < 3 {
                conflicts += 1
            } catch StoreError.busy where busy < Self.busyAttempts {
                Self.pause(beforeAttempt: busy)
                busy += 1
            }
        }
    }

    /// How many times ``apply(_:to:context:dryRun:)`` runs an event whose transaction fails busy.
    public static let busyAttempts = 3

    /// 50 ms before the 2nd attempt, 200 ms before the 3rd, plus up to 50 ms of jitter so two
    /// deadlocked processes do not collide again in step.
    /// Batches that retry a whole transaction (group commit) use the same pauses.
    public static func pause(beforeAttempt attempt: Int) {
        let milliseconds = 50 * (1 << (2 * (attempt - 1))) + Int.random(in: 0..<50)
        var delay = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&delay, &remaining) != 0 && errno == EINTR { delay = remaining }
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
        var run = EngineRun(
            event: SubscriptionEvent(source: .apple, raw: ""), session: session, context: context, now: now(),
            newOrderNo: newOrderNo)
        run.auditReason = reason
        guard try !session.facts(originalTransactionId: originalTransactionId).isEmpty else { return [] }
        _ = try run.reconcile(originalTransactionId)
        try run.writeAudits()
        return run.changes
    }
}
