import SubscriptionModel
import Testing

/// The engine's one retry policy, as every ingest path uses it.
@Suite("Retry policy")
struct RetryPolicyTests {
    @Test func busyIsRunAgainUpToThreeAttemptsThenThrown() throws {
        var calls = 0
        #expect(throws: StoreError.self) {
            try RetryPolicy.run { () throws -> Int in
                calls += 1
                throw StoreError.busy("database is locked", .lockedPastTimeout)
            }
        }
        #expect(calls == 3)
        calls = 0
        let value = try RetryPolicy.run { () throws -> Int in
            calls += 1
            if calls < 2 { throw StoreError.busy("database is locked", .lockedPastTimeout) }
            return 7
        }
        #expect(value == 7 && calls == 2)
    }

    @Test func aServerDeadlockGetsMoreAttempts() {
        #expect(RetryPolicy.busyAttempts(.deadlock) == 8)
        #expect(RetryPolicy.busyAttempts(.lockWaitTimeout) == 8)
        #expect(RetryPolicy.busyAttempts(.lockedPastTimeout) == 3)
        #expect(RetryPolicy.busyAttempts(.tooManyConnections) == 3)
        #expect(RetryPolicy.busyAttempts(.migrationInProgress) == 3)
    }

    /// A lock wait timeout queues the transaction again behind the writers that hold its rows:
    /// past the 8 attempts it keeps going until the time budget is spent; a deadlock and
    /// SQLite's busy timeout stop at their count.
    @Test func lockWaitsAreRunAgainUntilTheTimeBudgetIsSpent() {
        let lockWait = BusyReason.lockWaitTimeout
        let deadlock = BusyReason.deadlock
        let budget = RetryPolicy.lockWaitBudgetSeconds
        #expect(RetryPolicy.shouldRetryBusy(lockWait, attempt: 7, elapsedSeconds: budget + 1))
        #expect(RetryPolicy.shouldRetryBusy(lockWait, attempt: 20, elapsedSeconds: budget - 1))
        #expect(!RetryPolicy.shouldRetryBusy(lockWait, attempt: 8, elapsedSeconds: budget))
        #expect(!RetryPolicy.shouldRetryBusy(deadlock, attempt: 8, elapsedSeconds: 1))
        #expect(RetryPolicy.shouldRetryBusy(deadlock, attempt: 7, elapsedSeconds: budget + 1))
        #expect(!RetryPolicy.shouldRetryBusy(.lockedPastTimeout, attempt: 3, elapsedSeconds: 1))
    }

    @Test func conflictsAreRunAgainOnlyWhenAsked() {
        var calls = 0
        #expect(throws: StoreError.self) {
            try RetryPolicy.run { () throws -> Int in
                calls += 1
                throw StoreError.conflict("duplicate")
            }
        }
        #expect(calls == 1 + RetryPolicy.conflictRetries)
        calls = 0
        #expect(throws: StoreError.self) {
            try RetryPolicy.run(retryingConflicts: false) { () throws -> Int in
                calls += 1
                throw StoreError.conflict("duplicate")
            }
        }
        #expect(calls == 1)
    }
}
