import AppStoreJWS
import AppStoreReceipt
import SubscriptionEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `iapctl notify [FILE]`: verifies App Store Server Notifications V2 and applies them through
/// the subscription-event engine, one result per input item, in input order.
enum NotifyCommand {
    static let columns: [Column] = ["line", "verdict", "type", "transaction", Column("detail", maxWidth: 100)]

    private struct AtomicAbort: Error {}

    /// Items verified together (and, without --dry-run, committed in one transaction).
    static let chunkSize = 512

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let verifier = try TrustSetup.verifier(invocation)
        let store = try StoreAccess.open(invocation)
        if invocation.flag("replay-unmatched") { return try replayUnmatched(invocation, verifier: verifier, store: store) }

        let timings = PhaseTimings(enabled: invocation.environment["IAPCTL_TIMINGS"] == "1")
        let batches = VerifiedBatches(
            InputItems(try invocation.openInput(invocation.arguments.first)), verifier: verifier,
            chunkSize: chunkSize, timings: timings)
        let engine = SubscriptionEventEngine()
        let context = EngineContext(actor: invocation.actor, command: "notify")
        let dryRun = invocation.flag("dry-run")
        let printer = ItemPrinter(invocation, columns: columns)
        var count = 0
        defer {
            if let line = timings.summary(
                items: count, threads: VerifiedBatches.threadCount, cache: verifier.chainCacheStatistics)
            {
                invocation.stderr.writeLine(line)
            }
        }

        func warn(_ item: VerifiedItem) {
            for warning in item.warnings { invocation.warn("line \(item.line): \(warning)") }
        }

        /// Applies one event inside an open write transaction, in its own savepoint; a unique-key
        /// race is retried like ``SubscriptionEventEngine/apply(_:to:context:dryRun:)`` does.
        func applyInSavepoint(_ event: SubscriptionEvent, _ session: any StoreSession, retry: Bool) throws -> Outcome {
            var attempt = 0
            while true {
                do {
                    return try session.savepoint { try engine.apply(event, in: session, context: context) }
                } catch StoreError.conflict where retry && attempt < 3 {
                    attempt += 1
                }
            }
        }

        /// One item inside an open write transaction: refused items as they are, a poison item's
        /// ledger row, or the engine's outcome in its own savepoint.
        func process(_ item: VerifiedItem, _ session: any StoreSession, retry: Bool) throws -> ItemResult {
            switch item.verdict {
            case .rejected(let result): return result
            case .poison(let event, let result):
                _ = try session.appendLedger(
                    StoredFields.rejectedEntry(event, detail: result.error ?? "rejected", receivedAt: Timestamp.now()))
                return result
            case .event(let event):
                return .applied(line: item.line, event: event, outcome: try applyInSavepoint(event, session, retry: retry))
            }
        }

        if invocation.flag("atomic") || dryRun {
            return try runInOneTransaction(
                invocation, batches: batches, store: store, printer: printer, timings: timings, count: &count,
                atomic: invocation.flag("atomic"), dryRun: dryRun, warn: warn, process: process)
        }

        Interrupt.install()
        do {
            while let batch = try batches.next() {
                if Interrupt.isRequested { throw Interrupt.Stop() }
                try applyCommitted(
                    batch, store: store, printer: printer, timings: timings, count: &count,
                    warn: warn, process: { try process($0, $1, retry: true) })
            }
        } catch  where Interrupt.isRequested {
            // Ctrl-C: the open chunk was rolled back; everything reported is committed.
            if printer.count > 0 { _ = printer.finish(command: "notify") }
            invocation.stderr.writeLine(
                "interrupted after \(printer.count) item\(printer.count == 1 ? "" : "s"): "
                    + "\(printer.committed) committed; re-running is safe")
            try? invocation.stderr.flush()
            return .interrupted
        } catch {
            // A stalled or lost database, a full disk: what was committed is reported (tables too)
            // before the error, and a rerun of the same input is safe (duplicates are recognised).
            if printer.count > 0 {
                _ = printer.finish(
                    command: "notify",
                    extraNote: "stopped after \(printer.count) item\(printer.count == 1 ? "" : "s") (those reported above are final); "
                        + "re-running the same input is safe")
            }
            throw error
        }
        guard !batches.isEmpty else { throw noInput(invocation) }
        return printer.finish(command: "notify")
    }

    /// `--atomic` and `--dry-run`: the whole batch in one transaction, each item in a savepoint and
    /// seeing the items before it, so a dry run predicts exactly what the real run gives. A dry run
    /// always rolls back; `--atomic` commits unless an item fails, and then reports every line as
    /// `not-applied`, the one that caused it with its reason.
    private static func runInOneTransaction(
        _ invocation: Invocation, batches: VerifiedBatches, store: any Store, printer: ItemPrinter, timings: PhaseTimings,
        count: inout Int, atomic: Bool, dryRun: Bool, warn: (VerifiedItem) -> Void,
        process: (VerifiedItem, any StoreSession, Bool) throws -> ItemResult
    ) throws -> ExitCode {
        // A dry run streams its results (nothing will be committed); an atomic batch holds them until COMMIT.
        var results: [ItemResult] = []
        var cause: ItemResult?
        var unread: [Int] = []
        func report(_ result: ItemResult) {
            var result = result
            if dryRun { result.dryRun = true }
            if atomic { results.append(result) } else { printer.add(result) }
        }
        do {
            try store.write(commit: !dryRun) { session in
                while let batch = try batches.next() {
                    let mark = timings.start()
                    defer { timings.add(.engine, since: mark) }
                    try lockRows(of: batch[...], in: session)
                    for (index, item) in batch.enumerated() {
                        warn(item)
                        let result = try process(item, session, false)
                        count += 1
                        report(result)
                        if atomic, result.code != .success {
                            cause = result
                            unread = batch[(index + 1)...].map(\.line)
                            throw AtomicAbort()
                        }
                    }
                }
            }
        } catch is AtomicAbort {
            guard let cause else { throw AtomicAbort() }
            // The lines not processed yet are not applied either: each gets its line.
            var lines = unread
            while let batch = try? batches.next() { lines += batch.map(\.line) }
            for line in lines { results.append(ItemResult(line: line, verdict: "", code: .failure)) }
            let why = "\(cause.verdict): \(cause.error ?? cause.detail ?? "failed")"
            for result in results {
                var line = result
                line.verdict = notApplied
                line.code = .failure
                line.changes = []
                line.detail = nil
                line.dryRun = false
                if result.line == cause.line {
                    line.error = why + "; the --atomic batch was rolled back: nothing was applied"
                    if cause.verdict != Verdict.rejected.rawValue {
                        invocation.stderr.writeLine("error: line \(cause.line): \(why)")
                    }
                } else {
                    line.error = "not applied: the --atomic batch was rolled back at line \(cause.line)"
                }
                printer.add(line)
            }
            _ = printer.finish(
                command: "notify", extraNote: "--atomic: nothing was applied (line \(cause.line): \(cause.verdict))")
            return .failure
        }
        guard !batches.isEmpty else { throw noInput(invocation) }
        for result in results { printer.add(result) }
        return printer.finish(command: "notify", extraNote: dryRun ? "dry run: nothing was written" : nil)
    }

    /// The verdict of every line of an aborted `--atomic` batch.
    static let notApplied = "not-applied"

    /// Group commit: the chunk's events in one write transaction, a savepoint each, so a failed
    /// item undoes only itself. Results are printed once committed. A store error stops the run
    /// after the items before it are committed and reported (as when each had its own transaction).
    private static func applyCommitted(
        _ batch: [VerifiedItem], store: any Store, printer: ItemPrinter, timings: PhaseTimings, count: inout Int,
        warn: (VerifiedItem) -> Void, process: (VerifiedItem, any StoreSession) throws -> ItemResult
    ) throws {
        // Leading items the engine never sees need no transaction (nor a database that works).
        var start = 0
        while start < batch.count, case .rejected(let result) = batch[start].verdict {
            warn(batch[start])
            printer.add(result)
            count += 1
            start += 1
        }
        guard start < batch.count else { return }

        var done: [(VerifiedItem, ItemResult)] = []
        done.reserveCapacity(batch.count - start)
        var stop: (any Error)?
        let mark = timings.start()
        var bodyTime = PhaseTimings.Mark()
        // A busy database (SQLite's busy timeout, a MySQL deadlock) rolled the chunk's transaction
        // back whole, and nothing of it was reported: it is run again, as the engine does for one event.
        var attempt = 1
        while true {
            done.removeAll(keepingCapacity: true)
            stop = nil
            do {
                try store.write(commit: true) { session in
                    let bodyMark = timings.start()
                    defer { bodyTime = timings.elapsed(since: bodyMark) }
                    try lockRows(of: batch[start...], in: session)
                    for item in batch[start...] {
                        if Interrupt.isRequested { throw Interrupt.Stop() }
                        do {
                            done.append((item, try process(item, session)))
                        } catch StoreError.busy(let message) {
                            throw StoreError.busy(message)
                        } catch {
                            stop = error
                            return
                        }
                    }
                }
                break
            } catch StoreError.busy(let message) where attempt < chunkAttempts(message) {
                chunkPause(beforeAttempt: attempt)
                attempt += 1
            } catch {
                // Nothing of this chunk was committed.
                throw stop ?? error
            }
        }
        // The transaction's body is engine+store work; the rest is BEGIN and COMMIT (the fsync).
        let whole = timings.elapsed(since: mark)
        timings.add(.engine, bodyTime)
        timings.add(.commit, PhaseTimings.Mark(wall: whole.wall - bodyTime.wall, cpu: whole.cpu - bodyTime.cpu))

        let printed = timings.start()
        printer.committed += done.count(where: { item, _ in
            if case .rejected = item.verdict { return false }
            return true
        })
        for (item, result) in done {
            warn(item)
            printer.add(result)
            count += 1
        }
        try? printer.invocation.stdout.flush()
        timings.add(.output, since: printed)
        if let stop { throw stop }
    }

    /// How many times a chunk whose transaction failed busy is run: on MySQL/MariaDB (a deadlock,
    /// rare once rows are locked in a fixed order, or a lock wait that timed out behind other
    /// batches; the server rolled the chunk back) up to 8 times, about 4 s of pauses in all;
    /// on SQLite (whose busy timeout already waited 15 s) 3 times.
    static func chunkAttempts(_ message: String) -> Int {
        message.contains("(MySQL error 1213") || message.contains("(MySQL error 1205")
            ? 8 : SubscriptionEventEngine.busyAttempts
    }

    /// 50 ms before the 2nd attempt, doubling up to 1 s, plus up to 100 ms of jitter.
    static func chunkPause(beforeAttempt attempt: Int) {
        let milliseconds = min(50 << (attempt - 1), 1000) + Int.random(in: 0..<100)
        var delay = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&delay, &remaining) != 0 && errno == EINTR { delay = remaining }
    }

    /// Locks the contracts and token orders the chunk's events will update, in one fixed order,
    /// before any of them is applied: concurrent batches over the same subscriptions (a shuffled
    /// replay in several processes) then queue instead of deadlocking.
    static func lockRows(of items: ArraySlice<VerifiedItem>, in session: any StoreSession) throws {
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

    /// Verifies one input item (on any thread) and maps it to an engine event.
    static func verify(_ item: WebhookBody.Item, with verifier: AppStoreVerifier) -> VerifiedItem {
        let jws: String
        switch item.result {
        case .failure(let failure):
            return VerifiedItem(line: item.line, warnings: [], verdict: .rejected(.rejected(line: item.line, failure)))
        case .success(let token): jws = token
        }
        let report = verifier.verify(jws, as: .notification)
        if let failure = report.failure {
            let receipt = jws.hasPrefix("MI") && ReceiptInput.der(fromBase64: jws) != nil
            let why = receipt ? "this is a StoreKit 1 app receipt: use `iapctl verify` or `iapctl restore`" : hint(for: report)
            return VerifiedItem(
                line: item.line, warnings: [], verdict: .rejected(.rejected(line: item.line, failure, hint: why)))
        }
        guard let event = EventMapping.event(from: report, raw: jws, source: .apple) else {
            return VerifiedItem(
                line: item.line, warnings: report.warnings,
                verdict: .rejected(.rejected(line: item.line, code: .dataError, "not a notification the engine can apply")))
        }
        if let why = StoredFields.violation(event) {
            return VerifiedItem(
                line: item.line, warnings: report.warnings,
                verdict: .poison(event, StoredFields.rejectedResult(line: item.line, event, why)))
        }
        return VerifiedItem(line: item.line, warnings: report.warnings, verdict: .event(event))
    }

    static func noInput(_ invocation: Invocation) -> CLIError {
        CLIError(
            .noInput, "no input: expected App Store notifications (JWS or {\"signedPayload\": …}), one per line",
            hint: "pipe them in, e.g. iapctl notify < notifications.ndjson, or name a file")
    }

    /// A pointer for the common mistake of feeding the wrong kind of JWS.
    static func hint(for report: VerificationReport) -> String? {
        switch report.kind {
        case .transaction: return "this is a signed transaction, not a notification: use `iapctl verify --apply`"
        case .renewalInfo: return "this is a signed renewal info, not a notification: use `iapctl verify`"
        default: break
        }
        switch report.failure?.code {
        case .invalidEnvironment?: return "accept it with --environment \(report.environment ?? "Sandbox")"
        case .invalidAppIdentifier?: return "check --bundle-id / --app-apple-id"
        case .certificateExpiredOrNotYetValid?: return "the chain is checked at --at (default: the payload's signedDate)"
        case .untrustedChain?: return TrustSetup.untrustedHint
        default: return nil
        }
    }

    /// `notify --replay-unmatched`: retries every ledger item still `unmatched`, in order.
    static func replayUnmatched(_ invocation: Invocation, verifier: AppStoreVerifier, store: any Store) throws -> ExitCode {
        let engine = SubscriptionEventEngine()
        let context = EngineContext(actor: invocation.actor, command: "notify --replay-unmatched")
        let dryRun = invocation.flag("dry-run")
        let printer = ItemPrinter(invocation, columns: [Column("line", title: "LEDGER")] + columns.dropFirst())
        let entries = try store.read { try $0.unmatchedLedger(limit: nil) }
        var receipts: ReceiptVerifier? = nil
        for entry in entries {
            if ReceiptMapping.isReceipt(entry) {
                // An in-app entry of an app receipt (verify --apply, restore --apply): verified again as a receipt.
                if receipts == nil { receipts = try TrustSetup.receiptVerifier(invocation) }
                let result = try ReceiptOutput.replay(
                    entry, verifier: receipts!, store: store, engine: engine, context: context, dryRun: dryRun)
                printer.add(result)
                continue
            }
            let report = verifier.verify(entry.raw)
            if let failure = report.failure {
                printer.add(.rejected(line: Int(entry.id), failure))
                continue
            }
            guard let event = EventMapping.event(from: report, raw: entry.raw, source: entry.source) else {
                printer.add(.rejected(line: Int(entry.id), code: .dataError, "ledger item is not an applicable JWS"))
                continue
            }
            let outcome = try store.write(commit: !dryRun) { session in
                try engine.apply(event, in: session, context: context, replaying: entry.id)
            }
            printer.add(.applied(line: Int(entry.id), event: event, outcome: outcome))
        }
        if entries.isEmpty {
            invocation.note("notify: no unmatched items to replay")
            return .success
        }
        return printer.finish(command: "notify --replay-unmatched")
    }
}
