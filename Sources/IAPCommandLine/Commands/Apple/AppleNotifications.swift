import AppStoreAPI
import AppStoreJWS

/// `iapctl apple notifications …`: Get Notification History (and filling the gap it shows), test
/// notifications.
enum AppleNotifications {
    static let group = CommandSpec(
        name: "notifications",
        abstract: "Notification history (what Apple sent and whether it arrived), keeping up with it, and test notifications.",
        subcommands: [history, AppleNotificationSync.command, test, testStatus])

    static let history = CommandSpec(
        name: "history",
        abstract: "Get Notification History: every notification Apple sent in a time window, all pages.",
        discussion: """
            Apple keeps 180 days of notifications with each delivery attempt; Production retries a failed \
            delivery only five times, Sandbox once, so this is how a missed notification is found. By \
            default prints each notification's signedPayload, one per line, for 'iapctl notify'. \
            --gap-report compares them with the ledger (exit 1 when some were never applied); --apply \
            replays exactly the missing ones through the engine (like 'notify --gap-report FILE --apply'). \
            With --environment auto, Production is asked.
            """,
        examples: [
            CommandExample(
                "iapctl apple notifications history --since 2d | iapctl notify", "Apply the last two days."),
            CommandExample(
                "iapctl apple notifications history --since 7d --only-failures --apply",
                "Replay what failed to arrive this week; prints the gap report."),
            CommandExample(
                "iapctl apple notifications history --since 30d --transaction 2000000123456789 -o table",
                "One customer's notifications, decoded, with their delivery attempts."),
        ],
        options: [
            sinceOption, untilOption, typeOption, subtypeOption, transactionOption, onlyFailuresOption, gapReportOption,
            CommandTree.applyOption.with(
                help: "Replay the notifications never applied, through the engine; print the gap report."),
            CommandTree.dryRun,
        ],
        handler: runHistory)

    /// `test-status TOKEN`.
    static let tokenArgument = Argument<String>("token", help: "The testNotificationToken 'notifications test' printed.")

    /// `history --since TIME`.
    static let sinceOption = Option<PointInTime>(
        "since", valueName: "time",
        help: "The window's start (within the last 180 days): ISO-8601, ms, or back from now (36h, 7d).", )

    /// `history --until TIME`.
    static let untilOption = Option<PointInTime?>(
        "until", valueName: "time", help: "The window's end: ISO-8601, ms, or back from now.",
        defaultDescription: "now")

    /// `history --type TYPE`.
    static let typeOption = Option<String?>("type", valueName: "type", help: "Only this notificationType (e.g. DID_RENEW).")

    /// `history --subtype SUBTYPE`.
    static let subtypeOption = Option<String?>("subtype", valueName: "subtype", help: "With --type: only this subtype.")

    /// `history --transaction ID`.
    static let transactionOption = Option<String?>(
        "transaction", valueName: "id", help: "Only the notifications of this customer's transactions (not with --type).")

    /// `history --only-failures`.
    static let onlyFailuresOption = OptionSpec.flag(
        "only-failures", help: "Only notifications Apple could not deliver.")

    /// `history --gap-report` (a flag here; `notify --gap-report FILE` reads a saved history).
    static let gapReportOption = OptionSpec.flag(
        "gap-report", help: "Compare with the ledger: list the notifications never applied.")

    static let test = CommandSpec(
        name: "test",
        abstract: "Request a Test Notification: Apple sends a TEST notification to your server URL.",
        discussion: "Prints the testNotificationToken; pass it to 'apple notifications test-status'.",
        examples: [CommandExample("iapctl apple notifications test --environment sandbox", "Ping the Sandbox URL.")],
        handler: runTest)

    static let testStatus = CommandSpec(
        name: "test-status",
        abstract: "Get Test Notification Status: the TEST notification and Apple's attempts to deliver it.",
        examples: [
            CommandExample(
                "iapctl apple notifications test-status ce3af791-365e-4c60-841b-1674b43c1609 -o table",
                "Whether it arrived.")
        ],
        arguments: [tokenArgument],
        handler: runTestStatus)

    /// The server a non-transaction endpoint asks: auto means Production.
    static func server(_ session: AppleSession) -> APIServer { session.environment.singleServer }

    static func runHistory(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let start = invocation[sinceOption].milliseconds
        let end = invocation[untilOption]?.milliseconds ?? now
        try NotificationHistoryQuery.checkWindow(start: start, end: end, now: now)
        let apply = invocation.flag(CommandTree.applyOption)
        let gapReport = invocation.flag(gapReportOption) || apply
        if invocation.flag(CommandTree.dryRun) && !apply { throw CLIError.usage("--dry-run goes with --apply") }
        let filter = try NotificationHistoryQuery.filter(
            type: invocation[typeOption], subtype: invocation[subtypeOption], transaction: invocation[transactionOption])
        let query = NotificationHistoryQuery(
            start: start, end: end, filter: filter, onlyFailures: invocation.flag(onlyFailuresOption))

        let session = try AppleSession(invocation)
        let server = server(session)
        let pages = try session.explaining { () throws(AppStoreAPIError) in
            try session.api.walkNotificationHistory(body: query.body, server) { pages, items in
                session.progress("notification history: page \(pages), \(items) notifications")
            }
        }
        session.endProgress()
        var items: [GapReport.Item] = []
        for page in pages {
            items += try GapReport.entries(in: page, name: "Apple's notification history")
        }
        invocation.note("notification history: \(items.count) notification(s) in \(pages.count) page(s) from \(server.rawValue)")
        if gapReport {
            guard !items.isEmpty else { return .success }
            return try GapReport.report(
                items, source: "Apple's \(server.rawValue) history", verifier: try session.verifier(for: server),
                apply: apply, command: "apple notifications history --apply", invocation)
        }
        if session.printsSignedItems {
            for item in items { invocation.print(item.jws) }
            return .success
        }
        let reports = try session.verified(items.map(\.jws), as: .notification, from: server, what: "notification history")
        invocation.emit(
            zip(items, reports).map { record($0.0, $0.1, structured: invocation.output.isStructured) },
            columns: columns)
        return .success
    }

    static let columns: [Column] = [
        Column("notification_uuid", title: "NOTIFICATION"), Column("notification_type", title: "TYPE"),
        Column("subtype", title: "SUBTYPE"), Column("signed_date", title: "SIGNED"),
        Column("transaction_id", title: "TRANSACTION"), Column("attempts", title: "ATTEMPTS"),
        Column("last_attempt_result", title: "LAST_RESULT"),
    ]

    static func record(_ item: GapReport.Item, _ report: VerificationReport, structured: Bool) -> Record {
        var r = Record()
        let notification = report.notification
        r.append("notification_uuid", notification?.notificationUUID)
        r.append("notification_type", notification?.notificationType?.rawValue)
        r.append("subtype", notification?.subtype?.rawValue)
        r.append("signed_date", notification?.signedDate)
        let transaction = report.nestedReport("signedTransactionInfo")?.transaction
        r.append("transaction_id", transaction?.transactionId)
        r.append("original_transaction_id", transaction?.originalTransactionId)
        r.append("attempts", item.attempts.count)
        r.append("last_attempt_result", item.attempts.last?.result)
        r.append("last_attempt_date", item.attempts.last?.date)
        if structured {
            r.append("send_attempts", GapReport.sendAttempts(item.attempts))
            r.append("payload", report.payload ?? .null)
        }
        return r
    }

    static func runTest(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.requestTestNotification()
        let answer = try session.explaining { () throws(AppStoreAPIError) in try session.api.send(call, to: server(session)) }
        let token = try AppStoreServerAPI.requiredString(answer, "testNotificationToken", call: call)
        if session.printsSignedItems || invocation.output == .table {
            invocation.print(token)
        } else {
            invocation.emit([["test_notification_token": .string(token), "environment": .string(answer.server.rawValue)]])
        }
        invocation.note(
            "Apple is sending a TEST notification (\(answer.server.rawValue)); check it with "
                + "'iapctl apple notifications test-status \(token)'")
        return .success
    }

    static func runTestStatus(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.testNotificationStatus(invocation[tokenArgument])
        let answer = try session.explaining { () throws(AppStoreAPIError) in try session.api.send(call, to: server(session)) }
        _ = try AppStoreServerAPI.requiredString(answer, "signedPayload", call: call)
        let items = try GapReport.entries(
            in: .object([("notificationHistory", .array([answer.json ?? .null]))]), name: call.path)
        if session.printsSignedItems {
            invocation.print(items[0].jws)
        } else {
            let reports = try session.verified([items[0].jws], as: .notification, from: answer.server, what: "test notification")
            invocation.emit([record(items[0], reports[0], structured: invocation.output.isStructured)], columns: columns)
        }
        let delivered = TestNotification.delivered(lastAttemptResult: items[0].attempts.last?.result)
        invocation.note(delivered ? "delivered" : "not delivered (last attempt: \(items[0].attempts.last?.result ?? "none yet"))")
        return delivered ? .success : .failure
    }
}

extension NotificationHistoryQuery.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .startNotBeforeEnd: .usage("--since must be before --until")
        case .startBeyondRetention:
            .usage("--since is more than 180 days ago", hint: "Apple keeps notification history for 180 days")
        case .typeAndTransaction:
            .usage("--type and --transaction exclude each other (Apple filters by one or the other)")
        case .subtypeWithoutType: .usage("--subtype goes with --type")
        }
    }
}
