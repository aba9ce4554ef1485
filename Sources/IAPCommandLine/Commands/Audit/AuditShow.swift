import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl audit show ID`: one audit row — who, when, why, the field changes, the row before and after.
enum AuditShow {
    /// `ID`.
    static let id = Argument<AuditRowId>("id", help: "The audit row id (ID column of audit list).")

    static let command = CommandSpec(
        name: "show",
        abstract: "Show one audit row: who, when, why, the field changes, the row before and after.",
        examples: [CommandExample("iapctl audit show 118", "Audit row 118.")],
        arguments: [id],
        handler: run)

    /// One audit row: who, when, why, the field changes, and the row before and after.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let id = invocation[Self.id].value
        guard let entry = try DbOpen.read(invocation, { try $0.auditEntry(id: id) }) else {
            throw CLIError(.notFound, "no audit row \(id)", hint: "list them with: iapctl audit list")
        }
        var head = Record()
        head.append("id", entry.id)
        head.append("changed_at", entry.at)
        head.append("actor", entry.actor)
        head.append("command", entry.command)
        head.append("reason", entry.reason)
        head.append("ticket", entry.ticket)
        head.append("entity", entry.entity.rawValue)
        head.append("key", entry.key)
        head.append("ledger_id", entry.ledgerId)
        head.append("undo", undoHint(entry))
        let changes: [Record] = RowRendering.auditChanges(entry).map { change in
            var r = Record()
            r.append("field", change.column)
            r.append("before", change.before)
            r.append("after", change.after)
            return r
        }
        invocation.emit(
            detail: DetailView(sections: [
                DetailView.Section(key: "audit", title: "Audit row \(entry.id)", content: .fields(head)),
                DetailView.Section(
                    key: "changes", title: "Changes (\(changes.count))",
                    content: .table(
                        changes,
                        columns: [Column("field", title: "FIELD"), Column("before", title: "BEFORE"), Column("after", title: "AFTER")])),
                DetailView.Section(key: "before", title: "Before", content: .fields(rowRecord(entry.before))),
                DetailView.Section(key: "after", title: "After", content: .fields(rowRecord(entry.after))),
            ]))
        return .success
    }

    /// `iapctl audit undo N …` for rows that can be undone; nil for inserts (a grant given is
    /// undone: it is revoked) and for a forgotten user (never undone).
    static func undoHint(_ entry: AuditEntry) -> String? {
        guard entry.entity != .user, entry.before != nil || entry.entity == .grant else { return nil }
        return "iapctl audit undo \(entry.id) --reason '…'"
    }

    /// A stored row (``AuditRows/columns(_:)``) as a record (dates shown as dates).
    static func rowRecord(_ json: String?) -> Record {
        Record(AuditRows.columns(json).map { (key: $0.column, value: $0.value) })
    }
}
