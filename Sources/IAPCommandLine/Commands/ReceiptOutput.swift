import AppStoreJWS
import AppStoreReceipt
import SubscriptionEngine

/// How `verify` shows a StoreKit 1 receipt (like a JWS item: `valid`, `kind`, `checks`, `payload`)
/// and runs its in-app entries through the engine with `--apply`.
enum ReceiptOutput {
    /// `valid`, `kind` ("receipt"), `error`, `checks`, `warnings`, `payload` (the decoded receipt).
    static func fields(_ report: ReceiptReport) -> [(key: String, value: JSONValue)] {
        var fields: [(key: String, value: JSONValue)] = [("valid", .bool(report.isValid)), ("kind", .string("receipt"))]
        if let failure = report.failure {
            fields.append(("error", .object([("code", .string(failure.code.rawValue)), ("message", .string(failure.message))])))
        }
        fields.append(("checks", VerifyCommand.checksJSON(report.checks)))
        fields.append(("warnings", .array(report.warnings.map(JSONValue.string))))
        fields.append(("payload", report.receipt?.json ?? .null))
        return fields
    }

    /// The table-mode view: checks, then the receipt fields and one line per in-app entry.
    static func writeHuman(_ invocation: Invocation, line: Int, report: ReceiptReport) {
        guard invocation.output == .table else {
            if let failure = report.failure { invocation.stderr.writeLine("error: line \(line): \(failure.message)") }
            return
        }
        let out = invocation.stdout
        out.writeLine("line \(line): app receipt: \(report.isValid ? "VALID" : "INVALID")")
        VerifyCommand.writeCheckLines(report.checks, to: out, indent: "  ")
        for warning in report.warnings { out.writeLine("  warning: \(warning)") }
        if let failure = report.failure { out.writeLine("  error: \(failure.message)") }
        guard let receipt = report.receipt else { return }
        func date(_ ms: Int64?) -> String { ms.map { Timestamp.iso8601($0) } ?? "-" }
        out.writeLine("  receipt:")
        out.writeLine("    type \(receipt.receiptType ?? "-"), bundle \(receipt.bundleId ?? "-"), created \(date(receipt.creationDate))")
        out.writeLine("    app version \(receipt.appVersion ?? "-"), original \(receipt.originalAppVersion ?? "-")")
        out.writeLine("    in-app entries: \(receipt.inApp.count)")
        for entry in receipt.inApp {
            var text = "    - \(entry.transactionId ?? "?") (original \(entry.originalTransactionId ?? "?")) \(entry.productId ?? "?")"
            text += " purchased \(date(entry.purchaseDate))"
            if let expires = entry.expiresDate { text += " expires \(date(expires))" }
            if let cancelled = entry.cancellationDate { text += " CANCELLED \(date(cancelled))" }
            if entry.isTrialPeriod == true { text += " trial" }
            if entry.isInIntroOfferPeriod == true { text += " intro" }
            out.writeLine(text)
        }
    }

    /// `verify --apply` of a receipt: each in-app entry through the engine as a client submission.
    /// Returns one result per entry and the item's exit code (the first entry that did not succeed).
    static func apply(
        _ receipt: AppReceipt, raw: String, line: Int, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, dryRun: Bool, invocation: Invocation
    ) throws -> (JSONValue, ExitCode) {
        var results: [JSONValue] = []
        var code: ExitCode = .success
        var kept: Int64? = nil
        for entry in ReceiptMapping.entries(of: receipt) {
            let result: ItemResult
            switch ReceiptMapping.entry(entry, of: receipt) {
            case .incomplete(let why):
                result = .rejected(line: line, code: .dataError, why)
            case .skipped(let why):
                result = ItemResult(
                    line: line, verdict: Verdict.ignored.rawValue, code: .success, transactionId: entry.transactionId,
                    originalTransactionId: entry.originalTransactionId, detail: why)
            case .facts(let facts):
                let event = ReceiptMapping.event(facts, receipt: receipt, raw: kept.map(ReceiptMapping.reference) ?? raw)
                let outcome = try engine.apply(event, to: store, context: context, dryRun: dryRun)
                if kept == nil, !dryRun { kept = outcome.ledgerId }
                result = .applied(line: line, event: event, outcome: outcome)
            }
            if code == .success { code = result.code }
            if invocation.output == .table {
                invocation.stdout.writeLine(
                    "  apply\(dryRun ? " (dry run)" : "") \(entry.transactionId ?? "?"): \(result.verdict): \(result.detail ?? result.error ?? "")"
                )
            }
            results.append(result.record.jsonObject())
        }
        if receipt.inApp.isEmpty, invocation.output == .table {
            invocation.stdout.writeLine("  apply: the receipt holds no in-app purchase: nothing to apply")
        }
        return (.array(results), code)
    }

    /// `notify --replay-unmatched` of a ledger item that came from a receipt: the receipt is verified
    /// again and the in-app entry with the item's transactionId goes through the engine once more.
    static func replay(
        _ entry: LedgerEntry, verifier: ReceiptVerifier, store: any Store, engine: SubscriptionEventEngine,
        context: EngineContext, dryRun: Bool
    ) throws -> ItemResult {
        let line = Int(entry.id)
        var raw = entry.raw
        if let id = ReceiptMapping.referencedLedgerId(raw) {
            guard let original = try store.read({ try $0.ledgerEntry(id: id) }) else {
                return .rejected(line: line, code: .dataError, "ledger #\(id), which holds its receipt, is gone")
            }
            raw = original.raw
        }
        let report = verifier.verify(base64: raw)
        guard let receipt = report.receipt, report.isValid else {
            let failure = report.failure ?? VerificationFailure(.invalidContainer, "not a receipt")
            return .rejected(line: line, code: EventMapping.exitCode(for: failure), "app receipt: " + failure.message)
        }
        guard let inApp = receipt.inApp.first(where: { $0.transactionId != nil && $0.transactionId == entry.transactionId }),
            case .facts(let facts) = ReceiptMapping.entry(inApp, of: receipt)
        else {
            return .rejected(line: line, code: .dataError, "the receipt holds no applicable entry \(entry.transactionId ?? "?")")
        }
        let event = ReceiptMapping.event(facts, receipt: receipt, raw: entry.raw)  // the reference stays a reference
        let outcome = try store.write(commit: !dryRun) { session in
            try engine.apply(event, in: session, context: context, replaying: entry.id)
        }
        return .applied(line: line, event: event, outcome: outcome)
    }
}
