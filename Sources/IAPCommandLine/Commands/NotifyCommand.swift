import AppStoreJWS
import SubscriptionEngine

/// `iapctl notify [FILE]`: verifies App Store Server Notifications V2 and applies them through
/// the subscription-event engine, one result per input item, in input order.
enum NotifyCommand {
    static let columns: [Column] = ["line", "verdict", "type", "transaction", Column("detail", maxWidth: 100)]

    private struct AtomicAbort: Error {}

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let verifier = try TrustSetup.verifier(invocation)
        let store = try StoreAccess.open(invocation)
        if invocation.flag("replay-unmatched") { return try replayUnmatched(invocation, verifier: verifier, store: store) }

        var items = InputItems(try invocation.openInput(invocation.arguments.first))
        let engine = SubscriptionEventEngine()
        let context = EngineContext(actor: invocation.actor, command: "notify")
        let dryRun = invocation.flag("dry-run")
        let printer = ItemPrinter(invocation, columns: columns)

        /// Verifies one item and applies it in `session` (atomic) or its own transaction.
        func process(_ item: WebhookBody.Item, session: (any StoreSession)?) throws -> ItemResult {
            let jws: String
            switch item.result {
            case .failure(let failure): return .rejected(line: item.line, failure)
            case .success(let token): jws = token
            }
            let report = verifier.verify(jws, as: .notification)
            if let failure = report.failure {
                return .rejected(line: item.line, failure, hint: hint(for: report))
            }
            for warning in report.warnings { invocation.warn("line \(item.line): \(warning)") }
            guard let event = EventMapping.event(from: report, raw: jws, source: .apple) else {
                return .rejected(line: item.line, code: .dataError, "not a notification the engine can apply")
            }
            let outcome: Outcome
            if let session {
                outcome = try session.savepoint { try engine.apply(event, in: session, context: context) }
            } else {
                outcome = try engine.apply(event, to: store, context: context, dryRun: dryRun)
            }
            return .applied(line: item.line, event: event, outcome: outcome)
        }

        if invocation.flag("atomic") {
            var results: [ItemResult] = []
            do {
                try store.write(commit: !dryRun) { session in
                    while let item = try items.next() {
                        let result = try process(item, session: session)
                        results.append(result)
                        if result.code != .success { throw AtomicAbort() }
                    }
                }
            } catch is AtomicAbort {
                for result in results { printer.add(result) }
                _ = printer.finish(command: "notify", extraNote: "--atomic: nothing was applied")
                return .failure
            }
            guard !items.isEmpty else { throw noInput(invocation) }
            for result in results { printer.add(result) }
            return printer.finish(command: "notify", extraNote: dryRun ? "dry run: nothing was written" : nil)
        }

        while let item = try items.next() {
            printer.add(try process(item, session: nil))
        }
        guard !items.isEmpty else { throw noInput(invocation) }
        return printer.finish(command: "notify", extraNote: dryRun ? "dry run: nothing was written" : nil)
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
        for entry in entries {
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
