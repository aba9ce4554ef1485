// `iapctl audit`: the ledger and the audit trail. Each subcommand's spec, options and handler are
// in its own file beside this one.
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
        subcommands: [AuditList.command, AuditShow.command, AuditRaw.command, AuditUndo.command]
    )
}
