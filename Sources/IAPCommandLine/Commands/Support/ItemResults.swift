import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// How an item's ``ItemReport`` is printed: what the contract's `-o ndjson` promises (line,
/// verdict, ids, changes, error) and what the table shows.
extension ItemReport {
    /// The machine form (JSON, NDJSON): snake_case keys, `changes` as objects.
    var record: Record { record(structuredChanges: true) }

    /// `structuredChanges` false (CSV): `changes` as text, in the form audit rows use
    /// (`order N updated: status: paid → refunded; …`). `auto_renew` is `true`/`false` everywhere.
    func record(structuredChanges: Bool) -> Record {
        var r = Record()
        r.append("line", line)
        r.append("verdict", verdict.rawValue)
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
        guard dryRun, verdict != .rejected else { return verdict.rawValue }
        return verdict == .applied ? "would apply" : "would be " + verdict.rawValue
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

extension ItemReport.Advice {
    /// The advice in words (they name commands and options); `roots`: the JWS verifier's (named
    /// for an untrusted chain).
    func hint(roots: TrustSettings.Roots) -> String? {
        switch self {
        case .refusedNotification(let report): NotifyCommand.hint(for: report, roots: roots)
        case .receiptGivenToNotify: "this is a StoreKit 1 app receipt: use `iapctl verify` or `iapctl restore`"
        case .notificationGivenToRestore: "this is a notification: restore takes the device's signed transactions"
        case .untrustedChain: TrustSetup.untrustedHint(roots)
        }
    }
}

extension ItemReport: BatchResult {
    /// The word the item is counted under: its verdict, or in a dry run what would be done
    /// (`would apply`: a summary never says `applied` when nothing was written).
    public var status: String {
        guard dryRun else { return verdict.rawValue }
        switch verdict {
        case .applied: return "would apply"
        case .transferred: return "would transfer"
        case .restored: return "would restore"
        default: return verdict.rawValue
        }
    }
    public var code: ExitCode { ExitCode(outcome) }

    public func record(for format: OutputFormat) -> Record {
        switch format {
        case .table: return tableRecord
        case .csv: return record(structuredChanges: false)
        case .json, .ndjson: return record
        }
    }

    /// A refused item's error, said on stderr under machine formats (`error: line N: …`).
    public var diagnostic: String? {
        verdict == .rejected ? "line \(line): " + (error ?? "rejected") : nil
    }

    /// The summary line of a batch: `notify: 3 items: 2 applied, 1 rejected; <note>`, verdicts in
    /// the order below, any other after them: the parts add up to the items.
    static func summary(command: String, count: Int, counts: [String: Int], extraNote: String?) -> String {
        let keys = summaryOrder.filter { counts[$0] != nil } + counts.keys.filter { !summaryOrder.contains($0) }.sorted()
        let parts = keys.compactMap { key in counts[key].map { "\($0) \(key)" } }
        return "\(command): \(count) item\(count == 1 ? "" : "s"): " + parts.joined(separator: ", ")
            + (extraNote.map { "; " + $0 } ?? "")
    }

    static let summaryOrder = [
        "applied", "would apply", "restorable", "restored", "would restore", "transferred", "would transfer", "duplicate", "stale",
        "ignored", "unmatched", "owned-by-other", "conflict",
        "unknown", "rejected", "not-applied",
    ]
}

extension BatchPrinter {
    /// Writes what was kept and the summary line of `command`'s items; returns the exit status
    /// (a single item's own code; for a batch 0 or 1; `status` when given).
    func finish(command: String, extraNote: String? = nil, status: ExitCode? = nil) -> ExitCode {
        finish(summary: ItemReport.summary(command: command, count: count, counts: counts, extraNote: extraNote), status: status)
    }
}

extension BatchPrinter {
    /// Ends a batch `error` stopped. After Ctrl-C (the open transaction was rolled back) what was
    /// reported is written and how much of it was committed said: exit 130. Any other error (a
    /// stalled or lost database, a full disk, Apple unavailable) is thrown after what was reported
    /// is written with `stopped after N items (<final>); <rerun>`.
    func stopped(by error: any Error, command: String, committed: Int, final: String, rerun: String) throws -> ExitCode {
        if Interrupt.isRequested {
            if count > 0 { _ = finish(command: command) }
            return Interrupt.reportStop(
                items: count, committed: committed, unchanged: onlyCounted("duplicate") ? "a duplicate" : nil,
                on: invocation.stderr)
        }
        if count > 0 {
            _ = finish(command: command, extraNote: "stopped after \(count) item\(count == 1 ? "" : "s") (\(final)); \(rerun)")
        }
        throw error
    }
}
