import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionEngine

/// `iapctl restore --user U [FILE]`: which orders/contracts a device's restored transactions are,
/// on what basis they matched, whether they belong to U; `--apply` makes the database reflect them.
enum RestoreCommand {
    static let columns: [Column] = [
        "line", "verdict", "basis", Column("orders", maxWidth: 40), "contract", "owner", "status", "expires",
        Column("detail", maxWidth: 90),
    ]

    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let user = invocation.value(CommandTree.userOption), !user.isEmpty else { throw CLIError.usage("--user is required") }
        guard user.count <= FieldValue.maxLength else {
            throw CLIError.usage("--user is \(user.count) characters long; the limit is \(FieldValue.maxLength)")
        }
        let apply = invocation.flag(CommandTree.applyOption)
        let dryRun = invocation.flag(CommandTree.dryRun)
        if dryRun && !apply { throw CLIError.usage("--dry-run goes with --apply (look-ups never write)") }
        let policy = RestorePolicy(rawValue: invocation.value("policy") ?? "keep") ?? .keep
        let reason = invocation.value(CommandTree.reasonOption)
        if apply, policy != .keep, (reason ?? "").trimmed(.spacesAndTabs).isEmpty {
            throw CLIError.usage("--policy \(policy.rawValue) moves purchases between users: give --reason TEXT for the audit trail")
        }
        let explicitOrder = invocation.value("order")
        var verifiers = Verifiers(invocation)
        let store = try DbOpen.open(invocation)
        let service = RestoreService(engine: SubscriptionEventEngine())
        let context = EngineContext(actor: invocation.actor, command: "restore --apply")
        let printer = ItemPrinter(invocation, columns: columns)
        var reminded = false

        var items = InputItems(try invocation.openInput(invocation.arguments.first), acceptsReceipts: true)
        // Ctrl-C during `--apply`: each transaction is committed as it is applied, so what was
        // applied is reported before the process exits 130.
        let interruptible = apply && !dryRun
        if interruptible { Interrupt.install() }
        /// `--apply`: a refused item whose bytes could be read is kept in the ledger (verdict rejected).
        func keep(_ raw: String, _ why: String) throws {
            guard apply else { return }
            try ClientSubmission.reject(raw, why: why, source: .restore, store: store, dryRun: dryRun)
        }
        while let item = try items.next(interruptible: interruptible) {
            let jws: String
            switch item.result {
            case .failure(let failure):
                printer.add(.rejected(line: item.line, failure))
                continue
            case .success(let token): jws = token
            }
            // A StoreKit 1 receipt: each in-app entry is one restored transaction.
            var restored: [TransactionFacts] = []
            if ReceiptInput.der(fromBase64: jws) != nil {
                let report = try verifiers.receipts().verify(base64: jws)
                guard let receipt = report.receipt, report.isValid else {
                    let failure = report.failure ?? VerificationFailure(.invalidContainer, "not a receipt")
                    try keep(jws, "app receipt: " + failure.message)
                    printer.add(.rejected(line: item.line, code: ItemResult.exitCode(for: failure), "app receipt: " + failure.message))
                    continue
                }
                if receipt.inApp.isEmpty {
                    printer.add(
                        ItemResult(
                            line: item.line, verdict: RestoreVerdict.unknown.rawValue, code: .notFound,
                            detail: "the app receipt holds no in-app purchase: nothing to restore"))
                    continue
                }
                for entry in ReceiptMapping.entries(of: receipt) {
                    switch ReceiptMapping.entry(entry, of: receipt) {
                    case .facts(let facts): restored.append(facts)
                    case .incomplete(let why): printer.add(.rejected(line: item.line, code: .dataError, why))
                    case .skipped(let why):
                        printer.add(
                            ItemResult(
                                line: item.line, verdict: RestoreVerdict.rejected.rawValue, code: .failure,
                                transactionId: entry.transactionId, originalTransactionId: entry.originalTransactionId, error: why))
                    }
                }
            } else {
                guard let tx = try verifiedTransaction(jws, line: item.line, verifiers: &verifiers, printer: printer, keep: keep)
                else { continue }
                restored = [tx]
            }
            func report(_ tx: TransactionFacts, _ result: RestoreResult) {
                if let reminder = result.reminder, !reminded {
                    invocation.warn(reminder)
                    reminded = true
                }
                printer.add(itemResult(result, line: item.line, tx: tx))
            }
            if apply {
                try ClientSubmission.restore(
                    restored, raw: jws, user: user, policy: policy, reason: reason, explicitOrder: explicitOrder,
                    service: service, store: store, context: context, dryRun: dryRun
                ) { tx, result in
                    if !dryRun { printer.committed += 1 }
                    report(tx, result)
                }
            } else {
                for tx in restored {
                    report(tx, try store.read { try service.lookup(tx, user: user, explicitOrder: explicitOrder, in: $0) })
                }
            }
        }
        if interruptible && Interrupt.isRequested {
            if printer.count > 0 { _ = printer.finish(command: "restore") }
            invocation.stderr.writeLine(
                "interrupted after \(printer.count) item\(printer.count == 1 ? "" : "s"): "
                    + "\(printer.committed) committed; re-running is safe")
            try? invocation.stderr.flush()
            return .interrupted
        }
        guard !items.isEmpty else {
            throw CLIError(
                .noInput, "no input: expected the device's restored transactions (one JWS per line) or its app receipt",
                hint: "pipe them in, or name a file; a saved {\"signedTransactions\": […]} response works too")
        }
        let note = apply ? (dryRun ? "dry run: nothing was written" : nil) : "look-up only: nothing was written (use --apply)"
        return printer.finish(command: "restore", extraNote: note)
    }

    /// The facts of a restored signed transaction, or nil after reporting why it was refused.
    static func verifiedTransaction(
        _ jws: String, line: Int, verifiers: inout Verifiers, printer: ItemPrinter, keep: (String, String) throws -> Void
    ) throws -> TransactionFacts? {
        do {
            let report = try verifiers.jws().verify(jws, as: .transaction)
            if let failure = report.failure {
                let hint =
                    report.kind == .notification
                    ? "this is a notification: restore takes the device's signed transactions"
                    : failure.code == .untrustedChain ? TrustSetup.untrustedHint : nil
                try keep(jws, failure.message)
                printer.add(.rejected(line: line, failure, hint: hint))
                return nil
            }
            guard let payload = report.transaction, let tx = EventMapping.facts(payload) else {
                try keep(jws, "not a signed transaction with transactionId, originalTransactionId and productId")
                printer.add(
                    .rejected(
                        line: line, code: .dataError, "not a signed transaction with transactionId, originalTransactionId and productId"))
                return nil
            }
            return tx
        }
    }

    static func itemResult(_ result: RestoreResult, line: Int, tx: TransactionFacts) -> ItemResult {
        let code: ExitCode
        switch result.verdict {
        case .restorable, .transferred: code = .success
        case .unknown: code = .notFound
        case .ownedByOther: code = .conflict
        case .rejected: code = .dataError
        }
        var item = ItemResult(
            line: line, verdict: result.verdict.rawValue, code: code, transactionId: tx.transactionId,
            originalTransactionId: tx.originalTransactionId, changes: result.changes, detail: result.detail)
        item.extra = [
            ("basis", result.basis.map { .string($0.rawValue) } ?? .null),
            ("orders", .string(result.orderNos.joined(separator: " "))),
            ("contract", result.contractId.map(JSONValue.string) ?? .null),
            ("owner", result.owner.map(JSONValue.string) ?? .null),
            ("status", result.contractStatus.map { .string($0.rawValue) } ?? .null),
            ("expires", result.contractExpires.map { .string(Timestamp.iso8601($0)) } ?? .null),
        ]
        if let previous = result.previousOwner { item.extra.append(("previousOwner", .string(previous))) }
        if let outcome = result.engineOutcome { item.extra.append(("engineVerdict", .string(outcome.verdict.rawValue))) }
        return item
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
