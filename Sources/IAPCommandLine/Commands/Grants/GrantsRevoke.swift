import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl grants revoke ID`: ends a grant now (audited).
enum GrantsRevoke {
    static let id = Argument<Int64>("id", help: "The grant's id (iapctl grants list).")

    static let command = CommandSpec(
        name: "revoke",
        abstract: "End a grant now (audited; --dry-run shows it first).",
        discussion: """
            The grant's row stays, with when it was revoked, by whom and why; the audit trail \
            records the change. `iapctl audit undo ID` of that audit row puts the grant back in force.
            """,
        examples: [
            CommandExample("iapctl grants revoke 3 --reason 'purchase restored' --ticket T-118 --dry-run", "Show it first."),
            CommandExample("iapctl grants revoke 3 --reason 'purchase restored' --ticket T-118", "End grant 3 now."),
        ],
        options: [CommandTree.reasonOption, CommandTree.ticketOption, CommandTree.dryRun],
        arguments: [id],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let (reason, ticket) = try Corrections.reasonAndTicket(invocation, example: "purchase restored")
        let dryRun = invocation.flag(CommandTree.dryRun)
        let context = CorrectionContext(actor: invocation.actor, command: "grants revoke", now: Timestamp.now())
        let store = try DbOpen.existing(invocation)
        let result = try store.write(commit: !dryRun) { session in
            try GrantService.revoke(invocation[id], reason: reason, ticket: ticket, context: context, in: session)
        }
        Corrections.report([result], invocation: invocation, dryRun: dryRun)
        return .success
    }
}
