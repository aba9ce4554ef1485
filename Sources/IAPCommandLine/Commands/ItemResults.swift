import AppStoreJWS
import IAPOperations
import SubscriptionEngine

/// The result of one input item of `notify`, `verify --apply` or `restore`: what the contract's
/// `-o ndjson` promises (line, verdict, ids, changes, error) and what the table shows.
struct ItemResult {
    var line: Int
    var verdict: String
    var code: ExitCode
    var notificationUUID: String?
    var notificationType: String?
    var subtype: String?
    var transactionId: String?
    var originalTransactionId: String?
    var changes: [Change] = []
    var detail: String?
    var error: String?
    var extra: [(key: String, value: JSONValue)] = []
    /// Simulated by a dry run (nothing was written): `dry_run: true`, and "would apply" in tables.
    var dryRun = false

    /// A refused input item.
    static func rejected(line: Int, _ failure: VerificationFailure, hint: String? = nil) -> ItemResult {
        ItemResult(
            line: line, verdict: Verdict.rejected.rawValue, code: ExitCode(ItemOutcome(failure)),
            error: failure.plainMessage + (hint.map { "; " + $0 } ?? ""))
    }

    static func rejected(line: Int, code: ExitCode, _ message: String) -> ItemResult {
        ItemResult(line: line, verdict: Verdict.rejected.rawValue, code: code, error: message)
    }

    /// The result line of a refused poison item: its ids that fit, and why.
    static func poison(line: Int, _ event: SubscriptionEvent, _ why: String) -> ItemResult {
        var result = ItemResult.rejected(line: line, code: .dataError, why)
        result.notificationUUID = StoredFields.fitting(event.notificationUUID)
        result.notificationType = StoredFields.fitting(event.notificationType?.rawValue)
        result.subtype = StoredFields.fitting(event.subtype?.rawValue)
        result.transactionId = StoredFields.fitting(event.transaction?.transactionId)
        result.originalTransactionId = StoredFields.fitting(
            event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId)
        return result
    }

    /// The result of applying an event through the engine.
    static func applied(line: Int, event: SubscriptionEvent, outcome: Outcome) -> ItemResult {
        ItemResult(
            line: line, verdict: outcome.verdict.rawValue, code: ExitCode(ItemOutcome(outcome.verdict)),
            notificationUUID: event.notificationUUID, notificationType: event.notificationType?.rawValue, subtype: event.subtype?.rawValue,
            transactionId: event.transaction?.transactionId,
            originalTransactionId: event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId,
            changes: outcome.changes, detail: outcome.detail)
    }

    /// The machine form (JSON, NDJSON): snake_case keys, `changes` as objects.
    var record: Record { record(structuredChanges: true) }

    /// `structuredChanges` false (CSV): `changes` as text, in the form audit rows use
    /// (`order N updated: status: paid → refunded; …`). `auto_renew` is `true`/`false` everywhere.
    func record(structuredChanges: Bool) -> Record {
        var r = Record()
        r.append("line", line)
        r.append("verdict", verdict)
        r.append("notification_uuid", notificationUUID)
        r.append("notification_type", notificationType)
        r.append("subtype", subtype)
        r.append("transaction_id", transactionId)
        r.append("original_transaction_id", originalTransactionId)
        for (key, value) in extra { r.append(key, value) }
        if structuredChanges {
            r.append(
                "changes",
                .array(
                    changes.map { change in
                        .object([
                            ("entity", .string(change.entity.rawValue)), ("key", .string(change.key)),
                            ("action", .string(change.action.rawValue)),
                            (
                                "fields",
                                .array(
                                    change.fields.map {
                                        .object([
                                            ("column", .string($0.column)),
                                            ("before", Self.shown($0.column, $0.before).map(JSONValue.string) ?? .null),
                                            ("after", Self.shown($0.column, $0.after).map(JSONValue.string) ?? .null),
                                        ])
                                    })
                            ),
                        ])
                    }))
        } else {
            r.append(
                "changes",
                changes.map { change in
                    "\(change.entity.rawValue) \(change.key) \(change.action.rawValue): "
                        + change.fields.map {
                            "\($0.column): \(Self.shown($0.column, $0.before) ?? "∅") → \(Self.shown($0.column, $0.after) ?? "∅")"
                        }.joined(separator: ", ")
                }.joined(separator: "; "))
        }
        r.append("detail", detail)
        r.append("error", error)
        if dryRun { r.append("dry_run", true) }
        return r
    }

    /// The verdict as a table shows it: what a dry run would do ("would apply", "would be duplicate").
    var tableVerdict: String {
        guard dryRun, verdict != Verdict.rejected.rawValue else { return verdict }
        return verdict == Verdict.applied.rawValue ? "would apply" : "would be " + verdict
    }

    /// A stored column value as people and scripts see it: `auto_renew` as `true`/`false`.
    static func shown(_ column: String, _ value: String?) -> String? {
        guard column == "auto_renew", let value else { return value }
        return value == "1" ? "true" : value == "0" ? "false" : value
    }

    /// The short table row: type, ids and what happened.
    var tableRecord: Record {
        var r = Record()
        r.append("line", line)
        r.append("verdict", tableVerdict)
        let type = notificationType.map { $0 + (subtype.map { "/" + $0 } ?? "") } ?? (transactionId == nil ? nil : "transaction")
        r.append("type", type)
        r.append("transaction", transactionId)
        for (key, value) in extra { r.append(key, value) }
        // An error is shown whole, also on a narrow terminal (the renderer never cuts "error: …").
        r.append("detail", error.map { "error: " + $0 } ?? detail)
        return r
    }
}

extension ItemResult: BatchResult {
    var status: String { verdict }

    func record(for format: OutputFormat) -> Record {
        switch format {
        case .table: return tableRecord
        case .csv: return record(structuredChanges: false)
        case .json, .ndjson: return record
        }
    }

    /// A refused item's error, said on stderr under machine formats (`error: line N: …`).
    var diagnostic: String? {
        verdict == Verdict.rejected.rawValue ? "line \(line): " + (error ?? "rejected") : nil
    }

    /// The summary line of a batch: `notify: 3 items: 2 applied, 1 rejected; <note>`, verdicts in
    /// the order below (others, like `not-applied`, are counted but not listed).
    static func summary(command: String, count: Int, counts: [String: Int], extraNote: String?) -> String {
        let parts = summaryOrder.compactMap { key in counts[key].map { "\($0) \(key)" } }
        return "\(command): \(count) item\(count == 1 ? "" : "s"): " + parts.joined(separator: ", ")
            + (extraNote.map { "; " + $0 } ?? "")
    }

    static let summaryOrder = [
        "applied", "restorable", "transferred", "duplicate", "stale", "ignored", "unmatched", "owned-by-other", "unknown", "rejected",
    ]
}

extension BatchPrinter {
    /// Writes what was kept and the summary line of `command`'s items; returns the exit status
    /// (a single item's own code; for a batch 0 or 1).
    func finish(command: String, extraNote: String? = nil) -> ExitCode {
        finish(summary: ItemResult.summary(command: command, count: count, counts: counts, extraNote: extraNote))
    }
}
