import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl contracts list`: contracts newest first, filtered.
enum ContractsList {
    static let user = CommandTree.userOption("Only this user's contracts.")

    static let command = CommandSpec(
        name: "list",
        abstract: "List member contracts.",
        examples: [
            CommandExample("iapctl contracts list --user u42", "A user's subscriptions."),
            CommandExample(
                "iapctl contracts list --status active -o ndjson", "Active ones, one JSON per line."),
        ],
        options: [user, ContractOptions.status, CommandTree.limitOption],
        handler: run)

    /// Contracts newest first, filtered.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let filter = ContractFilter(
            userId: invocation[user], status: invocation[ContractOptions.status],
            limit: invocation[CommandTree.limitOption]?.count)
        let (contracts, page) = TerminalPage.cut(
            try DbOpen.read(invocation) { try $0.contracts(matching: filter) }, noun: "contracts", invocation: invocation)
        let now = Timestamp.now()
        invocation.emit(
            contracts.map { RowRendering.record($0, at: now, table: invocation.output == .table) },
            columns: invocation.output == .table ? RowRendering.contractColumns : RowRendering.allContractColumns)
        if contracts.isEmpty, invocation.output == .table { invocation.note("no contracts") }
        if let page { invocation.note(page) }
        return .success
    }
}
