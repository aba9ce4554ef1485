import AppStoreJWS
import AppStoreReceipt
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

extension ExitCode {
    /// The exit status of an item's (or a run's) outcome.
    init(_ outcome: ItemOutcome) {
        switch outcome {
        case .success: self = .success
        case .failed: self = .failure
        case .unverified: self = .verificationFailed
        case .notFound: self = .notFound
        case .conflict: self = .conflict
        case .invalid: self = .dataError
        }
    }
}

/// `iapctl verify [FILE]`: verifies and decodes any App Store JWS, printing every check; with
/// `--apply`, runs a signed transaction through the engine (the client verification path).
enum VerifyCommand {
    static let command = CommandSpec(
        name: "verify",
        abstract: "Verify and decode any App Store JWS or StoreKit 1 app receipt; optionally apply a transaction.",
        discussion: """
            Detects what the JWS is (notification, transaction or renewal info), prints each \
            check it passed or failed and the decoded payload. With --apply, a transaction the \
            app sent is run through the subscription engine (the client verification path): \
            whichever of the app and Apple arrives second finds the work already done.

            A StoreKit 1 app receipt (base64 or DER, or a verifyReceipt body {"receipt-data": "…"}) \
            is verified offline: its PKCS#7 signature, the chain to Apple Inc. Root at the \
            receipt's creation date with Apple's OIDs, the bundle id and the receipt type. A \
            receipt proves what was paid when it was signed, and no more: it cannot show renewals \
            after that, refunds or revocations made later, or family sharing. With --apply each \
            in-app entry is a lower-authority client submission: it records payments and extends \
            expiry dates, but never revokes, expires or reopens a state Apple set; Apple's \
            notifications do that.
            """,
        examples: [
            CommandExample(
                "iapctl verify transaction.jws --bundle-id com.example.app --environment Sandbox",
                "Check a transaction and show its fields."),
            CommandExample(
                "iapctl verify --apply --bundle-id com.example.app --app-apple-id 1234567890 < tx.jws",
                "Record the app's purchase before Apple's notification arrives."),
            CommandExample(
                "iapctl verify receipt.b64 --bundle-id com.example.app --environment Sandbox",
                "Check a StoreKit 1 app receipt and list its in-app purchases."),
        ],
        options: [
            CommandTree.applyOption.with(
                help: "Run the transaction (or each in-app entry of a receipt) through the subscription engine."),
            CommandTree.dryRun,
        ] + CommandTree.trustOptions + CommandTree.receiptOptions,
        arguments: [CommandTree.inputFile],
        handler: run
    )

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let verifiers = ClientVerifiers(invocation)
        let apply = invocation.flag(CommandTree.applyOption)
        let dryRun = invocation.flag(CommandTree.dryRun)
        if dryRun && !apply { throw CLIError.usage("--dry-run goes with --apply") }
        let submission =
            apply
            ? ClientVerification.Submission(
                store: try DbOpen.open(invocation), context: EngineContext(actor: invocation.actor, command: "verify --apply"),
                dryRun: dryRun) : nil

        var items = InputItems(try invocation.openInput(invocation[CommandTree.inputFile]), acceptsReceipts: true)
        var documents: [JSONValue] = []
        var outcomes: [ItemOutcome] = []
        var committed = 0
        // Ctrl-C during `--apply`: each item is committed as it is applied, so what was applied
        // is reported (in every format) before the process exits 130.
        let interruptible = apply && !dryRun
        if interruptible { Interrupt.install() }
        while let item = try items.next(interruptible: interruptible) {
            let checked = try ClientVerification.check(item, with: verifiers)
            var doc: [(key: String, value: JSONValue)] = [("line", .int(Int64(item.line)))]
            switch checked.report {
            case .unreadable(let failure):
                doc += [("valid", .bool(false)), ("kind", .string("unknown")), ("error", .string(failure.message))]
                writeHuman(invocation, line: item.line, report: nil, failure: failure)
            case .receipt(let report):
                doc += ReceiptOutput.fields(report)
                ReceiptOutput.writeHuman(invocation, line: item.line, report: report)
            case .jws(let report):
                doc += reportFields(report)
                if report.failure != nil, let hint = NotifyCommand.hint(for: report, roots: verifiers.jwsRoots) {
                    doc.append(("hint", .string(hint)))
                }
                writeHuman(invocation, line: item.line, report: report, failure: report.failure, roots: verifiers.jwsRoots)
            }
            guard let submission else {
                documents.append(.object(doc))
                outcomes.append(ClientVerification.result(checked).outcome)
                continue
            }
            let result = try ClientVerification.submit(checked, to: submission) { entry, applied in
                ReceiptOutput.writeEntry(invocation, entry, applied, line: item.line, dryRun: dryRun)
            }
            switch result.applied {
            case .transaction(let applied)?:
                doc.append(("apply", applyFields(applied, line: item.line, dryRun: dryRun, invocation: invocation)))
            case .receipt(let receipt, let entries)?:
                doc.append(("apply", ReceiptOutput.applyFields(receipt, entries, line: item.line, invocation: invocation)))
            case .keptRejected?, nil: break
            }
            // Every item has a verdict: the engine's, or `rejected` for what was refused before it.
            doc.insert(("verdict", .string(result.verdict.rawValue)), at: 1)
            documents.append(.object(doc))
            outcomes.append(result.outcome)
            if result.isCommitted { committed += 1 }
        }
        guard !items.isEmpty || (interruptible && Interrupt.isRequested) else {
            throw CLIError(
                .noInput, "no input: expected an App Store JWS (or {\"signedPayload\": …})",
                hint: "pipe it in, e.g. pbpaste | iapctl verify, or name a file")
        }
        switch invocation.output {
        case .table: break
        case .json: invocation.emit(json: documents.count == 1 ? documents[0] : .array(documents))
        case .ndjson, .csv: for d in documents { invocation.emit(json: d) }
        }
        if interruptible && Interrupt.isRequested {
            return Interrupt.reportStop(items: documents.count, committed: committed, on: invocation.stderr)
        }
        return ExitCode(ItemOutcome.of(outcomes))
    }

    /// `valid`, `kind`, `checks`, `warnings`, `payload` (and nested reports) of one report.
    static func reportFields(_ report: VerificationReport) -> [(key: String, value: JSONValue)] {
        var fields: [(key: String, value: JSONValue)] = [
            ("valid", .bool(report.isValid)), ("kind", .string(report.kind.rawValue)),
        ]
        if let failure = report.failure {
            fields.append(("error", .object([("code", .string(failure.code.rawValue)), ("message", .string(failure.message))])))
        }
        fields.append(("checks", checksJSON(report.checks)))
        fields.append(("warnings", .array(report.warnings.map(JSONValue.string))))
        fields.append(("payload", report.payload ?? .null))
        if !report.nested.isEmpty {
            fields.append(("nested", .object(report.nested.map { ($0.member.rawValue, .object(reportFields($0.report))) })))
        }
        return fields
    }

    static func checksJSON(_ checks: [VerificationReport.Check]) -> JSONValue {
        .array(
            checks.map {
                .object([("name", .string($0.name.description)), ("status", .string($0.status.rawValue)), ("detail", .string($0.detail))])
            })
    }

    /// The table-mode view: each check with its verdict, then the payload with readable dates.
    static func writeHuman(
        _ invocation: Invocation, line: Int, report: VerificationReport?, failure: VerificationFailure?,
        roots: TrustSettings.Roots = .builtIn
    ) {
        guard invocation.output == .table else {
            if let failure { invocation.stderr.writeLine("error: line \(line): \(failure.message)") }
            return
        }
        let out = invocation.stdout
        guard let report else {
            writeWrapped(out, prefix: "line \(line): REJECTED (malformed): ", failure?.message ?? "", hang: 2)
            return
        }
        let kind =
            report.kind == .notification
            ? "notification \(report.notification?.notificationType?.rawValue ?? "?")\(report.notification?.subtype.map { "/" + $0.rawValue } ?? "")"
            : report.kind.rawValue
        out.writeLine("line \(line): \(kind): \(report.isValid ? "VALID" : "INVALID")")
        writeChecks(report, to: out, indent: "  ")
        for warning in report.warnings { writeWrapped(out, prefix: "  warning: ", warning) }
        if let failure = report.failure {
            writeWrapped(out, prefix: "  error: ", failure.plainMessage)
            if let hint = NotifyCommand.hint(for: report, roots: roots) { writeWrapped(out, prefix: "  hint: ", hint) }
        }
        if let payload = report.payload {
            out.writeLine("  payload:")
            let text = readable(payload, nested: report.nested).prettySerialized()
            for l in text.split(separator: "\n", omittingEmptySubsequences: false) { out.writeLine("    " + l) }
        }
    }

    static func writeChecks(_ report: VerificationReport, to out: OutputSink, indent: String) {
        writeCheckLines(report.checks, to: out, indent: indent)
        for (member, nested) in report.nested {
            out.writeLine("\(indent)\(member.rawValue): \(nested.kind.rawValue), \(nested.isValid ? "valid" : "INVALID")")
            writeChecks(nested, to: out, indent: indent + "  ")
        }
    }

    /// One line per check: `[ok  ] name  detail`.
    static func writeCheckLines(_ checks: [VerificationReport.Check], to out: OutputSink, indent: String) {
        let width = checks.map(\.name.description.count).max() ?? 0
        for check in checks {
            let mark: String
            switch check.status {
            case .passed: mark = "ok  "
            case .failed: mark = "FAIL"
            case .skipped: mark = "skip"
            }
            // A failed chain in a person's words, not OpenSSL's.
            let detail = check.status == .failed && check.name == .chain ? VerificationFailure.plainWords(check.detail) : check.detail
            let name = check.name.description + String(repeating: " ", count: width - check.name.description.count)
            writeWrapped(out, prefix: "\(indent)[\(mark)] \(name)  ", detail)
        }
    }

    /// `prefix` + `text`; on a terminal wrapped at words under the text, a command kept whole.
    static func writeWrapped(_ out: OutputSink, prefix: String, _ text: String, hang: Int? = nil) {
        for line in TextWrap.hanging(text, prefix: prefix, width: out.terminalColumns, hang: hang) { out.writeLine(line) }
    }

    /// The payload for people: `…Date` fields as ISO-8601 with the raw milliseconds, nested JWS decoded.
    static func readable(_ value: JSONValue, nested: [(member: NestedMember, report: VerificationReport)]) -> JSONValue {
        guard case .object(let members) = value else { return value }
        return .object(
            members.map { member in
                if let report = nested.first(where: { $0.member.rawValue == member.key })?.report, let payload = report.payload {
                    return (member.key, readable(payload, nested: report.nested))
                }
                if member.key.hasSuffix("Date") || member.key.hasSuffix("date"), let ms = member.value.int64Value {
                    return (member.key, .string("\(Timestamp.iso8601Millis(ms)) (\(ms))"))
                }
                if case .object = member.value { return (member.key, readable(member.value, nested: nested)) }
                return member
            })
    }

    /// `--apply` of a signed transaction: its result as the `apply` object, and its line in a table.
    static func applyFields(
        _ applied: ClientSubmission.TransactionResult, line: Int, dryRun: Bool, invocation: Invocation
    ) -> JSONValue {
        switch applied {
        case .notATransaction(let kind):
            let message =
                kind == .notification
                ? "--apply takes a signed transaction; apply notifications with `iapctl notify`"
                : "--apply takes a signed transaction, not \(kind.rawValue)"
            if invocation.output == .table { writeWrapped(invocation.stdout, prefix: "  apply: refused: ", message) }
            return .object([("verdict", .string("rejected")), ("error", .string(message))])
        case .incomplete:
            let message = "the transaction lacks transactionId, originalTransactionId or productId"
            return .object([("verdict", .string("rejected")), ("error", .string(message))])
        case .poison(let event, let why):
            // A poison item: refused on its own, kept in the ledger.
            if invocation.output == .table {
                writeWrapped(invocation.stdout, prefix: "  apply: refused: ", why)
            } else {
                invocation.stderr.writeLine("error: line \(line): \(why)")
            }
            return ItemReport.poison(line: line, event, why).record.jsonObject()
        case .applied(let event, let outcome):
            var result = ItemReport.applied(line: line, event: event, outcome: outcome)
            // A dry run says what would be done (`would apply`), and its object says `dry_run`.
            result.dryRun = dryRun
            if invocation.output == .table {
                writeWrapped(
                    invocation.stdout, prefix: "  apply\(dryRun ? " (dry run)" : ""): \(result.tableVerdict): ", outcome.detail,
                    hang: 4)
            }
            return result.record.jsonObject()
        }
    }
}
