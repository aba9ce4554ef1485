import AppStoreJWS
import AppStoreReceipt
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// How `verify` shows a StoreKit 1 receipt (like a JWS item: `valid`, `kind`, `checks`, `payload`)
/// and what `--apply` did with its in-app entries (``ClientVerification``).
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
        for warning in report.warnings { VerifyCommand.writeWrapped(out, prefix: "  warning: ", warning) }
        if let failure = report.failure { VerifyCommand.writeWrapped(out, prefix: "  error: ", failure.message) }
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

    /// The table line of one applied in-app entry, written as soon as the entry's result is final.
    static func writeEntry(
        _ invocation: Invocation, _ entry: InAppPurchase, _ applied: ClientSubmission.EntryResult, line: Int, dryRun: Bool
    ) {
        guard invocation.output == .table else { return }
        let result = ItemReport(line: line, entry: entry, applied)
        VerifyCommand.writeWrapped(
            invocation.stdout, prefix: "  apply\(dryRun ? " (dry run)" : "") \(entry.transactionId ?? "?"): \(result.verdict): ",
            result.detail ?? result.error ?? "", hang: 4)
    }

    /// The `apply` array of a receipt: one result per in-app entry (oldest purchase first).
    static func applyFields(
        _ receipt: AppReceipt, _ entries: [(entry: InAppPurchase, result: ClientSubmission.EntryResult)], line: Int,
        invocation: Invocation
    ) -> JSONValue {
        if receipt.inApp.isEmpty, invocation.output == .table {
            invocation.stdout.writeLine("  apply: the receipt holds no in-app purchase: nothing to apply")
        }
        return .array(entries.map { ItemReport(line: line, entry: $0.entry, $0.result).record.jsonObject() })
    }
}
