import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl audit undo ID…` (or `--ticket T` alone: the whole batch): puts back the values audited
/// changes replaced, as new audited corrections (``AuditUndoService``); the checks and the writes are
/// one transaction, all or nothing.
enum AuditUndo {
    /// `ID…`.
    static let ids = Argument<[AuditRowId]>(
        "id", help: "The audit rows to undo (several: all or none); leave out with --ticket to undo its whole batch.")

    /// `--ticket T`: recorded with the undo; without IDs it also says which rows to undo.
    static let ticket = CommandTree.ticketOption.with(
        help: "A support ticket or incident id, recorded with the undo. Without IDs: undo every change "
            + "recorded under this ticket (all or none).")

    static let command = CommandSpec(
        name: "undo",
        abstract: "Put back what an audited change replaced (itself audited).",
        discussion: """
            Plans the inverse of audit row ID (or of several: newest first, all or none; or, \
            with --ticket T and no ID, of every change recorded under T): each field it changed gets its earlier value \
            back, through the same audited correction as orders/contracts update. A change \
            the engine made for one notification (an order and its contract together) is \
            undone as a whole change set or not at all. Refused with exit 4 when a row \
            changed since (the undo would silently discard that later change), when a row \
            was created by that change, when it changed a field that cannot be set by hand, \
            or when it was already undone (the message names the undo's audit row). \
            When any one row cannot be undone, none is, and the message names it. Each row's \
            undo is its own audit row; `audit list` marks an undone row "undone by #N". \
            --dry-run shows the plan and writes nothing.

            Undoing a hand correction of a field Apple's facts decide removes the override \
            it made, and the row is derived from the facts again (those changes are listed \
            too); undoing an engine change of such a field is itself an override.
            """,
        examples: [
            CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --dry-run", "See the plan."),
            CommandExample("iapctl audit undo 118 --reason 'refunded the wrong order' --ticket T-118", "Undo it."),
            CommandExample("iapctl audit undo 118 119 120 --reason 'wrong batch'", "Undo three rows, all or none."),
            CommandExample("iapctl audit undo --ticket T-77 --reason 'import of the wrong file'", "Undo a whole batch."),
        ],
        options: [CommandTree.reasonOption, ticket, CommandTree.dryRun],
        arguments: [ids],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let requested = invocation[ids].map(\.value)
        let (reason, ticket) = try Corrections.reasonAndTicket(invocation, example: "status set to refunded by mistake")
        guard !requested.isEmpty || ticket != nil else {
            throw CLIError.usage(
                "missing argument <id>: say which audit rows to undo",
                hint: "give their ids (iapctl audit list), or --ticket T to undo every change of a ticket")
        }
        let dryRun = invocation.flag(CommandTree.dryRun)
        let actor = invocation.actor
        let now = Timestamp.now()
        let store = try DbOpen.existing(invocation)
        let results = try store.write(commit: !dryRun) { session in
            var chosen = requested
            if chosen.isEmpty, let ticket {
                chosen = try AuditUndoService.ids(ticket: ticket, in: session)
                guard !chosen.isEmpty else { throw AuditUndoCommandError.noRowsForTicket(ticket) }
            }
            return try AuditUndoService.undo(chosen, reason: reason, ticket: ticket, actor: actor, now: now, in: session)
        }
        Corrections.report(results, invocation: invocation, dryRun: dryRun)
        let newIds = results.compactMap(\.auditId)
        // The rows undone (the re-derivation after removing an override adds results without an audit id).
        let undone = results.filter { $0.auditId != nil || $0.changes.isEmpty }.count
        if !newIds.isEmpty, !dryRun {
            let what =
                requested.count == 1 && undone == 1
                ? "audit row \(requested[0])"
                : requested.isEmpty ? "\(undone) audit rows of ticket \(ticket ?? "")" : "\(undone) audit rows"
            invocation.note(
                "undid \(what); the undo is audit row\(newIds.count == 1 ? "" : "s") "
                    + newIds.map(String.init).joined(separator: ", "))
        }
        return .success
    }
}

/// `audit undo --ticket T` found nothing to undo.
enum AuditUndoCommandError: Error, CLIErrorConvertible {
    case noRowsForTicket(String)

    var cliError: CLIError {
        switch self {
        case .noRowsForTicket(let ticket):
            return CLIError(
                .notFound, "no audit rows recorded under ticket \(ticket) to undo",
                hint: "see them with: iapctl audit list --ticket \(ShellWord.word(ticket))")
        }
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
        case .creation(let id, .note, let key):
            return CLIError(
                .conflict, "audit row \(id) recorded a note about customer \(key): notes are only ever added",
                hint: "add a note that corrects it: iapctl customer note add \(ShellWord.word(key)) --text '…'")
        case .creation(let id, let entity, let key):
            return CLIError(
                .conflict,
                "audit row \(id) recorded the creation of \(entity.rawValue) \(key): there is no earlier state to go back to",
                hint: "correct the row by hand with: iapctl \(command(entity)) update \(ShellWord.word(key)) …")
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
        case .notUndoable(let id, let why):
            return CLIError(.conflict, "audit row \(id) cannot be undone: \(why)")
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
