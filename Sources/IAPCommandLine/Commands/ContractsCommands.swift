import SubscriptionEngine

/// `iapctl contracts list|show|update`.
enum ContractsCommands {
    /// Contracts newest first, filtered.
    static func list(_ invocation: Invocation) throws -> ExitCode {
        let filter = ContractFilter(
            userId: invocation.parsed.value(CommandTree.userOption),
            status: invocation.parsed.value("status").flatMap(ContractStatus.init(rawValue:)),
            limit: invocation.parsed.value(CommandTree.limitOption).flatMap { Int($0) })
        let contracts = try DbOpen.read(invocation) { try $0.contracts(matching: filter) }
        invocation.emit(
            contracts.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.contractColumns : RowRendering.allContractColumns)
        if contracts.isEmpty, invocation.output == .table { invocation.note("no contracts") }
        return .success
    }

    /// A contract, its orders, its event timeline with verdicts, and its audit trail.
    static func show(_ invocation: Invocation) throws -> ExitCode {
        guard let id = invocation.parsed.argument("id") else { throw CLIError.usage("missing argument <id>") }
        let history: OrdersShow.History? = try DbOpen.read(invocation) { session in
            guard let contract = try session.contract(contractId: id) else { return nil }
            let orders = try session.orders(originNo: id)
            return try OrdersShow.gather(session, orders: orders, contract: contract)
        }
        guard let history else {
            throw CLIError(
                .notFound, "no contract with contract_id = \(id)",
                hint:
                    "a contract's id is the subscription's originalTransactionId; list them with: iapctl contracts list"
            )
        }
        OrdersShow.emit(history, invocation: invocation, primary: .contract)
        return .success
    }

    /// The options of `contracts update` that set a field, and the field each sets.
    static let updateOptions: [(option: String, field: String)] = [
        ("status", "status"), ("auto-renew", "auto_renew"), ("expires", "expires_date"),
    ]

    /// Hand correction of one contract or of a `--from` batch; audited, all or nothing.
    static func update(_ invocation: Invocation) throws -> ExitCode {
        try OrdersCommands.runUpdate(
            invocation, as: Contract.self, command: "contracts update", keyArgument: "id",
            optionFields: updateOptions)
    }
}
