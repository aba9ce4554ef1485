import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl orders create`: one pending order, or one per row of `--from`.
enum OrdersCreate {
    static let user = CommandTree.userOption("The user who buys (your account id).")

    /// `--no NO`.
    static let no = Option<String?>(
        "no", valueName: "no", help: "Use this order number instead of a new UUID (to import existing orders).")

    static let from = CommandTree.fromOption(
        "Create one order per NDJSON line {\"user\", \"product\"[, \"no\"]} (or CSV row with a "
            + "header user,product[,no]) of this file; all or nothing.")

    static let command = CommandSpec(
        name: "create",
        abstract: "Create a pending order and print its order number.",
        discussion: """
            Prints the new order number alone on stdout, so scripts can capture it. The app \
            passes it to StoreKit 2 as appAccountToken; the order becomes paid when Apple's \
            notification (or the app's verified transaction) arrives.

            With --from, creates one order per NDJSON line {"user": "…", "product": "…"} (an \
            optional "no" imports an existing order number; CSV with a header line works too) and \
            prints one number per line, in input order. A bad row creates nothing.
            """,
        examples: [
            CommandExample(
                "iapctl orders create --user u42 --product com.example.pro.monthly",
                "One pending order; prints its number."),
            CommandExample(
                "printf '{\"user\":\"u1\",\"product\":\"p\"}\\n' | iapctl orders create --from -",
                "Orders from NDJSON on stdin, one number per line."),
        ],
        options: [user, OrderOptions.product, no, from],
        handler: run)

    /// One order from `--user`/`--product` (`--no` to import an existing number), or one per row of `--from`.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let requests: [(line: Int?, order: Order)]
        if let from = invocation[from] {
            let others = [
                (user.spec, invocation[user]), (OrderOptions.product.spec, invocation[OrderOptions.product]), (no.spec, invocation[no]),
            ]
            for (option, value) in others where value != nil {
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
            guard let user = invocation[user], let product = invocation[OrderOptions.product] else {
                throw CLIError.usage(
                    "give --user and --product, or --from FILE",
                    hint: "e.g. iapctl orders create --user u42 --product com.example.pro.monthly")
            }
            let draft = OrderCreation.Draft(user: user, product: product, no: invocation[no])
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
