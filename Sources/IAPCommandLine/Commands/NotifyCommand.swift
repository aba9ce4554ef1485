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

        if invocation.flag("atomic") {
            // Everything in one transaction; the first failed item rolls all back.
            var results: [ItemResult] = []
            do {
                try store.write(commit: !dryRun) { session in
                    while let batch = try batches.next() {
                        let mark = timings.start()
                        defer { timings.add(.engine, since: mark) }
                        for item in batch {
                            warn(item)
                            let result: ItemResult
                            switch item.verdict {
                            case .rejected(let rejected): result = rejected
                            case .event(let event):
                                result = .applied(
                                    line: item.line, event: event,
                                    outcome: try applyInSavepoint(event, session, retry: false))
                            }
                            results.append(result)
                            count += 1
                            if result.code != .success { throw AtomicAbort() }
                        }
                    }
                }
            } catch is AtomicAbort {
                for result in results { printer.add(result) }
                _ = printer.finish(command: "notify", extraNote: "--atomic: nothing was applied")
                return .failure
            }
            guard !batches.isEmpty else { throw noInput(invocation) }
            for result in results { printer.add(result) }
            return printer.finish(command: "notify", extraNote: dryRun ? "dry run: nothing was written" : nil)
        }

        while let batch = try batches.next() {
            if dryRun {
                // Each item on its own, rolled back: it sees none of the others' changes.
                for item in batch {
                    warn(item)
                    switch item.verdict {
                    case .rejected(let result): printer.add(result)
                    case .event(let event):
                        let outcome = try engine.apply(event, to: store, context: context, dryRun: true)
                        printer.add(.applied(line: item.line, event: event, outcome: outcome))
                    }
                    count += 1
                }
                continue
            }
            try applyCommitted(
                batch, store: store, printer: printer, timings: timings, count: &count,
                warn: warn, apply: { try applyInSavepoint($0, $1, retry: true) })
        }
        guard !batches.isEmpty else { throw noInput(invocation) }
        return printer.finish(command: "notify", extraNote: dryRun ? "dry run: nothing was written" : nil)
    }

    /// Group commit: the chunk's events in one write transaction, a savepoint each, so a failed
    /// item undoes only itself. Results are printed once committed. A store error stops the run
    /// after the items before it are committed and reported (as when each had its own transaction).
    private static func applyCommitted(
        _ batch: [VerifiedItem], store: any Store, printer: ItemPrinter, timings: PhaseTimings, count: inout Int,
        warn: (VerifiedItem) -> Void, apply: (SubscriptionEvent, any StoreSession) throws -> Outcome
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
                    for item in batch[start...] {
                        switch item.verdict {
                        case .rejected(let result): done.append((item, result))
                        case .event(let event):
                            do {
                                done.append((item, .applied(line: item.line, event: event, outcome: try apply(event, session))))
                            } catch StoreError.busy(let message) {
                                throw StoreError.busy(message)
                            } catch {
                                stop = error
                                return
                            }
                        }
                    }
                }
                break
            } catch StoreError.busy where attempt < SubscriptionEventEngine.busyAttempts {
                SubscriptionEventEngine.pause(beforeAttempt: attempt)
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
        for (item, result) in done {
            warn(item)
            printer.add(result)
            count += 1
        }
        try? printer.invocation.stdout.flush()
        timings.add(.output, since: printed)
        if let stop { throw stop }
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
