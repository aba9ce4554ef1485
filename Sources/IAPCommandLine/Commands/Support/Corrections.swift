import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// Hand corrections from the command line: batch rows to requests, ``CorrectionService`` in one
/// write transaction (all or nothing), and the report.
enum Corrections {
    /// `--reason` (not blank: a usage error with the hint `e.g. --reason 'EXAMPLE'`) and `--ticket`
    /// ("" is none), as `orders update`, `contracts update`, `audit undo` and the `apple` writes take them.
    static func reasonAndTicket(
        _ invocation: Invocation, example: String
    ) throws(CLIError) -> (reason: String, ticket: String?) {
        let reason = try checkedReason(invocation[CommandTree.reasonOption], example: example)
        return (reason, invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// `--reason` of `orders update` and `contracts update` (``CommandTree/batchReasonOption``): nil
    /// when not given (a `--from` batch whose rows each carry one), else as ``reasonAndTicket(_:example:)``.
    static func optionalReasonAndTicket(
        _ invocation: Invocation, example: String
    ) throws(CLIError) -> (reason: String?, ticket: String?) {
        let reason = try invocation[CommandTree.batchReasonOption].map { (text) throws(CLIError) in
            try checkedReason(text, example: example)
        }
        return (reason, invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The engine's context of a writer whose `--reason` is optional (``CommandTree/engineReasonOption``)
    /// and that takes `--ticket`: the audit rows carry both as given (a blank `--reason` is a usage
    /// error; none given: each row's reason is its event's, as without the options).
    static func engineContext(_ invocation: Invocation, command: String) throws(CLIError) -> EngineContext {
        let reason = try invocation[CommandTree.engineReasonOption].map { (text) throws(CLIError) in
            try checkedReason(text, example: "nightly check")
        }
        return EngineContext(
            actor: invocation.actor, command: command, reason: reason,
            ticket: invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// `reason` unless it is blank (a usage error with an example).
    private static func checkedReason(_ reason: String, example: String) throws(CLIError) -> String {
        guard !reason.allSatisfy(\.isWhitespace) else {
            throw CLIError.usage("--reason must say why", hint: "e.g. --reason '\(example)'")
        }
        return reason
    }

    /// The error of a correction without `--reason` (outside a `--from` batch whose rows carry one).
    static func missingReason(example: String) -> CLIError {
        CLIError.usage("missing required option --reason <text>", hint: "e.g. --reason '\(example)'")
    }

    /// Applies `requests` in one transaction (rolled back when `dryRun`); any failure changes nothing.
    static func apply<Row: CorrectableRow>(
        _ requests: [CorrectionRequest<Row>], as _: Row.Type, store: any Store, invocation: Invocation,
        command: String, dryRun: Bool
    ) throws -> [CorrectionResult] {
        let context = CorrectionContext(actor: invocation.actor, command: command, now: Timestamp.now())
        return try store.write(commit: !dryRun) { session in
            try CorrectionService.apply(requests, context: context, in: session)
        }
    }

    /// `--clear-override FIELD…`: lifts the overrides and re-derives the row (one transaction,
    /// rolled back when `dryRun`); prints the row's changes as a correction does, and which overrides went.
    /// The re-derivation's audit rows carry `reason` (in their text) and `ticket`; their ids are printed.
    static func clearOverrides<Row: CorrectableRow>(
        _: Row.Type, key: String, fields: [String], reason: String, ticket: String?, command: String,
        invocation: Invocation, dryRun: Bool
    ) throws -> ExitCode {
        let context = CorrectionContext(actor: invocation.actor, command: command + " --clear-override", now: Timestamp.now())
        let store = try DbOpen.existing(invocation)
        let done = try store.write(commit: !dryRun) { session in
            try OverrideService.clear(
                Row.self, key: key, fields: fields, reason: reason, ticket: ticket, context: context, in: session)
        }
        let rowKey = done.lifted.first?.key ?? key
        var results = zip(done.rederived, done.auditIds).map {
            CorrectionResult(line: nil, entity: $0.entity, key: $0.key, changes: $0.fields, auditId: $1)
        }
        if results.isEmpty { results = [CorrectionResult(line: nil, entity: Row.entity, key: rowKey, changes: [], auditId: nil)] }
        let lifted = done.lifted.map { "#\($0.auditId) (\($0.field))" }.joined(separator: ", ")
        // The detail (which overrides go) before the summary line, as a correction prints its rows first.
        report(
            results, invocation: invocation, dryRun: dryRun,
            detail: (dryRun ? "dry run: would clear" : "cleared") + " override\(done.lifted.count == 1 ? "" : "s") \(lifted) of "
                + "\(Row.entity.rawValue) \(rowKey); the facts decide \(done.lifted.count == 1 ? "it" : "them") again")
        return .success
    }

    /// Prints the results: `order KEY: updated` and `  field: before → after` lines (table), or
    /// one record per requested row (json/ndjson/csv); a summary note on stderr.
    /// `detail`: a note printed before the summary line.
    static func report(_ results: [CorrectionResult], invocation: Invocation, dryRun: Bool, detail: String? = nil) {
        let changed = results.filter { !$0.changes.isEmpty }.count
        // The summary's verb: the rows' own when they agree (`added 1 grant`), else `changed`.
        let verbs = Set(results.filter { !$0.changes.isEmpty }.map { self.verb($0, dryRun: false) })
        let verb = verbs.count == 1 ? verbs.first ?? "updated" : "changed"
        switch invocation.output {
        case .table:
            for result in results {
                let head = "\(result.entity.rawValue) \(result.key)"
                if result.changes.isEmpty {
                    invocation.print("\(head): no change")
                } else {
                    // The audit row's id: what `audit undo` takes.
                    let audit = dryRun ? nil : result.auditId
                    invocation.print("\(head): \(self.verb(result, dryRun: dryRun))" + (audit.map { " (audit #\($0))" } ?? ""))
                    for change in RowRendering.displayed(result.changes) {
                        invocation.print("  " + RowRendering.changeText([change], separator: ""))
                    }
                }
            }
        case .json, .ndjson, .csv:
            let structured = invocation.output != .csv
            let records: [Record] = results.map { result in
                var r = Record()
                r.append("entity", result.entity.rawValue)
                r.append("key", result.key)
                r.append("line", result.line)
                r.append("result", result.changes.isEmpty ? "no change" : self.verb(result, dryRun: dryRun))
                r.append("dry_run", dryRun)
                r.append("audit_id", dryRun ? nil : result.auditId)
                let changes = RowRendering.displayed(result.changes)
                if structured {
                    r.append("changes", .array(changes.map(RowRendering.changeObject)))
                } else {
                    r.append("changes", RowRendering.changeText(changes, separator: "; "))
                }
                return r
            }
            invocation.emit(records)
        }
        if let detail { invocation.note(detail) }
        let rows = changedRows(results)
        if dryRun {
            invocation.note("dry run: \(rows) would change; nothing written")
        } else if changed > 0 {
            invocation.note("\(verb) \(rows) (audited as \(invocation.actor))")
        } else {
            invocation.note("no change")
        }
    }

    /// `updated`, or for a grant given (nothing before) `added` (`would …` in a dry run).
    static func verb(_ result: CorrectionResult, dryRun: Bool) -> String {
        let added = result.entity == .grant && result.changes.contains { $0.column == "user_id" && $0.before == nil }
        return (dryRun ? "would " : "") + (added ? (dryRun ? "add" : "added") : (dryRun ? "update" : "updated"))
    }

    /// The rows of `results` that changed, counted by what they are: `2 orders and 1 contract`,
    /// `0 orders` (a correction or undo can change both kinds: the summary names each).
    static func changedRows(_ results: [CorrectionResult]) -> String {
        let changed = results.filter { !$0.changes.isEmpty }
        func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        let kinds: [EntityKind] = [.order, .contract, .grant, .user]
        let parts = kinds.compactMap { kind -> String? in
            let count = changed.count { $0.entity == kind }
            return count == 0 ? nil : counted(count, kind.rawValue)
        }
        guard !parts.isEmpty else { return counted(0, results.first?.entity.rawValue ?? "order") }
        return parts.count == 1 ? parts[0] : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
    }

    /// The row as the audit trail stores it (sorted keys, as the engine writes it).
    static func json<T: Encodable>(_ value: T) -> String? { CorrectionService.auditJSON(value) }

    /// The error with `prefix` (e.g. `line 3: `) in front of its message.
    static func prefixed(_ error: CLIError, _ prefix: String) -> CLIError {
        var error = error
        if !prefix.isEmpty, !error.message.hasPrefix(prefix) { error.message = prefix + error.message }
        return error
    }
}

extension CorrectionRowError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .missingKey(let line, let entity, let keyFields):
            return CLIError(
                .dataError,
                BatchRow.prefix(line) + "no \(keyFields.joined(separator: " or ")) to say which \(entity.rawValue)",
                hint: "every row needs \(keyFields.map { "\"\($0)\"" }.joined(separator: " or "))")
        case .unknownField(let line, let field, let allowed):
            return CLIError(
                .dataError, BatchRow.prefix(line) + "unknown field '\(field)' (allowed: \(allowed.joined(separator: ", ")))",
                hint: Suggestion.closest(to: field, among: allowed).map { "did you mean '\($0)'?" })
        case .nothingToChange(let line, let editableFields):
            return CLIError(
                .dataError, BatchRow.prefix(line) + "nothing to change (fields: \(editableFields.joined(separator: ", ")))")
        case .field(let line, let error):
            return Corrections.prefixed(error.cliError, BatchRow.prefix(line))
        case .missingReason(let line):
            return CLIError.usage(
                BatchRow.prefix(line) + "no \"reason\" in this row, and no --reason for the batch",
                hint: "give --reason TEXT for every row, or a \"reason\" in each row")
        }
    }
}

extension CorrectionError: CLIErrorConvertible {
    public var cliError: CLIError {
        let prefix = { (line: Int?) in line.map { "line \($0): " } ?? "" }
        switch self {
        case .notFound(let line, let entity, let fields, let key):
            return CLIError(
                .notFound, prefix(line) + "no \(entity.rawValue) with \(fields) = \(key)",
                hint: "list them with: iapctl \(entity == .order ? "orders" : "contracts") list")
        case .invalidValue(let line, let error):
            let cause = error.cliError
            return CLIError(.dataError, prefix(line) + cause.message, hint: cause.hint)
        case .tradeNoTaken(let line, let tradeNo, let order):
            return CLIError(.conflict, prefix(line) + "trade_no \(tradeNo) already belongs to order \(order)")
        case .conflict(let line, let message):
            return CLIError(.conflict, prefix(line) + message)
        }
    }
}

extension OverrideError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .noOverride(let entity, let key, let field):
            let command = entity == .order ? "orders" : "contracts"
            return CLIError(
                .notFound, "\(entity.rawValue) \(key) has no override of \(field) in force",
                hint: "see its overrides with: iapctl \(command) show \(ShellWord.word(key))")
        }
    }
}

extension CorrectionFieldError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .notEditable(let field): return CLIError(.dataError, "field '\(field)' cannot be changed")
        case .invalid(let error): return error.cliError
        }
    }
}
