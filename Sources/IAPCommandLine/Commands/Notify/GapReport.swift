import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl notify --gap-report FILE [--apply]`: which notifications Apple sent (per saved Get
/// Notification History responses) that the ledger never applied, with Apple's send attempts;
/// `--apply` replays exactly those through the engine.
///
/// FILE holds one or more responses `{"notificationHistory": [{"signedPayload", "sendAttempts"}…]}`:
/// one JSON document, a JSON array of them, or one per line. Exit 0 when nothing is missing (or
/// everything missing was applied), 1 when gaps remain.
enum GapReport {
    /// One notification of the history: its signed payload and Apple's send attempts.
    typealias Item = NotificationHistory.Entry

    /// Attempts as Apple writes them (`sendAttempts`).
    static func sendAttempts(_ attempts: [NotificationGaps.SendAttempt]) -> JSONValue {
        .array(
            attempts.map {
                .object([
                    ("attemptDate", $0.date.map(JSONValue.int) ?? .null),
                    ("sendAttemptResult", $0.result.map(JSONValue.string) ?? .null),
                ])
            })
    }

    /// `notify --gap-report PATH`; `input` is the FILE argument, which it refuses.
    static func run(_ invocation: Invocation, path: String, input: String?) throws -> ExitCode {
        if input != nil {
            throw CLIError.usage("--gap-report reads its own FILE; give no other input")
        }
        let items = try read(try invocation.openInput(path).readAllText(), name: path)
        return try report(
            items, source: path, verifier: try TrustSetup.verifier(TrustSetup.settings(invocation, for: .jws)),
            apply: invocation.flag(CommandTree.applyOption),
            command: "notify --gap-report --apply", invocation)
    }

    /// Compares `items` (Apple's notification history) with the ledger (``NotificationGaps``); with
    /// `apply`, replays the missing ones through the engine. `source` names where the items came from (a file, Apple's API).
    static func report(
        _ items: [Item], source path: String, verifier: AppStoreVerifier, apply: Bool, command: String,
        _ invocation: Invocation
    ) throws -> ExitCode {
        let store = try DbOpen.existing(invocation)
        let dryRun = invocation.flag(CommandTree.dryRun)
        let context = EngineContext(actor: invocation.actor, command: command)
        let gaps = try NotificationHistory.gaps(
            in: items,
            verifier: verifier, store: store, engine: SubscriptionEventEngine(), context: context, apply: apply, dryRun: dryRun
        ) { invocation.stderr.writeLine("error: \($0.message)") }
        let records = gaps.rows.map { row in
            var r = Record()
            switch row {
            case .rejected(let uuid, let message):
                r.append("notification_uuid", uuid)
                r.append("verdict", Verdict.rejected.rawValue)
                r.append("error", message)
            case .missing(let event, let uuid, let ledger, let attempts, let outcome):
                r.append("notification_uuid", uuid)
                r.append("notification_type", event.notificationType?.rawValue)
                r.append("subtype", event.subtype?.rawValue)
                r.append("signed_date", event.signedDate)
                r.append("transaction_id", event.transaction?.transactionId)
                r.append(
                    "originalTransactionId", event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId)
                r.append("ledger", ledger.rawValue)
                r.append("attempts", attempts.count)
                r.append("last_attempt_result", attempts.last?.result)
                r.append("last_attempt_date", attempts.last?.date)
                r.append("send_attempts", sendAttempts(attempts))
                r.append("verdict", outcome?.verdict.rawValue ?? "missing")
                if let outcome { r.append("detail", outcome.detail) }
            }
            return r
        }
        let columns: [Column] = [
            Column("notification_uuid", title: "NOTIFICATION"), Column("notification_type", title: "TYPE"),
            Column("subtype", title: "SUBTYPE"), Column("signed_date", title: "SIGNED"),
            Column("transaction_id", title: "TRANSACTION"), Column("ledger", title: "LEDGER"),
            Column("attempts", title: "ATTEMPTS"), Column("last_attempt_result", title: "LAST_RESULT"),
            Column("verdict", title: "VERDICT"),
        ]
        let structured = invocation.output == .json || invocation.output == .ndjson
        if !records.isEmpty || invocation.output != .table {
            invocation.emit(
                structured
                    ? records
                    : records.map {
                        var r = $0; r["send_attempts"] = nil; return r
                    },
                columns: invocation.output == .table ? columns : nil)
        }
        let verb = apply ? (dryRun ? "would apply" : "applied") : "missing"
        invocation.note(
            "gap report: \(items.count) notifications in \(path); \(apply ? gaps.applied : gaps.remaining) \(verb)"
                + (apply && gaps.remaining > 0 ? ", \(gaps.remaining) still not applied" : "")
                + (gaps.rejected > 0 ? ", \(gaps.rejected) rejected" : "")
                + (!apply && gaps.remaining > 0 ? "; replay them with --apply" : ""))
        return gaps.isClosed ? .success : .failure
    }

    /// The items of every response in `text` (one document, an array of them, or one per line).
    static func read(_ text: String, name: String) throws(CLIError) -> [Item] {
        do { return try NotificationHistory.entries(inSaved: text) } catch {
            switch error {
            case .lineNotJSON(let line, let reason):
                throw CLIError(
                    .dataError, "\(name): line \(line) is not JSON (\(reason))",
                    hint: "save each Get Notification History response as JSON, one per line")
            case .response(let refusal): throw refusal.cliError(name: name)
            case .noNotifications: throw CLIError(.noInput, "\(name): no notifications in the history")
            }
        }
    }

    /// The notifications of one response; `name` says where it came from in an error.
    static func entries(in response: JSONValue, name: String) throws(CLIError) -> [Item] {
        do { return try NotificationHistory.entries(in: response) } catch { throw error.cliError(name: name) }
    }
}

extension NotificationHistory.ResponseRefusal {
    /// The refusal of a response from `name` (a file, Apple's API).
    func cliError(name: String) -> CLIError {
        switch self {
        case .noHistoryArray:
            return CLIError(.dataError, "\(name): not a Get Notification History response (no notificationHistory array)")
        case .noSignedPayload: return CLIError(.dataError, "\(name): a notificationHistory item has no signedPayload")
        }
    }
}
