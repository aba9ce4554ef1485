import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl restore --user U [FILE]`: which orders/contracts a device's restored transactions are,
/// on what basis they matched, whether they belong to U; `--apply` makes the database reflect them.
enum RestoreCommand {
    static let user = CommandTree.requiredUserOption("The user the device belongs to.")

    /// `--policy POLICY`.
    static let policy = Option<RestorePolicy>(
        "policy", valueName: "policy",
        help: "Transactions owned by another user: keep them there, transfer them, or transfer only "
            + "when the other user is not entitled now (a canceled contract inside its paid period is active; "
            + "a lapsed one is asked about first when the Apple API settings are given, else refused until "
            + "apple reconcile --contract ID runs).",
        allowedValues: CommandTree.restorePolicies, defaultValue: "keep")

    static let reason = CommandTree.reasonOption.reading(
        String?.self, help: "Why, for the audit trail (needed for transfers).")

    /// `--order NO`.
    static let order = Option<String?>("order", valueName: "no", help: "Only consider this order number.")

    static let command = CommandSpec(
        name: "restore",
        abstract: "Say which orders a device's restored transactions are, and whether they belong to a user.",
        discussion: """
            Reads the transactions (one JWS per line) a device restored for user U and reports \
            for each: which order or contract it is, how it matched (transactionId, \
            originalTransactionId, appAccountToken), and a verdict: restorable, owned-by-other, \
            transferred, unknown or rejected. With --apply a restorable transaction is restored \
            only when the engine linked it to an order of U; otherwise the engine's own verdict \
            (unmatched, exit 3; conflict, exit 4; …) and why. The order the product fallback \
            found stays linked when Apple later sends a version without appAccountToken. A \
            purchase is never credited to another account unless --policy allows a transfer.

            A StoreKit 1 app receipt (base64, DER or {"receipt-data": "…"}) works too: after it \
            verifies, each of its in-app entries is answered like a transaction (a receipt has no \
            appAccountToken, so it matches by transactionId, originalTransactionId or the \
            product fallback). A receipt proves what was paid when it was signed, not renewals, \
            refunds or family sharing after that; with --apply it never revokes, expires or \
            reopens a state Apple set.

            With --policy transfer-if-inactive, a contract of the other user that lapsed (paid \
            until a past date, nothing from Apple since) is not taken for inactive on the \
            database's word: given the Apple API settings (--key-file, --key-id, --issuer-id and \
            --bundle-id, as for 'apple'; the server follows --environment: Sandbox when only \
            sandbox is accepted, Production then Sandbox when both are), restore first asks Apple \
            and applies its answer for that contract, as 'apple reconcile --contract ID --apply' \
            does (not under --dry-run); still active, the transfer is refused (exit 4); expired, it \
            goes through. Without them the transfer is refused with the reconcile command to run.
            """,
        examples: [
            CommandExample(
                "iapctl restore --user u42 restored.txt --bundle-id com.example.app",
                "Report only."),
            CommandExample(
                "iapctl restore --user u42 --apply --policy transfer-if-inactive --reason 'new phone' < restored.txt",
                "Apply, moving subscriptions whose owner has no active contract."),
        ],
        options: [
            user, CommandTree.applyOption.with(help: "Apply restorable transactions through the subscription engine."),
            policy, reason, order, CommandTree.dryRun,
        ] + CommandTree.trustOptions + CommandTree.receiptOptions
            + [AppleCommands.keyFileOption.spec, AppleCommands.keyIdOption.spec, AppleCommands.issuerIdOption.spec],
        arguments: [CommandTree.inputFile],
        handler: run
    )

    /// The table's columns: TRANSACTION tells apart the entries of one receipt (all on LINE 1);
    /// ORDERS holds ids, never cut below 16.
    static let columns: [Column] = [
        "line", "transaction", Column("verdict", important: true), "basis", "orders",
        "contract", "owner", "status", "expires", Column("detail", maxWidth: 90, wraps: true),
    ]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let user = invocation[user]
        guard !user.isEmpty else { throw CLIError.usage("--user is required") }
        guard user.count <= BatchField.maxLength else {
            throw CLIError.usage("--user is \(user.count) characters long; the limit is \(BatchField.maxLength)")
        }
        let apply = invocation.flag(CommandTree.applyOption)
        let dryRun = invocation.flag(CommandTree.dryRun)
        if dryRun && !apply { throw CLIError.usage("--dry-run goes with --apply (look-ups never write)") }
        let policy = invocation[policy]
        let reason = invocation[reason]
        if apply, policy != .keep, (reason ?? "").trimmed(.spacesAndTabs).isEmpty {
            throw CLIError.usage("--policy \(policy.rawValue) moves purchases between users: give --reason TEXT for the audit trail")
        }
        let explicitOrder = invocation[order]
        let verifiers = ClientVerifiers(invocation)
        let store = try DbOpen.open(invocation)
        var restore = RestoreSubmission(
            user: user, explicitOrder: explicitOrder,
            apply: apply ? RestoreSubmission.Apply(policy: policy, reason: reason, dryRun: dryRun) : nil, store: store,
            context: EngineContext(actor: invocation.actor, command: "restore --apply"))
        if apply, !dryRun, policy == .transferIfInactive, RestoreAsksApple.isConfigured(invocation) {
            let asks = RestoreAsksApple(
                invocation, store: store, user: user, explicitOrder: explicitOrder, service: restore.service,
                reason: reason)
            restore.beforeApply = { try asks.check($0) }
        }
        let printer = BatchPrinter(invocation, columns: columns)
        /// Transactions applied (and committed) so far: told after a Ctrl-C.
        var committed = 0
        var reminded = false

        var items = InputItems(try invocation.openInput(invocation[CommandTree.inputFile]), acceptsReceipts: true)
        // Ctrl-C during `--apply`: each transaction is committed as it is applied, so what was
        // applied is reported before the process exits 130.
        let interruptible = apply && !dryRun
        if interruptible { Interrupt.install() }
        while let item = try items.next(interruptible: interruptible) {
            try restore.restore(item, verifiers: verifiers) { row in
                if case .restored(_, let result) = row {
                    if interruptible { committed += 1 }
                    if let reminder = result.reminder, !reminded {
                        invocation.warn(reminder)
                        reminded = true
                    }
                }
                // A refused JWS is pointed at what the command takes, or at the trusted root in use.
                var report = ItemReport(line: item.line, row) { $0.hint(roots: verifiers.jwsRoots) }
                // `--apply --dry-run`: the row and the summary say what would be done (`would transfer`).
                report.dryRun = apply && dryRun
                printer.add(report)
            }
        }
        if interruptible && Interrupt.isRequested {
            if printer.count > 0 { _ = printer.finish(command: "restore") }
            return Interrupt.reportStop(items: printer.count, committed: committed, on: invocation.stderr)
        }
        guard !items.isEmpty else {
            throw CLIError(
                .noInput, "no input: expected the device's restored transactions (one JWS per line) or its app receipt",
                hint: "pipe them in, or name a file; a saved {\"signedTransactions\": […]} response works too")
        }
        let note = apply ? (dryRun ? "dry run: nothing was written" : nil) : "look-up only: nothing was written (use --apply)"
        return printer.finish(command: "restore", extraNote: note)
    }
}

extension RestoreError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .missingReason(let policy):
            return CLIError.usage("--policy \(policy.rawValue) needs --reason TEXT for the audit trail")
        case .refusedByPolicy(let why):
            return CLIError(.conflict, "refused by policy: \(why)")
        }
    }
}
