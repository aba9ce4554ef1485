import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl audit list`: the audit trail of every change, manual or by the engine, filtered.
enum AuditList {
    /// `--since TIME`.
    static let since = Option<PointInTime?>(
        "since", valueName: "time", help: "Only rows at or after this time: \(CommandTree.timeForms).")

    /// `--order KEY`.
    static let order = Option<String?>(
        "order", valueName: "key", help: "Only changes to this order (its number or its transactionId).")

    /// `--contract ID`.
    static let contract = Option<String?>(
        "contract", valueName: "id", help: "Only changes to this contract.", completion: .lookup("contracts"))

    /// `--command NAME`.
    static let commandName = Option<String?>(
        "command", valueName: "name",
        help: "Only changes made by this command (notify, orders update, audit undo, …; a prefix).")

    static let ticket = CommandTree.ticketOption.with(help: "Only rows recorded with this ticket.")
    static let user = CommandTree.userOption(
        "Only changes to this user's orders and contracts (also those moved to or from them).")

    static let command = CommandSpec(
        name: "list",
        abstract: "List audit rows, newest first.",
        discussion: "On this command --actor filters by who made the change (it is not who runs iapctl).",
        examples: [
            CommandExample("iapctl audit list --ticket T-118", "Everything done under ticket T-118."),
            CommandExample(
                "iapctl audit list --since 2025-06-01T00:00:00Z -o ndjson", "Changes since June, as NDJSON."),
            CommandExample("iapctl audit list --user alice", "Every change to alice's orders and contracts."),
            CommandExample(
                "iapctl audit list --contract 2000000900000001 --command notify",
                "What notifications changed on one subscription."),
        ],
        options: [since, ticket, user, order, contract, commandName, CommandTree.limitOption],
        handler: run)

    /// Audit rows newest first, filtered by actor, time and ticket.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let limit = invocation[CommandTree.limitOption]?.count
        let filter = AuditFilter(
            // On this command --actor filters (command line only: IAPCTL_ACTOR is who *runs* iapctl).
            actor: invocation.source(of: CommandTree.actorOption) == .commandLine ? invocation[CommandTree.actorOption] : nil,
            since: invocation[since]?.at(Timestamp.now()), ticket: invocation[ticket])
        let narrowing = AuditQuery.Narrowing(
            user: invocation[user], order: invocation[order], contract: invocation[contract],
            command: invocation[commandName])
        let (entries, page, undone) = try DbOpen.read(invocation) { session in
            let (entries, page) = TerminalPage.cut(
                try AuditQuery.entries(filter, narrowing: narrowing, limit: limit, in: session), noun: "audit rows",
                invocation: invocation)
            return (entries, page, try AuditUndoService.undoneBy(of: entries, in: session))
        }
        let structured = invocation.output == .json || invocation.output == .ndjson
        // The UNDONE BY column (before CHANGES) only when a row shown was undone (JSON and CSV always carry `undone_by`).
        let tableColumns = undone.isEmpty ? columns : columns.dropLast() + [undoneColumn] + columns.suffix(1)
        invocation.emit(
            entries.map { record($0, undoneBy: undone[$0.id], structured: structured, table: invocation.output == .table) },
            columns: invocation.output == .table ? tableColumns : nil)
        if entries.isEmpty, invocation.output == .table { invocation.note("no audit rows") }
        if let page { invocation.note(page) }
        return .success
    }

    /// The table columns of `audit list`.
    static let columns: [Column] = [
        Column("id", title: "ID"), Column("changed_at", title: "WHEN"), Column("actor", title: "ACTOR"),
        Column("command", title: "COMMAND", keepWhole: true), Column("reason", title: "REASON", maxWidth: 32),
        Column("ticket", title: "TICKET"), Column("entity", title: "ENTITY"), Column("key", title: "ROW"),
        Column("changes", title: "CHANGES", maxWidth: 80, important: true, wraps: true),
    ]

    /// `UNDONE BY #N` of a row an `audit undo` put back.
    static let undoneColumn = Column("undone_by", title: "UNDONE BY", important: true)

    /// An audit row with its id first; `undone_by`: the audit row that undid it, if one did (a
    /// number; `#N` in a table).
    static func record(_ entry: AuditEntry, undoneBy: Int64?, structured: Bool, table: Bool) -> Record {
        var r = RowRendering.record(entry, structured: structured)
        if table {
            r.append("undone_by", undoneBy.map { "#\($0)" })
        } else {
            r.append("undone_by", undoneBy)
        }
        return r
    }
}
