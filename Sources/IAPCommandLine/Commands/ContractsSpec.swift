// The specification of `iapctl contracts list|show|explain|update`: member contracts, one per subscription.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let contracts = CommandSpec(
        name: "contracts",
        abstract: "List, inspect and correct member contracts (one per auto-renewing subscription).",
        discussion: "A contract's id is the subscription's originalTransactionId, stable across renewals.",
        examples: [
            CommandExample("iapctl contracts list --status billing_retry", "Subscriptions Apple cannot charge."),
            CommandExample("iapctl contracts show 2000000100000001", "A contract and its event timeline."),
        ],
        subcommands: [
            CommandSpec(
                name: "list",
                abstract: "List member contracts.",
                examples: [
                    CommandExample("iapctl contracts list --user u42", "A user's subscriptions."),
                    CommandExample(
                        "iapctl contracts list --status active -o ndjson", "Active ones, one JSON per line."),
                ],
                options: [
                    userOption("Only this user's contracts."),
                    ContractsSpec.status,
                    limitOption,
                ],
                handler: ContractsCommands.list),
            CommandSpec(
                name: "show",
                abstract: "Show a contract, its orders and its event timeline with each event's verdict.",
                examples: [
                    CommandExample("iapctl contracts show 2000000100000001", "As sections of a table."),
                    CommandExample("iapctl contracts show 2000000100000001 -o json", "As one JSON document."),
                    CommandExample(
                        "iapctl contracts show 2000000100000001 --as-of 2025-03-14T09:30:00Z",
                        "The contract as it was then, and whether it entitled its user."),
                ],
                options: [asOfOption],
                arguments: [ContractsSpec.id],
                handler: ContractsCommands.show),
            CommandSpec(
                name: "explain",
                abstract: "Explain why a contract is in its state: the derivation, event by event.",
                discussion: """
                    First, which signed fact (signed when, and from which source) decides each field: \
                    the engine's own derivation of the kept facts. FROM names the source and so its \
                    authority: Apple pushed (a notification), Apple pulled (an App Store Server API \
                    answer iapctl fetched, e.g. by 'apple reconcile'), the app (verify --apply), a \
                    restore, or by hand (an override; README 'Sources of truth'). Then lists every \
                    ledger event of the contract in signedDate order with the rule that \
                    fired (type/subtype → transition), the state before and after, and why an event \
                    changed nothing (duplicate, stale against which newer event, ignored type), with \
                    the manual changes in between, ending in the current state. Readable in a \
                    ticket; -o json for scripts.
                    """,
                examples: [
                    CommandExample("iapctl contracts explain 2000000100000001", "The derivation as a table."),
                    CommandExample("iapctl contracts explain 2000000100000001 -o json", "As one JSON document."),
                ],
                arguments: [ContractsSpec.id],
                handler: ExplainCommand.run),
            CommandSpec(
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
                    ContractsSpec.status.with(help: "The new status."), reasonOption, ticketOption,
                    ContractsSpec.autoRenew, expiresOption, ContractsSpec.clearOverride,
                    dryRun,
                ],
                arguments: [ContractsSpec.id],
                handler: ContractsCommands.update),
        ]
    )
}

/// The options and arguments only `contracts` commands have; their handlers read them by these values.
enum ContractsSpec {
    /// `--status STATUS` (`contracts update` words it its own way).
    static let status = OptionSpec(
        "status", valueName: "status", help: "Only contracts in this status.",
        allowedValues: CommandTree.contractStatuses)

    /// `contracts update --auto-renew on|off`.
    static let autoRenew = OptionSpec(
        "auto-renew", valueName: "on|off", help: "Turn the auto-renew flag on or off.",
        allowedValues: OptionSpec.choices(CommandTree.Switch.self))

    /// `contracts update ID --clear-override FIELD`, repeatable.
    static let clearOverride = OptionSpec(
        "clear-override", valueName: "field",
        help: "Lift the hand override of this field and re-derive it from Apple's facts (repeatable).",
        kind: .repeatable, allowedValues: CommandTree.contractDerivedFields)

    /// `contracts show|explain|update ID`.
    static let id = ArgumentSpec("id", help: "The contract id (the originalTransactionId).")
}
