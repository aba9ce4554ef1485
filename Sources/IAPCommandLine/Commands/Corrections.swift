import AppStoreJWS
import SubscriptionEngine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A row kind that `orders update` / `contracts update` can correct by hand.
protocol Correctable: Encodable {
    /// `order` or `contract` (audit entity).
    static var entity: EntityKind { get }
    /// The batch fields that identify a row, in lookup order (`no`, `trade_no`).
    static var keyFields: [String] { get }
    /// The batch fields that may be changed.
    static var editableFields: [String] { get }
    /// Finds a row by one of its key fields.
    static func find(_ key: String, field: String, in session: any StoreSession) throws -> Self?
    /// Sets one editable field from a batch cell or option value (`.dataError` for a bad value).
    mutating func set(_ field: String, _ value: JSONValue) throws(CLIError)
    /// Checks uniqueness and other cross-row rules before saving (`before` is the stored row).
    func check(against before: Self, in session: any StoreSession) throws
    /// Writes the row.
    func save(in session: any StoreSession) throws
    /// The audit key (`no`, `contract_id`).
    var auditKey: String { get }
    /// The compared columns.
    var columnValues: [(String, String?)] { get }
    var updatedAt: Int64 { get set }
}

/// One requested correction: which row, what to set, why.
struct CorrectionRequest {
    /// The input line of a batch row (nil for the command line).
    var line: Int?
    var key: String
    var keyField: String
    var values: [(key: String, value: JSONValue)]
    var reason: String
    var ticket: String?

    var prefix: String { line.map { "line \($0): " } ?? "" }
}

/// What happened to one requested correction.
struct CorrectionResult {
    var request: CorrectionRequest
    var entity: EntityKind
    var key: String
    var changes: [FieldChange]
}

/// Applies hand corrections in one write transaction (all or nothing), auditing each change.
enum Corrections {
    /// Turns batch rows into requests: the key field, editable fields, per-row `reason`/`ticket`.
    static func requests<Row: Correctable>(
        _ rows: [InputRow], for _: Row.Type, reason: String, ticket: String?
    ) throws(CLIError) -> [CorrectionRequest] {
        var requests: [CorrectionRequest] = []
        for row in rows {
            guard let keyField = Row.keyFields.first(where: { row.value($0) != nil }),
                let keyValue = row.value(keyField)
            else {
                throw CLIError(
                    .dataError,
                    row.prefix + "no \(Row.keyFields.joined(separator: " or ")) to say which \(Row.entity.rawValue)",
                    hint: "every row needs \(Row.keyFields.map { "\"\($0)\"" }.joined(separator: " or "))")
            }
            let key: String
            do { key = try FieldValue.text(keyValue, field: keyField) } catch { throw prefixed(error, row.prefix) }
            var values: [(key: String, value: JSONValue)] = []
            var rowReason = reason
            var rowTicket = ticket
            for (name, value) in row.fields where name != keyField {
                switch name {
                case "reason":
                    do { rowReason = try FieldValue.text(value, field: "reason") } catch {
                        throw prefixed(error, row.prefix)
                    }
                case "ticket":
                    do { rowTicket = try FieldValue.optionalText(value, field: "ticket") } catch {
                        throw prefixed(error, row.prefix)
                    }
                default:
                    guard Row.editableFields.contains(name) else {
                        let allowed = Row.keyFields + Row.editableFields + ["reason", "ticket"]
                        throw CLIError(
                            .dataError,
                            row.prefix + "unknown field '\(name)' (allowed: \(allowed.joined(separator: ", ")))")
                    }
                    values.append((name, value))
                }
            }
            guard !values.isEmpty else {
                throw CLIError(
                    .dataError,
                    row.prefix + "nothing to change (fields: \(Row.editableFields.joined(separator: ", ")))")
            }
            requests.append(
                CorrectionRequest(
                    line: row.line, key: key, keyField: keyField, values: values, reason: rowReason, ticket: rowTicket))
        }
        return requests
    }

    /// Applies `requests` in one transaction (rolled back when `dryRun`); any failure changes nothing.
    static func apply<Row: Correctable>(
        _ requests: [CorrectionRequest], as _: Row.Type, store: any Store, invocation: Invocation,
        command: String, dryRun: Bool
    ) throws -> [CorrectionResult] {
        let actor = invocation.actor
        let now = Timestamp.now()
        return try store.write(commit: !dryRun) { session in
            var results: [CorrectionResult] = []
            for request in requests {
                guard var row = try Row.find(request.key, field: request.keyField, in: session) else {
                    let fields = request.line == nil ? Row.keyFields.joined(separator: " or ") : request.keyField
                    throw CLIError(
                        .notFound, request.prefix + "no \(Row.entity.rawValue) with \(fields) = \(request.key)",
                        hint: "list them with: iapctl \(Row.entity == .order ? "orders" : "contracts") list")
                }
                let before = row
                for (field, value) in request.values {
                    do throws(CLIError) { try row.set(field, value) } catch { throw prefixed(error, request.prefix) }
                }
                let changes = RowRendering.changes(before.columnValues, row.columnValues)
                if !changes.isEmpty {
                    row.updatedAt = now
                    do {
                        try row.check(against: before, in: session)
                        try row.save(in: session)
                    } catch let error as CLIError {
                        throw prefixed(error, request.prefix)
                    } catch StoreError.conflict(let message) {
                        throw CLIError(.conflict, request.prefix + message)
                    }
                    _ = try session.appendAudit(
                        AuditEntry(
                            at: now, actor: actor, command: command, reason: request.reason, ticket: request.ticket,
                            entity: Row.entity, key: row.auditKey, before: json(before), after: json(row)))
                }
                results.append(
                    CorrectionResult(request: request, entity: Row.entity, key: row.auditKey, changes: changes))
            }
            return results
        }
    }

    /// Prints the results: `order KEY: updated` and `  field: before → after` lines (table), or
    /// one record per requested row (json/ndjson/csv); a summary note on stderr.
    static func report(_ results: [CorrectionResult], invocation: Invocation, dryRun: Bool) {
        let changed = results.filter { !$0.changes.isEmpty }.count
        let verb = dryRun ? "would update" : "updated"
        switch invocation.output {
        case .table:
            for result in results {
                let head = "\(result.entity.rawValue) \(result.key)"
                if result.changes.isEmpty {
                    invocation.print("\(head): no change")
                } else {
                    invocation.print("\(head): \(verb)")
                    for change in result.changes {
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
                r.append("line", result.request.line)
                r.append("result", result.changes.isEmpty ? "no change" : verb)
                r.append("dry_run", dryRun)
                if structured {
                    r.append("changes", .array(result.changes.map(RowRendering.changeObject)))
                } else {
                    r.append("changes", RowRendering.changeText(result.changes, separator: "; "))
                }
                return r
            }
            invocation.emit(records)
        }
        let noun = results.first.map { $0.entity == .order ? "order" : "contract" } ?? "row"
        let plural = changed == 1 ? noun : noun + "s"
        if dryRun {
            invocation.note("dry run: \(changed) \(plural) would change; nothing written")
        } else if changed > 0 {
            invocation.note("\(verb) \(changed) \(plural) (audited as \(invocation.actor))")
        } else {
            invocation.note("no change")
        }
    }

    /// The row as the audit trail stores it (sorted keys, as the engine writes it).
    static func json<T: Encodable>(_ value: T) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The error with `prefix` (e.g. `line 3: `) in front of its message.
    static func prefixed(_ error: CLIError, _ prefix: String) -> CLIError {
        var error = error
        if !prefix.isEmpty, !error.message.hasPrefix(prefix) { error.message = prefix + error.message }
        return error
    }

    /// Option values as correction fields: `--status` → `status` etc.; "" clears a nullable field.
    static func optionValues(_ invocation: Invocation, _ mapping: [(option: String, field: String)])
        -> [(key: String, value: JSONValue)]
    {
        mapping.compactMap { option, field in
            guard let value = invocation.parsed.value(option) else { return nil }
            return (field, .string(value))
        }
    }
}
