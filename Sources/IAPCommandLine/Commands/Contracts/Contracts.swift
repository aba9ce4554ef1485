import SubscriptionEngine
import SubscriptionModel

// `iapctl contracts`: member contracts, one per subscription. Each subcommand's spec, options and
// handler are in its own file beside this one (List.swift, Show.swift, Explain.swift, Update.swift).
extension CommandTree {
    static let contracts = CommandSpec(
        name: "contracts",
        abstract: "List, inspect and correct member contracts (one per auto-renewing subscription).",
        discussion: "A contract's id is the subscription's originalTransactionId, stable across renewals.",
        examples: [
            CommandExample("iapctl contracts list --status billing_retry", "Subscriptions Apple cannot charge."),
            CommandExample("iapctl contracts show 2000000100000001", "A contract and its event timeline."),
        ],
        subcommands: [ContractsList.command, ContractsShow.command, ContractsExplain.command, ContractsUpdate.command]
    )
}

/// The option and argument several `contracts` commands share.
enum ContractOptions {
    /// `--status STATUS` (`contracts update` words it its own way).
    static let status = Option<ContractStatus?>(
        "status", valueName: "status", help: "Only contracts in this status.",
        allowedValues: CommandTree.contractStatuses)

    /// `ID` of `contracts show|explain|update`.
    static let id = Argument<String>(
        "id", help: "The contract id (the originalTransactionId).", completion: .lookup("contracts"))
}
