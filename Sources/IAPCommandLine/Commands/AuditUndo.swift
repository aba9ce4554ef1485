import AppStoreJWS
import SubscriptionEngine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `iapctl audit undo ID`: puts back the values an audited change replaced, as a new audited correction.
///
/// The row must still be exactly as that change left it (else exit 4: someone or something changed it
/// since, and undoing would silently discard that). The check and the write are one transaction.
enum AuditUndo {
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let id = try AuditCommands.auditId(invocation)
        let reason = invocation.value("reason") ?? ""
        guard !reason.allSatisfy(\.isWhitespace) else {
            throw CLIError.usage("--reason must say why", hint: "e.g. --reason 'status set to refunded by mistake'")
        }
        let ticket = invocation.value("ticket").flatMap { $0.isEmpty ? nil : $0 }
        let dryRun = invocation.flag("dry-run")
        let context = Context(
            auditId: id, actor: invocation.actor, now: Timestamp.now(), reason: reason, ticket: ticket)
        let store = try DbOpen.existing(invocation)
        let outcomes = try store.write(commit: !dryRun) { session -> [(CorrectionResult, Int64?)] in
            guard let entry = try session.auditEntry(id: id) else {
                throw CLIError(.notFound, "no audit row \(id)", hint: "list them with: iapctl audit list")
            }
            let all = try session.auditEntries(matching: AuditFilter())
            // The engine changes an order and its contract together for one notification: that
            // change set is undone as a whole (newest row first) or not at all.
            var set = [entry]
            if let ledgerId = entry.ledgerId {
                set = all.filter { $0.ledgerId == ledgerId }.sorted { $0.id > $1.id }
            }
            for member in set {
                if let undo = all.first(where: { $0.command == "audit undo \(member.id)" }) {
                    throw CLIError(
                        .conflict, "audit row \(member.id) was already undone by #\(undo.id)",
                        hint: "see it with: iapctl audit show \(undo.id)")
                }
            }
            var outcomes: [(CorrectionResult, Int64?)] = []
            for member in set {
                var memberContext = context
                memberContext.auditId = member.id
                do {
                    switch member.entity {
                    case .order: outcomes.append(try undo(member, as: Order.self, in: session, memberContext))
                    case .contract: outcomes.append(try undo(member, as: Contract.self, in: session, memberContext))
                    }
                } catch var error as CLIError where set.count > 1 {
                    let rows = set.map { "#\($0.id) (\($0.entity.rawValue))" }.joined(separator: ", ")
                    error.message =
                        "audit row \(id) is part of one change set (ledger #\(entry.ledgerId ?? 0): audit rows \(rows)), "
                        + "undone together or not at all; nothing was undone: " + error.message
                    throw error
                }
            }
            return outcomes
        }
        Corrections.report(outcomes.map(\.0), invocation: invocation, dryRun: dryRun)
        let newIds = outcomes.compactMap(\.1)
        if !newIds.isEmpty, !dryRun {
            invocation.note(
                "undid audit row\(outcomes.count == 1 ? "" : "s") "
                    + (outcomes.count == 1 ? "\(id)" : "of ledger change set (\(outcomes.count) rows)")
                    + "; the undo is audit row\(newIds.count == 1 ? "" : "s") "
                    + newIds.map(String.init).joined(separator: ", "))
        }
        return .success
    }

    struct Context {
        var auditId: Int64
        var actor: String
        var now: Int64
        var reason: String
        var ticket: String?
        var command: String { "audit undo \(auditId)" }
    }

    /// Checks the row is as the audited change left it, then writes back the replaced values.
    static func undo<Row: Correctable & Decodable>(
        _ entry: AuditEntry, as _: Row.Type, in session: any StoreSession, _ context: Context
    ) throws -> (CorrectionResult, Int64?) {
        let what = "\(entry.entity.rawValue) \(entry.key)"
        guard let before: Row = decode(entry.before) else {
            throw CLIError(
                .conflict, "audit row \(entry.id) recorded the creation of \(what): there is no earlier state to go back to",
                hint: "correct the row by hand with: iapctl \(entry.entity == .order ? "orders" : "contracts") update")
        }
        guard let after: Row = decode(entry.after) else {
            throw CLIError(.software, "audit row \(entry.id) has no readable 'after' state")
        }
        guard var row = try Row.find(entry.key, field: Row.keyFields[0], in: session) else {
            throw CLIError(.conflict, "\(what) of audit row \(entry.id) no longer exists")
        }
        let current = row
        let drift = RowRendering.changes(after.columnValues, current.columnValues)
        if !drift.isEmpty {
            throw CLIError(
                .conflict,
                "\(what) changed since audit row \(entry.id) (\(RowRendering.changeText(drift, separator: "; "))); not undone",
                hint: "see its history with: iapctl \(entry.entity == .order ? "orders" : "contracts") show \(entry.key)")
        }
        var values: [(key: String, value: JSONValue)] = []
        for (old, new) in zip(before.columnValues, after.columnValues) where old.1 != new.1 {
            guard Row.editableFields.contains(old.0) else {
                throw CLIError(
                    .conflict,
                    "audit row \(entry.id) changed \(old.0), which cannot be set by hand; not undone",
                    hint: "only \(Row.editableFields.joined(separator: ", ")) can be corrected")
            }
            values.append((old.0, old.1.map(JSONValue.string) ?? .null))
        }
        let request = CorrectionRequest(
            line: nil, key: entry.key, keyField: Row.keyFields[0], values: values, reason: context.reason,
            ticket: context.ticket)
        guard !values.isEmpty else {
            return (CorrectionResult(request: request, entity: Row.entity, key: entry.key, changes: []), nil)
        }
        for (field, value) in values {
            try row.set(field, value)
        }
        let changes = RowRendering.changes(current.columnValues, row.columnValues)
        guard !changes.isEmpty else {
            return (CorrectionResult(request: request, entity: Row.entity, key: entry.key, changes: []), nil)
        }
        row.updatedAt = context.now
        do {
            try row.check(against: current, in: session)
            try row.save(in: session)
        } catch StoreError.conflict(let message) {
            throw CLIError(.conflict, message)
        }
        let auditId = try session.appendAudit(
            AuditEntry(
                at: context.now, actor: context.actor, command: context.command, reason: context.reason,
                ticket: context.ticket, entity: Row.entity, key: row.auditKey, before: Corrections.json(current),
                after: Corrections.json(row)))
        return (CorrectionResult(request: request, entity: Row.entity, key: row.auditKey, changes: changes), auditId)
    }

    /// A row from its audit JSON.
    static func decode<Row: Decodable>(_ json: String?) -> Row? {
        guard let json else { return nil }
        return try? JSONDecoder().decode(Row.self, from: Data(json.utf8))
    }
}
