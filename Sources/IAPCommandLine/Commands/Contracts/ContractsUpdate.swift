import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl contracts update ID`: hand correction of one contract; audited (`RowCorrection`).
enum ContractsUpdate {
    static let status = ContractOptions.status.with(help: "The new status.")

    /// `--auto-renew on|off`.
    static let autoRenew = Option<CommandTree.Switch?>(
        "auto-renew", valueName: "on|off", help: "Turn the auto-renew flag on or off.",
        allowedValues: OptionSpec.choices(CommandTree.Switch.self))

    /// `--clear-override FIELD`, repeatable.
    static let clearOverride = CommandTree.clearOverrideOption(CommandTree.contractDerivedFields)

    /// The options that set a field, and the field each sets.
    static let fields = [
        FieldOption(status, "status"), FieldOption(autoRenew, "auto_renew"),
        FieldOption(CommandTree.expiresOption, "expires_date"),
    ]

    static let command = CommandSpec(
        name: "update",
        abstract: "Correct a contract by hand (audited).",
        discussion: """
            Changes the status, the auto-renew flag or the expiry of one contract. The change is \
            recorded with the actor, the reason, the ticket and the values before and after; a change \
            to nothing is not recorded.

            These fields are derived from Apple's signed facts, so a change is an override: it \
            holds when later facts are derived again — a refund of an older period does not \
            undo a hand revoke — until it is removed (`iapctl audit undo ID` of the change, or \
            --clear-override FIELD, which re-derives the field from the facts) or until Apple \
            signs a period newer than the newest one the override saw (a renewal): then the \
            facts decide again and the event's detail says "override #ID … lifted". `contracts \
            show` and `contracts explain` show each override beside what the facts say.
            """,
        examples: [
            CommandExample(
                "iapctl contracts update 2000000100000001 --status revoked --reason 'chargeback'",
                "Revoke a subscription."),
            CommandExample(
                "iapctl contracts update 2000000100000001 --expires 2025-12-31T00:00:00Z --reason 'goodwill' --dry-run",
                "Show an extension without writing it."),
        ],
        options: [
            status, CommandTree.batchReasonOption, CommandTree.ticketOption, autoRenew, CommandTree.expiresOption,
            clearOverride, CommandTree.dryRun,
        ],
        arguments: [ContractOptions.id],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        try RowCorrection.run(
            invocation, as: Contract.self, command: "contracts update", key: invocation[ContractOptions.id],
            keyName: ContractOptions.id.spec.name, fields: fields, from: nil, clearOverride: clearOverride)
    }
}
