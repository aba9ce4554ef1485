import AppStoreJWS
import AppStoreReceipt
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl notify [FILE]`: verifies App Store Server Notifications V2 and applies them through
/// the subscription-event engine, one result per input item, in input order.
enum NotifyCommand {
    /// `--atomic`.
    static let atomic = OptionSpec.flag(
        "atomic", help: "Apply the whole batch in one transaction: all items or none.")

    /// `--replay-unmatched`.
    static let replayUnmatched = OptionSpec.flag(
        "replay-unmatched", help: "Apply again the notifications kept as unmatched in the ledger.")

    /// `--gap-report FILE`.
    static let gapReport = Option<String?>(
        "gap-report", valueName: "file",
        help: "Report the notifications in these saved Get Notification History responses that the "
            + "ledger never applied, with Apple's send attempts (exit 1 when some are missing).",
        completion: .file)

    static let command = CommandSpec(
        name: "notify",
        abstract: "Apply App Store Server Notifications V2.",
        discussion: """
            Reads a raw JWS, a webhook body {"signedPayload": "…"}, or many of either one per line, \
            from FILE or stdin. Each is verified (signature, certificate chain, bundle id, app id, \
            environment), kept in the ledger, and applied through the subscription engine.

            Each item gets a verdict: applied, duplicate, stale, ignored, unmatched or rejected. \
            A single item exits with its code; a batch exits 0, or 1 if some item failed.
            """,
        examples: [
            CommandExample(
                "iapctl notify body.json --bundle-id com.example.app --app-apple-id 1234567890",
                "Apply one webhook body."),
            CommandExample(
                "iapctl notify --environment Sandbox -o ndjson < notifications.ndjson",
                "Apply many Sandbox notifications; one result object per line."),
            CommandExample("iapctl notify --replay-unmatched", "Retry unmatched notifications after creating orders."),
            CommandExample(
                "iapctl notify --gap-report history.json --apply", "Apply what Apple sent but never reached us."),
        ],
        options: [
            CommandTree.dryRun, atomic, replayUnmatched, gapReport,
            CommandTree.applyOption.with(help: "With --gap-report: replay exactly the missing notifications."),
        ] + CommandTree.trustOptions + CommandTree.receiptOptions,
        arguments: [CommandTree.inputFile],
        handler: run
    )

    static let columns: [Column] = [
        "line", Column("verdict", important: true), Column("type", important: true), "transaction",
        Column("detail", maxWidth: 100, important: true, wraps: true),
    ]

    /// Items verified together (and, without --dry-run, committed in one transaction).
    static let chunkSize = 512

    /// `notify`, or the gap report when `--gap-report` is given.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let gapReport = invocation[gapReport] else {
            if invocation.flag(CommandTree.applyOption) {
                throw CLIError.usage("--apply goes with --gap-report", hint: "notify applies its input already")
            }
            return try ingest(invocation)
        }
        return try GapReport.run(invocation, path: gapReport, input: invocation[CommandTree.inputFile])
    }

    static func ingest(_ invocation: Invocation) throws -> ExitCode {
        let trust = try TrustSetup.settings(invocation, for: .jws)
        let verifier = try TrustSetup.verifier(trust)
        let store = try DbOpen.open(invocation)
        if invocation.flag(replayUnmatched) { return try replayUnmatched(invocation, verifier: verifier, store: store) }

        let timings = PhaseTimings(enabled: invocation.environment["IAPCTL_TIMINGS"] == "1")
        let batches = VerifiedBatches(
            InputItems(try invocation.openInput(invocation[CommandTree.inputFile])), verifier: verifier,
            chunkSize: chunkSize, timings: timings)
        let ingest = NotificationIngest(
            store: store, context: EngineContext(actor: invocation.actor, command: "notify"), timings: timings,
            shouldStop: { Interrupt.isRequested })
        let dryRun = invocation.flag(CommandTree.dryRun)
        let printer = BatchPrinter(invocation, columns: columns)
        var count = 0
        /// Items whose work was committed (engine verdicts and poison items kept in the ledger,
        /// not items refused before the store): told after a Ctrl-C.
        var committed = 0
        defer {
            if let line = timings.summary(
                items: count, threads: VerifiedBatches.threadCount, cache: verifier.chainCacheStatistics)
            {
                invocation.stderr.writeLine(line)
            }
        }

        if invocation.flag(atomic) || dryRun {
            return try runInOneTransaction(
                invocation, batches: batches, ingest: ingest, printer: printer, count: &count,
                atomic: invocation.flag(atomic), dryRun: dryRun, roots: trust.roots)
        }

        Interrupt.install()
        do {
            while let batch = try batches.next() {
                if Interrupt.isRequested { throw Interrupt.Stop() }
                try ingest.applyCommitted(
                    batch,
                    deliver: { item, result in
                        warn(invocation, item)
                        if result.isStored { committed += 1 }
                        printer.add(itemResult(item, result, roots: trust.roots))
                        count += 1
                    },
                    delivered: {
                        try? invocation.stdout.flush()
                        printer.refreshProgress()
                    })
            }
        } catch {
            // Ctrl-C rolled the open chunk back: everything reported is committed. After another
            // error a rerun of the same input is safe (duplicates are recognised).
            return try printer.stopped(
                by: error, command: "notify", committed: committed, final: "those reported above are final",
                rerun: "re-running the same input is safe")
        }
        guard !batches.isEmpty else { throw noInput(invocation) }
        return printer.finish(command: "notify")
    }

    /// Verification warnings of an item (e.g. Xcode data accepted unverified), on stderr.
    static func warn(_ invocation: Invocation, _ item: VerifiedItem) {
        for warning in item.warnings { invocation.warn("line \(item.line): \(warning)") }
    }

    /// The printed result of one ingested item.
    static func itemResult(_ item: VerifiedItem, _ result: IngestResult, roots: TrustSettings.Roots) -> ItemReport {
        ItemReport(line: item.line, result) { $0.hint(roots: roots) }
    }

    /// `--atomic` and `--dry-run`: the whole batch in one transaction, each item in a savepoint and
    /// seeing the items before it, so a dry run predicts exactly what the real run gives. A dry run
    /// always rolls back; `--atomic` commits unless an item fails, and then reports every line as
    /// `not-applied`, the one that caused it with its reason.
    private static func runInOneTransaction(
        _ invocation: Invocation, batches: VerifiedBatches, ingest: NotificationIngest, printer: BatchPrinter,
        count: inout Int, atomic: Bool, dryRun: Bool, roots: TrustSettings.Roots
    ) throws -> ExitCode {
        // A dry run streams its results (nothing will be committed); an atomic batch holds them until COMMIT.
        var results: [ItemReport] = []
        let unread = try ingest.runInOneTransaction(batches, commit: !dryRun) { item, ingested in
            warn(invocation, item)
            var result = itemResult(item, ingested, roots: roots)
            count += 1
            if dryRun { result.dryRun = true }
            guard atomic else {
                printer.add(result)
                return true
            }
            results.append(result)
            return result.outcome == .success
        }
        if let unread, let aborted = AbortedBatch(reports: results, unread: unread, batch: "the --atomic batch") {
            let cause = aborted.cause
            for line in aborted.reports {
                if line.line == cause.line, cause.verdict != .rejected {
                    invocation.stderr.writeLine("error: line \(cause.line): \(aborted.why)")
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

    static func noInput(_ invocation: Invocation) -> CLIError {
        CLIError(
            .noInput, "no input: expected App Store notifications (JWS or {\"signedPayload\": …}), one per line",
            hint: "pipe them in, e.g. iapctl notify < notifications.ndjson, or name a file")
    }

    /// A pointer for the common mistake of feeding the wrong kind of JWS; `roots`: the JWS
    /// verifier's (named for an untrusted chain).
    static func hint(for report: VerificationReport, roots: TrustSettings.Roots) -> String? {
        switch report.kind {
        case .transaction: return "this is a signed transaction, not a notification: use `iapctl verify --apply`"
        case .renewalInfo: return "this is a signed renewal info, not a notification: use `iapctl verify`"
        default: break
        }
        switch report.failure?.code {
        case .invalidEnvironment?: return "accept it with --environment \(report.environment ?? EnvironmentName.sandbox.rawValue)"
        case .invalidAppIdentifier?: return "check --bundle-id / --app-apple-id"
        case .certificateExpiredOrNotYetValid?: return "the chain is checked at --at (default: the payload's signedDate)"
        case .untrustedChain?: return TrustSetup.untrustedHint(roots)
        default: return nil
        }
    }

    /// `notify --replay-unmatched`: retries every ledger item still `unmatched`, in order.
    static func replayUnmatched(_ invocation: Invocation, verifier: AppStoreVerifier, store: any Store) throws -> ExitCode {
        let engine = SubscriptionEventEngine()
        let context = EngineContext(actor: invocation.actor, command: "notify --replay-unmatched")
        let dryRun = invocation.flag(CommandTree.dryRun)
        let printer = BatchPrinter(invocation, columns: [Column("line", title: "LEDGER")] + columns.dropFirst())
        let entries = try UnmatchedReplay.pending(in: store)
        var receipts: ReceiptVerifier? = nil
        for entry in entries {
            let line = Int(entry.id)
            let result = try UnmatchedReplay.replay(
                entry, jws: verifier,
                receipts: {
                    // An in-app entry of an app receipt (verify --apply, restore --apply): verified again as a receipt.
                    if let receipts { return receipts }
                    let made = try TrustSetup.receiptVerifier(invocation)
                    receipts = made
                    return made
                }, store: store, engine: engine, context: context, dryRun: dryRun)
            printer.add(ItemReport(line: line, result))
        }
        if entries.isEmpty {
            invocation.note("notify: no unmatched items to replay")
            return .success
        }
        return printer.finish(command: "notify --replay-unmatched")
    }
}
