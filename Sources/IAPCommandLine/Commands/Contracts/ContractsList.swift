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
            CommandExample(
                "iapctl contracts list --risk price-consent", "Subscriptions that expire unless a price increase is accepted."),
        ],
        options: [user, ContractOptions.status, RenewalRiskRendering.riskOption, CommandTree.limitOption],
        handler: run)

    /// Contracts newest first, filtered; with `--risk` only those at that renewal risk
    /// (``RenewalRisk``, from each one's newest renewal info), with the risk in words.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let risk = invocation[RenewalRiskRendering.riskOption]
        let limit = invocation[CommandTree.limitOption]?.count
        let filter = ContractFilter(
            userId: invocation[user], status: invocation[ContractOptions.status], limit: risk == nil ? limit : nil)
        let now = Timestamp.now()
        let found = try DbOpen.read(invocation) { session -> [(Contract, RenewalRisk?)] in
            let contracts = try session.contracts(matching: filter)
            guard let risk else { return contracts.map { ($0, nil) } }
            var kept: [(Contract, RenewalRisk?)] = []
            for contract in contracts {
                if let limit, kept.count >= limit { break }
                let said = RenewalRisk.of(contract, facts: try session.facts(originalTransactionId: contract.contractId), now: now)
                if said.kinds.contains(risk) { kept.append((contract, said)) }
            }
            return kept
        }
        let (contracts, page) = TerminalPage.cut(found, noun: "contracts", invocation: invocation)
        let table = invocation.output == .table
        var columns = table ? RowRendering.contractColumns : RowRendering.allContractColumns
        if risk != nil {
            columns.removeAll { table && ($0.key == "updated_at" || $0.key == "auto_renew") }
            columns.append(Column("risk_text", title: "WHY", maxWidth: 60, wraps: true))
        }
        invocation.emit(
            contracts.map { contract, said in
                var r = RowRendering.record(contract, at: now, table: table)
                if let said {
                    if !table { r.append("risk", .array(said.kinds.map { JSONValue.string($0.rawValue) })) }
                    r.append("risk_text", said.notes.joined(separator: "; "))
                }
                return r
            },
            columns: columns)
        if contracts.isEmpty, table {
            invocation.note(risk.map { "no contracts at risk \($0.rawValue)" } ?? "no contracts")
        }
        if let page { invocation.note(page) }
        return .success
    }
}
