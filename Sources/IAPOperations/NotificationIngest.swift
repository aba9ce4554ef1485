import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// Why an input item was refused before the engine. Typed: the command layer words it (hints,
/// exit codes).
public enum Refusal: Sendable {
    /// The item could not be read as a JWS (framing, encoding, size).
    case malformed(VerificationFailure)
    /// The JWS failed verification; `report` says what it was (kind, environment) and
    /// `isReceipt` whether the bytes are a StoreKit 1 app receipt instead.
    case failedVerification(VerificationFailure, VerificationReport, isReceipt: Bool)
    /// Verified, but not a notification the engine can apply.
    case notApplicable

    /// Why, as the ledger keeps it.
    public var reason: String {
        switch self {
        case .malformed(let failure), .failedVerification(let failure, _, _): failure.message
        case .notApplicable: "not a notification the engine can apply"
        }
    }
}

/// One input item of `notify` after verification, ready to apply in input order.
public struct VerifiedItem: Sendable {
    /// What verification made of the item.
    public enum Verdict: Sendable {
        /// Refused before the engine.
        case rejected(Refusal)
        /// A verified event whose fields do not fit the store (``StoredFields/violation(_:)``):
        /// refused, but kept in the ledger.
        case poison(SubscriptionEvent, why: String)
        /// A verified event for the engine.
        case event(SubscriptionEvent)
    }

    public let line: Int
    /// Verification warnings (e.g. Xcode data accepted unverified), reported when the item is applied.
    public let warnings: [String]
    public let verdict: Verdict
    /// The item's JWS as received, when its bytes could be read (nil when the framing failed).
    public let raw: String?

    public init(line: Int, warnings: [String], verdict: Verdict, raw: String? = nil) {
        self.line = line
        self.warnings = warnings
        self.verdict = verdict
        self.raw = raw
    }

    /// Whether the item needs no store at all: refused before its bytes could be read.
    var needsNoStore: Bool {
        if case .rejected = verdict { return raw == nil }
        return false
    }

    /// Verifies one input item as a notification (on any thread) and maps it to an engine event.
    public static func verify(_ item: WebhookBody.Item, with verifier: AppStoreVerifier) -> VerifiedItem {
        let jws: String
        switch item.result {
        case .failure(let failure):
            return VerifiedItem(line: item.line, warnings: [], verdict: .rejected(.malformed(failure)))
        case .success(let token): jws = token
        }
        let report = PasteDamage.cutInsideSignature(verifier.verify(jws, as: .notification), jws: jws)
        if let failure = report.failure {
            let receipt = jws.hasPrefix("MI") && ReceiptInput.der(fromBase64: jws) != nil
            return VerifiedItem(
                line: item.line, warnings: [], verdict: .rejected(.failedVerification(failure, report, isReceipt: receipt)),
                raw: jws)
        }
        guard let event = EventMapping.event(from: report, raw: jws, source: .apple) else {
            return VerifiedItem(line: item.line, warnings: report.warnings, verdict: .rejected(.notApplicable), raw: jws)
        }
        if let why = StoredFields.violation(event) {
            return VerifiedItem(line: item.line, warnings: report.warnings, verdict: .poison(event, why: why))
        }
        return VerifiedItem(line: item.line, warnings: report.warnings, verdict: .event(event))
    }
}

/// What became of one item of a batch.
public enum IngestResult {
    /// Refused: nothing changed; kept in the ledger (once per distinct bytes) when its bytes could
    /// be read.
    case rejected(Refusal)
    /// Refused, kept in the ledger with verdict `rejected` (its fields do not fit the store).
    case poison(SubscriptionEvent, why: String)
    /// The engine's outcome.
    case applied(SubscriptionEvent, Outcome)

    /// Whether the item's work is in the store once its transaction commits (engine verdicts and
    /// poison items; refused items count as refused even when the ledger keeps their bytes).
    public var isStored: Bool {
        if case .rejected = self { return false }
        return true
    }
}

/// Ingest of verified notification batches through the one engine: group commit (a transaction
/// per chunk, a savepoint per item), one transaction for a whole batch (`--atomic`, dry runs),
/// rows locked in a fixed order, and the engine's ``RetryPolicy``.
public final class NotificationIngest {
    public let store: any Store
    public let engine: SubscriptionEventEngine
    public let context: EngineContext
    let timings: PhaseTimings
    package let shouldStop: () -> Bool
    let clock: () -> Int64

    /// - Parameters:
    ///   - shouldStop: asked between items of a chunk (Ctrl-C): true stops the chunk, rolled back.
    ///   - clock: `received_at` of ledger rows written here (milliseconds since the epoch).
    public init(
        store: any Store, engine: SubscriptionEventEngine = SubscriptionEventEngine(), context: EngineContext,
        timings: PhaseTimings = PhaseTimings(enabled: false), shouldStop: @escaping () -> Bool = { false },
        clock: @escaping () -> Int64 = Timestamp.now
    ) {
        self.store = store
        self.engine = engine
        self.context = context
        self.timings = timings
        self.shouldStop = shouldStop
        self.clock = clock
    }

    /// Thrown inside a chunk's transaction when ``shouldStop`` says so: the chunk is rolled back.
    public struct Stopped: Error {
        package init() {}
    }

    /// One item inside an open write transaction: a refused item's ledger row (when its bytes
    /// could be read), a poison item's ledger row, or the engine's outcome in its own savepoint.
    /// Refused bytes are kept once (``RejectedItems``); a poison item, like any verified delivery, at
    /// each delivery.
    public func process(_ item: VerifiedItem, in session: any StoreSession, retryingConflicts: Bool) throws -> IngestResult {
        switch item.verdict {
        case .rejected(let refusal):
            if let raw = item.raw {
                try RejectedItems.keep(raw, source: .apple, why: refusal.reason, receivedAt: clock(), in: session)
            }
            return .rejected(refusal)
        case .poison(let event, let why):
            _ = try session.appendLedger(StoredFields.rejectedEntry(event, detail: why, receivedAt: clock()))
            return .poison(event, why: why)
        case .event(let event):
            let outcome = try engine.apply(event, inSavepointOf: session, context: context, retryingConflicts: retryingConflicts)
            return .applied(event, outcome)
        }
    }

    private struct Abort: Error {}

    /// Every batch in one transaction (`--atomic`, `--dry-run`), each item in a savepoint seeing the
    /// items before it, so a dry run predicts exactly what the real run gives. `each` receives every
    /// result in input order and returns false to stop: the transaction is then rolled back and the
    /// lines never processed are returned (nil when the batch ran through). Commits when `commit`.
    public func runInOneTransaction(
        _ batches: VerifiedBatches, commit: Bool, each: (VerifiedItem, IngestResult) throws -> Bool
    ) throws -> [Int]? {
        var unread: [Int] = []
        do {
            try store.write(commit: commit) { session in
                while let batch = try batches.next() {
                    let mark = timings.start()
                    defer { timings.add(.engine, since: mark) }
                    try Self.lockRows(of: batch[...], in: session)
                    for (index, item) in batch.enumerated() {
                        let result = try process(item, in: session, retryingConflicts: false)
                        if try !each(item, result) {
                            unread = batch[(index + 1)...].map(\.line)
                            throw Abort()
                        }
                    }
                }
            }
        } catch is Abort {
            // The lines not processed yet are not applied either.
            while let batch = try? batches.next() { unread += batch.map(\.line) }
            return unread
        }
        return nil
    }

    /// Group commit: the chunk's events in one write transaction, a savepoint each, so a failed
    /// item undoes only itself. `deliver` receives the results in input order once they are final:
    /// leading items refused unread at once (they need no transaction, nor a database that works),
    /// the rest after COMMIT; then `delivered` is called. A store error stops the run after the items
    /// before it are committed and delivered (as when each had its own transaction). A chunk whose
    /// transaction failed busy was rolled back whole and nothing of it delivered: it runs again
    /// under the engine's ``RetryPolicy``.
    public func applyCommitted(
        _ batch: [VerifiedItem], deliver: (VerifiedItem, IngestResult) -> Void, delivered: () -> Void = {}
    ) throws {
        var start = 0
        while start < batch.count, batch[start].needsNoStore, case .rejected(let refusal) = batch[start].verdict {
            deliver(batch[start], .rejected(refusal))
            start += 1
        }
        guard start < batch.count else { return }

        var done: [(VerifiedItem, IngestResult)] = []
        done.reserveCapacity(batch.count - start)
        var stop: (any Error)?
        let mark = timings.start()
        var bodyTime = PhaseTimings.Mark()
        do {
            try RetryPolicy.run(retryingConflicts: false) {
                done.removeAll(keepingCapacity: true)
                stop = nil
                try store.write(commit: true) { session in
                    let bodyMark = timings.start()
                    defer { bodyTime = timings.elapsed(since: bodyMark) }
                    try Self.lockRows(of: batch[start...], in: session)
                    for item in batch[start...] {
                        if shouldStop() { throw Stopped() }
                        do {
                            done.append((item, try process(item, in: session, retryingConflicts: true)))
                        } catch StoreError.busy(let message, let reason) {
                            throw StoreError.busy(message, reason)
                        } catch {
                            stop = error
                            return
                        }
                    }
                }
            }
        } catch {
            // Nothing of this chunk was committed.
            throw stop ?? error
        }
        // The transaction's body is engine+store work; the rest is BEGIN and COMMIT (the fsync).
        let whole = timings.elapsed(since: mark)
        timings.add(.engine, bodyTime)
        timings.add(.commit, PhaseTimings.Mark(wall: whole.wall - bodyTime.wall, cpu: whole.cpu - bodyTime.cpu))

        let printed = timings.start()
        for (item, result) in done { deliver(item, result) }
        delivered()
        timings.add(.output, since: printed)
        if let stop { throw stop }
    }

    /// Locks the contracts and token orders the chunk's events will update, in one fixed order,
    /// before any of them is applied: concurrent batches over the same subscriptions (a shuffled
    /// replay in several processes) then queue instead of deadlocking.
    public static func lockRows(of items: ArraySlice<VerifiedItem>, in session: any StoreSession) throws {
        var contracts: [String] = []
        var orders: [String] = []
        for item in items {
            guard case .event(let event) = item.verdict else { continue }
            if let id = event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId { contracts.append(id) }
            if let token = event.transaction?.appAccountToken, !token.isEmpty {
                orders.append(token)
                if token.lowercased() != token { orders.append(token.lowercased()) }
            }
        }
        guard !contracts.isEmpty || !orders.isEmpty else { return }
        try session.lockRows(contractIds: contracts, orderNos: orders)
    }
}
