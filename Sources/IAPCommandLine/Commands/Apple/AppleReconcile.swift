import AppStoreAPI
import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl apple reconcile`: asks Apple what is true now about the subscriptions in scope and prints
/// (dry run) or applies (`--apply`) the differences with the database (``AppleReconcile``).
enum AppleReconcileCommand {
    static let contractOption = Option<String?>(
        "contract", valueName: "id", help: "One subscription: its originalTransactionId (the contract id).",
        completion: .lookup("contracts"))

    static let transactionOption = Option<AppleTransactionId?>(
        "transaction", valueName: "id",
        help: "The subscription of any of its transactionIds (Apple's Get Transaction Info names it).")

    static let orderIdOption = Option<String?>(
        "order-id", valueName: "id",
        help: "The subscriptions of an order ID from a receipt e-mail (Look Up Order ID, Production).")

    static let allOption = OptionSpec.flag(
        "all", help: "Every contract in the database, by contract id; resumable (see below).")

    static let contractStatusOption = Option<ContractStatus?>(
        "status", valueName: "status", help: "With --all: only contracts of this stored status.",
        allowedValues: CommandTree.contractStatuses)

    static let sinceOption = Option<PointInTime?>(
        "since", valueName: "time",
        help: "With --all: only contracts whose last event is at or after: ISO-8601, ms, or back from now (36h, 7d).")

    static let applyOption = CommandTree.applyOption.with(
        help: "Write: apply Apple's answers through the engine. Without it, a dry run that writes nothing.")

    static let userOption = CommandTree.userOption("The contracts of this user in the database.")

    static let spec = CommandSpec(
        name: "reconcile",
        abstract: "Ask Apple what is true now and fix the database where it disagrees (a dry run unless --apply).",
        discussion: """
            For each subscription in scope (exactly one of --user, --contract, --transaction, --order-id, \
            --all) iapctl asks Apple itself: Get All Subscription Statuses (its status, latest transaction \
            and renewal info) and Get Transaction History (every page, read one at a time; the items of one \
            subscription are kept until applied, at most 64 MiB). Every signed item is verified with \
            the trust options; one that does not verify is refused, kept in the ledger as rejected and \
            reported. The rest are Apple's word (source apple_api in the ledger and 'contracts explain'): \
            they go through the same engine as notifications, one audited transaction per subscription, \
            and every order or contract row they change is printed with its changes, as 'notify' prints \
            them (the audit rows carry --reason and --ticket when given): a refund, a refund reversal, a renewal, an expiry, grace period or billing retry, \
            auto-renew turned off, an upgrade, a transaction the database never saw.

            Without --apply it is a dry run: exactly the same work in transactions that are rolled back, \
            so it prints what --apply will do, line by line. A subscription that already agrees with \
            Apple is left untouched and prints nothing.

            --all takes every contract by contract id and shows progress on a terminal; Ctrl-C stops it \
            between subscriptions (exit 130). With --apply it saves a checkpoint (reconcile:all, the last \
            subscription done) in the same transaction as each subscription's work, so running it again \
            continues after it; a run that gets through every contract removes the checkpoint. A dry run \
            starts where the checkpoint says too (it predicts the rerun) but never saves or removes it.

            The summary line counts the subscriptions that agree, changed (a dry run: would change), had \
            items refused, are unmatched (no user's order or contract to attach them to), are owned by \
            another user, or are unknown to Apple.

            Exit codes: 0 the database agrees with Apple, or --apply made it agree; 1 a dry run found \
            differences (printed; fixed with --apply); 2 an item Apple returned did not verify, 3 Apple does not know a subscription (or \
            the database cannot attach it to a user), 4 owned by another user, 65 an item too large for \
            the database; 69, 75 and 78 as for every 'apple' command (a run stopped by them prints what \
            was done; with --all --apply a rerun continues).
            """,
        examples: [
            CommandExample(
                "iapctl apple reconcile --contract 2000000100000001",
                "What differs between the database and Apple for one subscription (nothing is written)."),
            CommandExample(
                "iapctl apple reconcile --contract 2000000100000001 --apply", "Make the database agree with Apple."),
            CommandExample("iapctl apple reconcile --user u42 -o ndjson", "Every subscription of a user, as NDJSON."),
            CommandExample(
                "iapctl apple reconcile --order-id MK5TTTVWJH --apply", "The subscriptions of a customer's receipt e-mail."),
            CommandExample(
                "iapctl apple reconcile --all --status active --since 30d --apply",
                "A nightly job: every active contract with news in the last 30 days (rerun to resume)."),
        ],
        options: [
            userOption, contractOption, transactionOption, orderIdOption, allOption, contractStatusOption, sinceOption,
            applyOption, CommandTree.engineReasonOption, CommandTree.ticketOption,
        ],
        handler: run)

    static let columns: [Column] = [
        Column("line", title: "#"), Column("verdict", important: true), "answer", Column("contract", title: "CONTRACT"),
        "transaction", Column("detail", maxWidth: 100, important: true, wraps: true),
    ]

    /// The scope the options name: exactly one of them.
    static func scope(_ invocation: Invocation) throws -> AppleReconcile.Scope {
        var scopes: [(String, AppleReconcile.Scope)] = []
        if let user = invocation[userOption] { scopes.append(("--user", .user(user))) }
        if let id = invocation[contractOption] { scopes.append(("--contract", .contract(id))) }
        if let id = invocation[transactionOption]?.text { scopes.append(("--transaction", .transaction(id))) }
        if let id = invocation[orderIdOption] { scopes.append(("--order-id", .orderId(id))) }
        let status = invocation[contractStatusOption]
        let since = invocation[sinceOption]?.at(Timestamp.now())
        if invocation.flag(allOption) { scopes.append(("--all", .all(status: status, since: since))) }
        guard scopes.count == 1 else {
            throw CLIError.usage(
                scopes.isEmpty
                    ? "say which subscriptions: one of --user, --contract, --transaction, --order-id or --all"
                    : scopes.map(\.0).joined(separator: " and ") + " exclude each other: give one",
                hint: "e.g. iapctl apple reconcile --contract 2000000100000001")
        }
        if case .all = scopes[0].1 {
        } else if status != nil || since != nil {
            throw CLIError.usage("--status and --since go with --all")
        }
        return scopes[0].1
    }

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let scope = try scope(invocation)
        let apply = invocation.flag(applyOption)
        let session = try AppleSession(invocation)
        let store = try DbOpen.existing(invocation)
        let reconcile = AppleReconcile(
            store: store, source: APISource(session: session, store: store), verifier: { try session.verifier(for: $0) },
            context: try Corrections.engineContext(invocation, command: "apple reconcile"), apply: apply)
        let plan: AppleReconcile.Plan
        do { plan = try reconcile.plan(scope) } catch let error as AppleReconcile.ScopeError { throw error.cliError }
        let printer = BatchPrinter(invocation, columns: columns)
        var tally = Tally(dryRun: !apply)
        for row in plan.refused {
            tally.refusedInLookUp += 1
            tally.add(printer, ItemReport(line: 0, original: nil, row, dryRun: !apply))
        }
        if let after = plan.resumedAfter {
            invocation.note(
                "resuming after subscription \(after): checkpoint \(AppleReconcile.checkpointName) of an --apply run that stopped")
        }
        let isAll: Bool
        if case .all = scope { isAll = true } else { isAll = false }
        if isAll { Interrupt.install() }
        var current: String?
        do {
            for (index, original) in plan.originals.enumerated() {
                if isAll && Interrupt.isRequested { throw Interrupt.Stop() }
                current = original
                if isAll {
                    session.progress(
                        "apple reconcile: subscription \(index + 1) of \(plan.originals.count), "
                            + "\(tally.changed) \(apply ? "changed" : "would change")")
                }
                let result = try reconcile.reconcile(original, checkpoint: isAll)
                session.endProgress()
                tally.count(result)
                for row in result.rows {
                    tally.add(printer, ItemReport(line: index + 1, original: original, row, dryRun: !apply))
                }
                try? invocation.stdout.flush()
            }
        } catch  where isAll && Interrupt.isRequested {
            session.endProgress()
            _ = printer.finish(summary: tally.summary)
            return Interrupt.reportStop(
                items: tally.subscriptions, committed: apply ? tally.subscriptions : 0, on: invocation.stderr)
        } catch {
            session.endProgress()
            let resume = isAll && apply ? "; running it again continues there (checkpoint \(AppleReconcile.checkpointName))" : ""
            _ = printer.finish(
                summary: tally.summary + "; stopped at subscription \(current ?? "?") (those reported above are final)" + resume)
            throw error
        }
        if isAll { try reconcile.finishAll() }
        // The run's own exit rules (with -q the summary shows only when it is not 0).
        return printer.finish(summary: tally.summary, status: tally.exitCode)
    }

    /// The run's counts, its summary line and its exit status. Each subscription is counted under
    /// what became of it: it agrees (no row), it changed (or would), items of it were refused,
    /// an answer found no user (unmatched) or another owner (conflict), Apple does not know it.
    /// One subscription can be counted under more than one (changed, with one item refused).
    struct Tally {
        var dryRun: Bool
        var subscriptions = 0
        var agree = 0
        var changed = 0
        var refused = 0
        var unmatched = 0
        var conflicts = 0
        var unknown = 0
        /// Items Apple returned while resolving the scope (`--transaction`, `--order-id`) that were refused.
        var refusedInLookUp = 0
        var outcomes = Set<ItemOutcome>()

        mutating func count(_ result: AppleReconcile.Result) {
            subscriptions += 1
            if result.agrees { agree += 1 }
            if result.changed { changed += 1 }
            if result.refusedItems > 0 { refused += 1 }
            if result.unmatched { unmatched += 1 }
            if result.conflicts { conflicts += 1 }
            if result.isUnknown { unknown += 1 }
        }

        mutating func add(_ printer: BatchPrinter, _ report: ItemReport) {
            outcomes.insert(report.outcome)
            printer.add(Row(report: report))
        }

        var summary: String {
            var parts = [
                "\(changed) \(dryRun ? "would change" : "changed")",
                "\(agree) agree\(agree == 1 ? "s" : "") with Apple",
            ]
            if refused > 0 { parts.append("\(refused) with items refused (did not verify or do not fit; nothing of them applied)") }
            if unmatched > 0 { parts.append("\(unmatched) unmatched (no order or contract of a user to attach to)") }
            if conflicts > 0 { parts.append("\(conflicts) owned by another user") }
            if unknown > 0 { parts.append("\(unknown) unknown to Apple") }
            if refusedInLookUp > 0 {
                parts.append("\(refusedInLookUp) item\(refusedInLookUp == 1 ? "" : "s") of the look-up refused")
            }
            return "apple reconcile\(dryRun ? " (dry run)" : ""): \(subscriptions) subscription\(subscriptions == 1 ? "" : "s"): "
                + parts.joined(separator: ", ") + (dryRun ? "; nothing was written (--apply writes)" : "")
        }

        /// The most serious outcome's code: unverified, too large, conflict, unknown or unmatched, then
        /// (a dry run) a difference still to fix. An `--apply` that wrote every change exits 0.
        var exitCode: ExitCode {
            for outcome in [ItemOutcome.unverified, .invalid, .conflict, .notFound, .failed] where outcomes.contains(outcome) {
                return ExitCode(outcome)
            }
            return .success
        }
    }

    /// A reported row: `notify`'s, with the subscription in the table (machine formats have it as
    /// `original_transaction_id`).
    struct Row: BatchResult {
        var report: ItemReport
        var status: String { report.status }
        var code: ExitCode { report.code }
        var diagnostic: String? { report.diagnostic }

        func record(for format: OutputFormat) -> Record {
            var record = report.record(for: format)
            if format == .table { record.append("contract", report.originalTransactionId) }
            return record
        }
    }

    /// Apple's answers through the `apple` session (its client paginates, waits out 429s and retries).
    /// Under `--environment auto` a contract the database has from Sandbox is asked of Sandbox first.
    struct APISource: ReconcileSource {
        let session: AppleSession
        let store: any Store

        /// The server the database has contract `original` from (nil: not stored, or no environment).
        func storedIn(_ original: String) -> APIServer? {
            let stored = try? store.read { try $0.contract(contractId: original) }?.environment
            return stored.flatMap { APIServer(rawValue: $0) }
        }

        func statuses(_ transactionId: String) throws -> (server: APIServer, items: [SubscriptionStatusItem]) {
            let call = Endpoint.subscriptionStatuses(transactionId, statuses: [])
            let answer = try session.send(call, storedIn: storedIn(transactionId))
            return (answer.server, try SubscriptionStatusItem.items(answer, call: call))
        }

        func history(_ transactionId: String, page: (SignedTransactions) throws -> Void) throws {
            let call = Endpoint.transactionHistory(transactionId, query: TransactionHistoryQuery().items)
            do {
                try session.api.forEachRevisionPage(call, session.environment, storedIn: storedIn(transactionId)) {
                    server, answer, number in
                    let items = try SignedTransactions.list(answer["signedTransactions"], call: call, optional: false)
                    try page(SignedTransactions(server: server, items: items, pages: number))
                }
            } catch let error as AppStoreAPIError {
                throw session.explained(error, sandboxTried: session.environment.mayHaveAskedSandbox(followsEnvironment: true))
            }
        }

        func transaction(_ transactionId: String) throws -> SignedTransactions {
            let call = Endpoint.transaction(transactionId)
            let answer = try session.send(call)
            let jws = try AppStoreServerAPI.requiredString(answer, "signedTransactionInfo", call: call)
            return SignedTransactions(server: answer.server, items: [jws], pages: 1)
        }

        func lookup(_ orderId: String) throws -> SignedTransactions? {
            let call = Endpoint.lookup(orderId: orderId)
            let lookup = try OrderLookup(try session.send(call, sandboxOnNotFound: false), call: call)
            return lookup.isValid ? lookup.transactions : nil
        }
    }
}

extension AppleReconcile.ScopeError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .userHasNoContracts(let user):
            CLIError(
                .notFound, "user \(user) has no contracts in the database",
                hint: "check the user id (iapctl contracts list --user \(ShellWord.word(user))); for a purchase the database never "
                    + "saw, reconcile it by --transaction ID or --order-id ID")
        case .invalidOrderId(let orderId):
            CLIError(
                .notFound, "Apple says order ID \(orderId) is invalid",
                hint: "check it against the customer's receipt e-mail (e.g. MK5TTTVWJH); it is not a transactionId")
        case .orderIdWithoutTransactions(let orderId):
            CLIError(.notFound, "Apple knows order ID \(orderId) but returned no transaction for it")
        }
    }
}
