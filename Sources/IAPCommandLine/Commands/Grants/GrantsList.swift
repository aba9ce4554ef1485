import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl grants list`: the grants in force (or all), oldest first.
enum GrantsList {
    static let user = CommandTree.userOption("Only this user's grants.")
    static let product = Option<String?>("product", valueName: "product", help: "Only grants of this product id.")
    static let all = OptionSpec.flag("all", help: "Also grants that ended or were revoked.")

    static let command = CommandSpec(
        name: "list",
        abstract: "List grants of access by hand (those in force; --all for every one).",
        examples: [
            CommandExample("iapctl grants list", "Every grant in force."),
            CommandExample("iapctl grants list --user u42 --all -o json", "Every grant u42 ever had, as JSON."),
        ],
        options: [user, product, all, CommandTree.limitOption],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let filter = GrantFilter(userId: invocation[user], productId: invocation[product])
        var grants = try DbOpen.read(invocation) { try $0.grants(matching: filter) }
        if !invocation.flag(all) { grants = grants.filter { $0.inForce(at: now) } }
        if let limit = invocation[CommandTree.limitOption]?.count { grants = Array(grants.prefix(limit)) }
        let (shown, page) = TerminalPage.cut(grants, noun: "grants", invocation: invocation)
        let records = shown.map { GrantOptions.record($0, now: now) }
        invocation.emit(
            records,
            columns: invocation.output == .table
                ? GrantOptions.columns
                : GrantOptions.record(
                    Grant(userId: "", productId: "", startsAt: 0, untilDate: 0, actor: "", reason: "", ticket: nil), now: 0
                ).keys.map { Column($0) })
        if shown.isEmpty, invocation.output == .table {
            invocation.note(invocation.flag(all) ? "no grants" : "no grants in force (--all shows those that ended)")
        }
        if let page { invocation.note(page) }
        return .success
    }
}
