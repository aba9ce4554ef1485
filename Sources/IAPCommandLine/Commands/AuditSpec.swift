// The specification of `iapctl audit list|show|raw|undo`: the ledger and the audit trail.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let audit = CommandSpec(
        name: "audit",
        abstract: "Read the audit trail and undo a mistaken change.",
        discussion: """
            Every change to an order or a contract is audited: manual corrections (orders update, \
            contracts update, restore transfers, audit undo) and the engine's changes (notify, \
            verify --apply) alike, with the actor, the reason, the ticket and the row before and after.
            """,
        examples: [
            CommandExample("iapctl audit list --actor sam --since 7d", "What sam changed in the last week."),
            CommandExample("iapctl audit undo 118 --reason 'wrong order' --ticket T-77", "Revert audit row 118."),
        ],
        subcommands: [
            CommandSpec(
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
                options: [
                    AuditSpec.since,
                    ticketOption.with(help: "Only rows recorded with this ticket."),
                    userOption("Only changes to this user's orders and contracts (also those moved to or from them)."),
                    AuditSpec.order, AuditSpec.contract, AuditSpec.command,
                    limitOption,
                ],
                handler: AuditCommands.list),
            CommandSpec(
                name: "show",
                abstract: "Show one audit row: who, when, why, the field changes, the row before and after.",
                examples: [CommandExample("iapctl audit show 118", "Audit row 118.")],
                arguments: [AuditSpec.showId],
                handler: AuditCommands.show),
            CommandSpec(
                name: "raw",
                abstract: "Print a ledger item exactly as it was received: the same bytes, no newline added.",
                discussion: """
                    The ledger keeps every received JWS or webhook body in a compact form (each certificate \
                    chain stored once, a re-delivery as a reference to its first copy); this rebuilds the \
                    original bytes (for an app receipt's later entries: the receipt they came with). ID is \
                    the ledger_id of audit show, contracts explain or the verdict output. On a terminal, \
                    control characters are shown escaped; redirect to get the bytes.
                    """,
                examples: [
                    CommandExample("iapctl audit raw 42 > item42.jws", "The JWS of ledger item 42, byte for byte.")
                ],
                arguments: [AuditSpec.rawId],
                handler: AuditCommands.raw),
            CommandSpec(
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
                options: [reasonOption, ticketOption, dryRun],
                arguments: [AuditSpec.undoId],
                handler: AuditUndo.run),
        ]
    )
}

/// The options and arguments only `audit` commands have; their handlers read them by these values.
enum AuditSpec {
    /// `audit list --since TIME`.
    static let since = OptionSpec(
        "since", valueName: "time", help: "Only rows at or after this time: \(CommandTree.timeForms).")

    /// `audit list --order KEY`.
    static let order = OptionSpec(
        "order", valueName: "key", help: "Only changes to this order (its number or its transactionId).")

    /// `audit list --contract ID`.
    static let contract = OptionSpec("contract", valueName: "id", help: "Only changes to this contract.")

    /// `audit list --command NAME`.
    static let command = OptionSpec(
        "command", valueName: "name",
        help: "Only changes made by this command (notify, orders update, audit undo, …; a prefix).")

    /// `audit show ID`.
    static let showId = ArgumentSpec("id", help: "The audit row id (ID column of audit list).")

    /// `audit raw ID`.
    static let rawId = ArgumentSpec("id", help: "The ledger item id (ledger_id).")

    /// `audit undo ID`.
    static let undoId = ArgumentSpec("id", help: "The audit row to undo.")
}
