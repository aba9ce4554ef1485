#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one retry policy of every write that goes through the engine: one event in its own
/// transaction (``SubscriptionEventEngine/apply(_:to:context:dryRun:)``), one event in a savepoint
/// of a batch, and a whole batch transaction (group commit in `IAPOperations`).
///
/// - A unique-key race with another process (``StoreError/conflict(_:)``) is run again up to
///   ``conflictRetries`` times, and then finds the work done.
/// - A busy database (``StoreError/busy(_:_:)``: SQLite's busy timeout, a MySQL/MariaDB deadlock or
///   lock wait timeout) rolled the transaction back whole, so running it again is safe: at most
///   ``busyAttempts(_:)`` attempts in all, with a short growing pause (``pause(beforeAttempt:)``).
///   A MySQL/MariaDB lock wait timeout means the transaction queued behind others that hold its
///   rows and are making progress; each new attempt queues again at the back, so a count alone can
///   starve a process behind many writers: lock waits are run again for at least
///   ``lockWaitBudgetSeconds`` in all (``shouldRetryBusy(_:attempt:elapsedSeconds:)``).
/// - A transaction the server ended under the unit (``BusyReason/transactionLost``: a cluster's
///   abort) was rolled back whole by the store: run again like a deadlock. A cluster node that cannot
///   take writes (``BusyReason/clusterUnavailable(retryForSeconds:)``) is tried again until its
///   budget (the database I/O timeout) is spent; then the busy error stands (exit 75).
public enum RetryPolicy {
    /// How many times a unique-key conflict is run again.
    public static let conflictRetries = 3

    /// Attempts in all for a transaction that failed busy: 3 (SQLite's busy timeout already waited
    /// 15 s), or 8 when the server rolled back a deadlock or gave up a lock wait: rare once rows are
    /// locked in a fixed order, and short, so up to about 4 s of pauses are worth it.
    public static func busyAttempts(_ reason: BusyReason) -> Int {
        switch reason {
        case .deadlock, .lockWaitTimeout, .transactionLost: 8
        case .lockedPastTimeout, .tooManyConnections, .migrationInProgress, .clusterUnavailable: 3
        }
    }

    /// Seconds in all during which a transaction that gave up a lock wait (MySQL error 1205) is
    /// run again, whatever the count: 2 minutes, twice the default I/O timeout's lock wait.
    public static let lockWaitBudgetSeconds: Double = 120

    /// True when a transaction that failed busy for `reason` on attempt `attempt` (1 for the
    /// first), `elapsedSeconds` after the first began, is run again.
    public static func shouldRetryBusy(_ reason: BusyReason, attempt: Int, elapsedSeconds: Double) -> Bool {
        if attempt < busyAttempts(reason) { return true }
        switch reason {
        case .lockWaitTimeout: return elapsedSeconds < lockWaitBudgetSeconds
        case .clusterUnavailable(let budget): return elapsedSeconds < budget
        default: return false
        }
    }

    /// Seconds on the monotonic clock (not moved by changes of the wall clock).
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// 50 ms before the 2nd attempt, doubling up to 1 s, plus up to 100 ms of jitter so two
    /// deadlocked processes do not collide again in step.
    public static func pause(beforeAttempt attempt: Int) {
        let milliseconds = min(50 << (attempt - 1), 1000) + Int.random(in: 0..<100)
        var delay = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&delay, &remaining) != 0 && errno == EINTR { delay = remaining }
    }

    /// Runs `body` (a whole transaction) under the policy: conflicts when `conflicts` is true,
    /// busy failures always.
    public static func run<T>(retryingConflicts conflicts: Bool = true, _ body: () throws -> T) throws -> T {
        var conflictCount = 0
        var attempt = 1
        let start = monotonicSeconds()
        while true {
            do {
                return try body()
            } catch StoreError.conflict where conflicts && conflictCount < conflictRetries {
                conflictCount += 1
            } catch StoreError.busy(_, let reason)
                where shouldRetryBusy(reason, attempt: attempt, elapsedSeconds: monotonicSeconds() - start)
            {
                pause(beforeAttempt: min(attempt, 8))
                attempt += 1
            }
        }
    }

    /// Runs `body` (one event inside an open transaction) in its own savepoint; a unique-key race
    /// undoes only the savepoint and is run again under the policy. A busy failure is left to the
    /// caller: it rolled back the whole transaction.
    public static func inSavepoint<T>(of session: any StoreSession, retryingConflicts: Bool = true, _ body: () throws -> T)
        throws -> T
    {
        var conflictCount = 0
        while true {
            do {
                return try session.savepoint(body)
            } catch StoreError.conflict where retryingConflicts && conflictCount < conflictRetries {
                conflictCount += 1
            }
        }
    }
}
