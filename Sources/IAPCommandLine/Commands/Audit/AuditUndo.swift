import IAPFoundation
import SubscriptionEngine

/// `iapctl audit undo ID`: puts back the values an audited change replaced, as a new audited
/// correction (``AuditUndoService``); the check and the write are one transaction.
enum AuditUndo {
    /// `ID`.
    static let id = Argument<AuditRowId>("id", help: "The audit row to undo.")

    static let command = CommandSpec(
        name: "undo",
        abstract: "Put back what an audited change replaced (itself audited).",
        discussion: """
            Plans the inverse of audit row ID: each field it changed gets its earlier value \
            back, through the same audited correction as orders/contracts update. A change \
            the engine made for one notification (an order and its contract together) is \
            undone as a whole change set or not at all. Refused with exit 4 when a row \
            changed since (the undo would silently discard that later change), when a row \
            was created by that change, when it changed a field that cannot be set by hand, \
            or when it was already undone (the message names the undo's audit row). \
            --dry-run shows the plan and writes nothing.

            Undoing a hand correction of a field Apple's facts decide removes the override \
            it made, and the row is derived from the facts again (those changes are listed \
            too); undoing an engine change of such a field is itself an override.
            """,
        examples: [
            CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --dry-run", "See the plan."),
            CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --ticket T-118", "Undo it."),
        ],
        options: [CommandTree.reasonOption, CommandTree.ticketOption, CommandTree.dryRun],
        arguments: [id],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let id = invocation[Self.id].value
        let (reason, ticket) = try Corrections.reasonAndTicket(invocation, example: "status set to refunded by mistake")
        let dryRun = invocation.flag(CommandTree.dryRun)
        let actor = invocation.actor
        let now = Timestamp.now()
        let store = try DbOpen.existing(invocation)
        let results = try store.write(commit: !dryRun) { session in
            try AuditUndoService.undo(id, reason: reason, ticket: ticket, actor: actor, now: now, in: session)
        }
        Corrections.report(results, invocation: invocation, dryRun: dryRun)
        let newIds = results.compactMap(\.auditId)
        // The rows undone (the re-derivation after removing an override adds results without an audit id).
        let undone = results.filter { $0.auditId != nil || $0.changes.isEmpty }.count
        if !newIds.isEmpty, !dryRun {
            invocation.note(
                "undid audit row\(undone == 1 ? "" : "s") "
                    + (undone == 1 ? "\(id)" : "of ledger change set (\(undone) rows)")
                    + "; the undo is audit row\(newIds.count == 1 ? "" : "s") "
                    + newIds.map(String.init).joined(separator: ", "))
        }
        return .success
    }
}

extension AuditUndoError: CLIErrorConvertible {
    public var cliError: CLIError {
        let command = { (entity: EntityKind) in entity == .order ? "orders" : "contracts" }
        switch self {
        case .notFound(let id):
            return CLIError(.notFound, "no audit row \(id)", hint: "list them with: iapctl audit list")
        case .alreadyUndone(let id, let undo):
            return CLIError(
                .conflict, "audit row \(id) was already undone by #\(undo)", hint: "see it with: iapctl audit show \(undo)")
        case .creation(let id, let entity, let key):
            return CLIError(
                .conflict,
                "audit row \(id) recorded the creation of \(entity.rawValue) \(key): there is no earlier state to go back to",
                hint: "correct the row by hand with: iapctl \(command(entity)) update")
        case .unreadable(let id):
            return CLIError(.software, "audit row \(id) has no readable 'after' state")
        case .rowGone(let id, let entity, let key):
            return CLIError(.conflict, "\(entity.rawValue) \(key) of audit row \(id) no longer exists")
        case .changedSince(let id, let entity, let key, let drift):
            return CLIError(
                .conflict,
                "\(entity.rawValue) \(key) changed since audit row \(id) "
                    + "(\(RowRendering.changeText(RowRendering.displayed(drift), separator: "; "))); not undone",
                hint: "see its history with: iapctl \(command(entity)) show \(ShellWord.word(key))")
        case .notEditable(let id, let entity, let column):
            let editable = entity == .order ? Order.editableFields : Contract.editableFields
            return CLIError(
                .conflict, "audit row \(id) changed \(column), which cannot be set by hand; not undone",
                hint: "only \(editable.joined(separator: ", ")) can be corrected")
        case .refused(_, let error):
            return error.cliError
        case .changeSet(let id, let ledgerId, let members, let because):
            var error = because.cliError
            let rows = members.map { "#\($0.id) (\($0.entity.rawValue))" }.joined(separator: ", ")
            error.message =
                "audit row \(id) is part of one change set (ledger #\(ledgerId): audit rows \(rows)), "
                + "undone together or not at all; nothing was undone: " + error.message
            return error
        }
    }
}
