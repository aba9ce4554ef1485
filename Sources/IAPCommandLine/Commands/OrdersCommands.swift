import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `iapctl orders create|list|update`.
enum OrdersCommands {
    /// One order from `--user`/`--product` (`--no` to import an existing number), or one per row of `--from`.
    static func create(_ invocation: Invocation) throws -> ExitCode {
        let requests: [(line: Int?, order: Order)]
        if let from = invocation.parsed.value(CommandTree.fromOption) {
            for option in [CommandTree.userOption, OrdersSpec.product, OrdersSpec.no]
            where invocation.parsed.value(option) != nil {
                throw CLIError.usage(
                    "--from cannot be combined with --\(option.long)", hint: "put user, product and no in the file's rows")
            }
            let rows = try BatchInput.read(invocation, from: from)
            requests = try rows.map { row throws(CLIError) in
                do throws(OrderCreation.DraftError) {
                    return (row.line, try OrderCreation.Draft(fields: row.fields).order())
                } catch {
                    throw Corrections.prefixed(error.cliError, row.prefix)
                }
            }
        } else {
            guard let user = invocation.parsed.value(CommandTree.userOption),
                let product = invocation.parsed.value(OrdersSpec.product)
            else {
                throw CLIError.usage(
                    "give --user and --product, or --from FILE",
                    hint: "e.g. iapctl orders create --user u42 --product com.example.pro.monthly")
            }
            let draft = OrderCreation.Draft(user: user, product: product, no: invocation.parsed.value(OrdersSpec.no))
            do { requests = [(nil, try draft.order())] } catch { throw error.cliError }
        }
        let context = CorrectionContext(
            actor: invocation.actor, command: "orders create", now: Timestamp.now())
        let store = try DbOpen.existing(invocation)
        let created = try store.write { session in try OrderCreation.create(requests, context: context, in: session) }
        switch invocation.output {
        case .table:
            for order in created { invocation.print(order.no) }
        case .json, .ndjson, .csv:
            invocation.emit(created.map(RowRendering.record), columns: nil)
        }
        if created.count > 1 { invocation.note("created \(created.count) orders") }
        return .success
    }

    /// `orders list`, or with `--as-of` the orders (of `--user`) as they were then.
    static func list(_ invocation: Invocation) throws -> ExitCode {
        guard let raw = invocation.parsed.value(CommandTree.asOfOption) else { return try listNow(invocation) }
        let time = try AuditTime.parse(raw, option: CommandTree.asOfOption.long, now: Timestamp.now())
        let user = invocation.parsed.value(CommandTree.userOption)
        let status = invocation.parsed.value(OrdersSpec.status).flatMap(OrderStatus.init(rawValue:))
        let product = invocation.parsed.value(OrdersSpec.product)
        let limit = invocation.parsed.value(CommandTree.limitOption).flatMap { Int($0) }
        let orders = try DbOpen.read(invocation) { session in
            try EntitlementQuery.orders(user: user, status: status, product: product, at: time, in: session)
        }
        let shown = limit.map { Array(orders.prefix($0)) } ?? orders
        invocation.emit(
            shown.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.orderColumns : RowRendering.allOrderColumns)
        invocation.note("as of \(Timestamp.iso8601(time)): \(shown.count) order\(shown.count == 1 ? "" : "s")")
        return .success
    }

    /// Orders newest first, filtered.
    static func listNow(_ invocation: Invocation) throws -> ExitCode {
        let filter = OrderFilter(
            userId: invocation.parsed.value(CommandTree.userOption),
            status: invocation.parsed.value(OrdersSpec.status).flatMap(OrderStatus.init(rawValue:)),
            productId: invocation.parsed.value(OrdersSpec.product),
            limit: invocation.parsed.value(CommandTree.limitOption).flatMap { Int($0) })
        let orders = try DbOpen.read(invocation) { try $0.orders(matching: filter) }
        invocation.emit(
            orders.map(RowRendering.record),
            columns: invocation.output == .table ? RowRendering.orderColumns : RowRendering.allOrderColumns)
        if orders.isEmpty, invocation.output == .table { invocation.note("no orders") }
        return .success
    }

    /// The options of `orders update` that set a field, and the field each sets.
    static let updateOptions: [(option: OptionSpec, field: String)] = [
        (OrdersSpec.status, "status"), (CommandTree.userOption, "user_id"), (OrdersSpec.product, "product_id"),
        (CommandTree.expiresOption, "expires_date"), (OrdersSpec.tradeNo, "trade_no"), (OrdersSpec.originNo, "origin_no"),
    ]

    /// Hand correction of one order (KEY = no or trade_no) or of a `--from` batch; audited, all or nothing.
    static func update(_ invocation: Invocation) throws -> ExitCode {
        try runUpdate(
            invocation, as: Order.self, command: "orders update", key: OrdersSpec.updateKey, optionFields: updateOptions,
            from: CommandTree.fromOption, clearOption: OrdersSpec.clearOverride)
    }

    /// The shared body of `orders update` and `contracts update`: `key` is the command's KEY
    /// argument, `optionFields` its options that set a field, `from` its `--from` (nil: no batches).
    static func runUpdate<Row: CorrectableRow>(
        _ invocation: Invocation, as type: Row.Type, command: String, key keyArgument: ArgumentSpec,
        optionFields: [(option: OptionSpec, field: String)], from fromOption: OptionSpec?, clearOption: OptionSpec
    ) throws -> ExitCode {
        let (reason, ticket) = try Corrections.reasonAndTicket(invocation, example: "refund approved by support")
        let dryRun = invocation.flag(CommandTree.dryRun)
        let key = invocation.parsed.argument(keyArgument)
        let values = Corrections.optionValues(invocation, optionFields)
        let options = optionFields.map { "--\($0.option.long)" }.joined(separator: ", ")
        let cleared = invocation.parsed.values(clearOption)
        if !cleared.isEmpty {
            guard values.isEmpty, fromOption.map({ invocation.parsed.value($0) == nil }) ?? true else {
                throw CLIError.usage(
                    "--\(clearOption.long) cannot be combined with \(options)\(fromOption.map { " or --\($0.long)" } ?? "")",
                    hint: "clear the override first, then correct the row in a second command")
            }
            guard let key else { throw CLIError.usage("missing argument <\(keyArgument.name)>") }
            return try Corrections.clearOverrides(
                Row.self, key: key, fields: cleared, reason: reason, command: command, invocation: invocation, dryRun: dryRun)
        }
        let requests: [CorrectionRequest<Row>]
        if let fromOption, let from = invocation.parsed.value(fromOption) {
            if key != nil {
                throw CLIError.usage("give either <\(keyArgument.name)> or --from, not both")
            }
            if !values.isEmpty {
                throw CLIError.usage("with --from, put the fields in the file's rows, not in \(options)")
            }
            let rows = try BatchInput.read(invocation, from: from)
            do { requests = try CorrectionRows.requests(rows, for: Row.self, reason: reason, ticket: ticket) } catch {
                throw error.cliError
            }
        } else {
            guard let key else {
                throw CLIError.usage("missing argument <\(keyArgument.name)>", hint: "or give --from FILE for a batch")
            }
            guard !values.isEmpty else {
                throw CLIError.usage("nothing to change", hint: "give at least one of \(options)")
            }
            requests = [
                CorrectionRequest(line: nil, key: key, keyField: "", fields: values, reason: reason, ticket: ticket)
            ]
        }
        let store = try DbOpen.existing(invocation)
        let results = try Corrections.apply(
            requests, as: Row.self, store: store, invocation: invocation, command: command, dryRun: dryRun)
        Corrections.report(results, invocation: invocation, dryRun: dryRun)
        return .success
    }
}

extension OrderCreation.DraftError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .field(let error): return error.cliError
        case .unknownField(let key): return CLIError(.dataError, "unknown field '\(key)' (allowed: user, product, no)")
        case .missing(let name): return CLIError(.dataError, "missing \"\(name)\"")
        case .notPrintable(let name):
            return CLIError(.dataError, "\(name) must be non-empty text without control characters")
        case .badNumber(let no):
            return CLIError(
                .dataError, "order number '\(no)' must be 1–128 characters without spaces",
                hint: "leave it out to get a new UUID")
        }
    }
}

extension OrderCreationError: CLIErrorConvertible {
    public var cliError: CLIError {
        let prefix = { (line: Int?) in line.map { "line \($0): " } ?? "" }
        switch self {
        case .repeated(let line, let no):
            return CLIError(.dataError, prefix(line) + "order number \(no) appears twice in the input")
        case .exists(let line, let no):
            return CLIError(
                .conflict, prefix(line) + "order \(no) already exists", hint: "see it with: iapctl orders show \(ShellWord.word(no))")
        case .conflict(let line, let message):
            return CLIError(.conflict, prefix(line) + message)
        }
    }
}
