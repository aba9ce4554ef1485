import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl grants add`: gives one user (or, with `--from`, many) access to a product until a
/// moment; audited, all or nothing, `--dry-run` first.
enum GrantsAdd {
    static let user = CommandTree.userOption("The user to give access to (your account id).")
    static let product = Option<String?>(
        "product", valueName: "product", help: "The product id the access is to (what `entitled --product` asks about).")
    static let until = Option<PointInTime?>(
        "until", valueName: "time", help: "When the grant ends (exclusive): \(CommandTree.timeForms) (it must be after now).")
    static let span = Option<String?>(
        "for", valueName: "span", help: "How long the grant lasts from now, instead of --until: \(GrantOptions.spanForms).")
    static let from = CommandTree.fromOption(
        "Give the grants of this NDJSON or CSV file (all or nothing): rows {\"user\", \"product\", \"until\" or \"for\", "
            + "\"reason\", \"ticket\"}.")

    /// The fields a `--from` row may hold.
    static let fields = ["user", "product", "until", "for", "reason", "ticket"]

    static let command = CommandSpec(
        name: "add",
        abstract: "Give a user access to a product until a moment, by hand (audited).",
        discussion: """
            Writes one row of iap_grants per grant and one audit row (entity grant, key the \
            grant's id, the grant as JSON after); never an order or a contract. The grant is in \
            force from now until --until (or for --for) and then ends by itself. --reason is \
            required (each --from row may carry its own "reason" and "ticket"); --dry-run shows \
            the grants and writes nothing.

            With --from, every bad row is reported at once (its line, what is wrong and the fix) \
            and nothing is written. `iapctl audit undo ID` of a grant's audit row revokes it.
            """,
        examples: [
            CommandExample(
                "iapctl grants add --user u42 --product com.example.pro.monthly --for 7d --reason 'locked out' --ticket T-1 "
                    + "--dry-run",
                "Show the grant first."),
            CommandExample(
                "iapctl grants add --user u42 --product com.example.pro.monthly --until 2026-01-01 --reason 'locked out' "
                    + "--ticket T-1",
                "Give it."),
            CommandExample(
                "iapctl grants add --from outage.csv --reason 'outage 2025-11-30' --ticket INC-7",
                "A grant for every user of a file."),
        ],
        options: [
            user, product, until, span, CommandTree.batchReasonOption, CommandTree.ticketOption, from, CommandTree.dryRun,
        ],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let example = "locked out after a restore"
        let (reason, ticket) = try Corrections.optionalReasonAndTicket(invocation, example: example)
        let dryRun = invocation.flag(CommandTree.dryRun)
        let now = Timestamp.now()
        let requests: [GrantRequest]
        if let path = invocation[from] {
            let given = [
                (user.spec, invocation[user] != nil), (product.spec, invocation[product] != nil),
                (until.spec, invocation[until] != nil), (span.spec, invocation[span] != nil),
            ].filter(\.1).map(\.0)
            if !given.isEmpty {
                throw CLIError.usage(
                    "with --from, put \(given.map { "--\($0.long)" }.joined(separator: ", ")) in the file's rows",
                    hint: "each row: {\"user\": …, \"product\": …, \"until\" or \"for\": …}")
            }
            let rows = try BatchInput.read(invocation, from: path)
            let checked = check(rows, reason: reason, ticket: ticket, now: now)
            try CorrectionFileReport.check(checked.problems, file: path == "-" ? "stdin" : path, rows: rows.count)
            requests = checked.requests
        } else {
            guard let user = invocation[user] else {
                throw CLIError.usage("missing required option --user <user>", hint: "or give --from FILE for a batch")
            }
            guard let product = invocation[product] else { throw CLIError.usage("missing required option --product <product>") }
            let end = try self.end(until: invocation[until]?.at(now), span: invocation[span], now: now)
            guard let reason else { throw Corrections.missingReason(example: example) }
            requests = [GrantRequest(line: nil, userId: user, productId: product, untilDate: end, reason: reason, ticket: ticket)]
        }
        let context = CorrectionContext(actor: invocation.actor, command: "grants add", now: now)
        let store = try DbOpen.existing(invocation)
        let results = try store.write(commit: !dryRun) { session in
            try GrantService.add(requests, context: context, in: session)
        }
        Corrections.report(results, invocation: invocation, dryRun: dryRun)
        return .success
    }

    /// The end of a grant given `--until` or `--for` (exactly one).
    static func end(until: Int64?, span: String?, now: Int64) throws(CLIError) -> Int64 {
        switch (until, span) {
        case (nil, nil):
            throw CLIError.usage("missing --until <time> or --for <span>", hint: "e.g. --for 7d, or --until 2026-01-01")
        case (.some, .some): throw CLIError.usage("give --until or --for, not both")
        case (let until?, nil): return until
        case (nil, let text?):
            guard let length = GrantOptions.span(text) else {
                throw CLIError.usage("--for '\(TerminalText.escape(text))' is not a span", hint: "use \(GrantOptions.spanForms)")
            }
            return now + length
        }
    }

    /// The requests of a `--from` file's rows, and every problem of every row (nothing is given when
    /// there is one): unknown fields, missing or bad values, an end not after now, a user and
    /// product named twice.
    static func check(
        _ rows: [BatchRow], reason: String?, ticket: String?, now: Int64
    ) -> (requests: [GrantRequest], problems: [CorrectionFileReport.Problem]) {
        var requests: [GrantRequest] = []
        var problems: [CorrectionFileReport.Problem] = []
        var firstLine: [String: Int] = [:]
        for row in rows {
            let prefix = row.prefix
            var rowProblems: [CLIError] = []
            for (key, _) in row.fields where !fields.contains(key) {
                rowProblems.append(
                    CLIError(
                        .dataError, prefix + "unknown field '\(key)' (allowed: \(fields.joined(separator: ", ")))",
                        hint: Suggestion.closest(to: key, among: fields).map { "did you mean '\($0)'?" }))
            }
            func text(_ field: String, required: Bool) -> String? {
                guard let value = row.value(field), !(value.isNull || value == .string("")) else {
                    if required {
                        rowProblems.append(CLIError(.dataError, prefix + "no \"\(field)\"", hint: "every row needs \"\(field)\""))
                    }
                    return nil
                }
                do { return try BatchField.text(value, field: field) } catch {
                    rowProblems.append(Corrections.prefixed(error.cliError, prefix))
                    return nil
                }
            }
            let user = text("user", required: true)
            let product = text("product", required: true)
            let rowReason = text("reason", required: false) ?? reason
            let rowTicket = text("ticket", required: false) ?? ticket
            var end: Int64?
            let untilValue = row.value("until").flatMap { $0.isNull || $0 == .string("") ? nil : $0 }
            let spanText = text("for", required: false)
            switch (untilValue, spanText) {
            case (nil, nil):
                rowProblems.append(
                    CLIError(.dataError, prefix + "no \"until\" and no \"for\"", hint: "give \"until\" (a time) or \"for\" (7d)"))
            case (.some, .some):
                rowProblems.append(CLIError(.dataError, prefix + "both \"until\" and \"for\"", hint: "keep one of them"))
            case (let value?, nil):
                do { end = try BatchField.optionalTime(value, field: "until", now: now) } catch {
                    rowProblems.append(Corrections.prefixed(error.cliError, prefix))
                }
            case (nil, let span?):
                if let length = GrantOptions.span(span) {
                    end = now + length
                } else {
                    rowProblems.append(
                        CLIError(
                            .dataError, prefix + "for '\(TerminalText.escape(span))' is not a span", hint: "use \(GrantOptions.spanForms)"))
                }
            }
            if let end, end <= now {
                rowProblems.append(GrantError.endNotInFuture(line: row.line, until: end, now: now).cliError)
            }
            if rowReason == nil {
                rowProblems.append(
                    CLIError.usage(
                        prefix + "no \"reason\" in this row, and no --reason for the batch",
                        hint: "give --reason TEXT for every row, or a \"reason\" in each row"))
            }
            if let user, let product {
                let key = user + "\u{0}" + product
                if let earlier = firstLine[key] {
                    rowProblems.append(
                        CLIError(
                            .dataError, prefix + "user \(user) and product \(product) are also on line \(earlier)",
                            hint: "one grant per user and product: remove line \(row.line) or line \(earlier)"))
                } else {
                    firstLine[key] = row.line
                }
            }
            problems += rowProblems.map { CorrectionFileReport.Problem(line: row.line, error: $0) }
            if rowProblems.isEmpty, let user, let product, let end, let rowReason {
                requests.append(
                    GrantRequest(line: row.line, userId: user, productId: product, untilDate: end, reason: rowReason, ticket: rowTicket))
            }
        }
        return (requests, problems)
    }
}
