import AppStoreAPI
import AppStoreJWS

/// `iapctl apple notifications history`: Get Notification History over a time window, all pages; with
/// `--gap-report` or `--apply`, what the ledger never applied.
enum AppleNotificationsHistory {
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
    static let transactionOption = Option<AppleTransactionId?>(
        "transaction", valueName: "id", help: "Only the notifications of this customer's transactions (not with --type).")

    /// `history --only-failures`.
    static let onlyFailuresOption = OptionSpec.flag(
        "only-failures", help: "Only notifications Apple could not deliver.")

    /// `history --gap-report` (a flag here; `notify --gap-report FILE` reads a saved history).
    static let gapReportOption = OptionSpec.flag(
        "gap-report", help: "Compare with the ledger: list the notifications never applied.")

    static let command = CommandSpec(
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
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let start = invocation[sinceOption].at(now)
        let end = invocation[untilOption]?.at(now) ?? now
        try NotificationHistoryQuery.checkWindow(start: start, end: end, now: now)
        let apply = invocation.flag(CommandTree.applyOption)
        let gapReport = invocation.flag(gapReportOption) || apply
        if invocation.flag(CommandTree.dryRun) && !apply { throw CLIError.usage("--dry-run goes with --apply") }
        let filter = try NotificationHistoryQuery.filter(
            type: invocation[typeOption], subtype: invocation[subtypeOption], transaction: invocation[transactionOption]?.text)
        let query = NotificationHistoryQuery(
            start: start, end: end, filter: filter, onlyFailures: invocation.flag(onlyFailuresOption))

        let session = try AppleSession(invocation)
        let server = AppleNotifications.server(session)
        // Each page's notifications are kept, the page itself let go as the next arrives.
        var items: [GapReport.Item] = []
        var pages = 0
        do {
            try session.api.forEachNotificationHistoryPage(body: query.body, server) { page, number, restarted in
                if restarted { items = [] }
                items += try GapReport.entries(in: page, name: "Apple's notification history")
                pages = number
                session.progress("notification history: page \(number), \(items.count) notifications")
            }
        } catch let error as AppStoreAPIError {
            session.endProgress()
            throw session.explained(error, sandboxTried: session.environment.mayHaveAskedSandbox(followsEnvironment: false))
        }
        session.endProgress()
        invocation.note("notification history: \(items.count) notification(s) in \(pages) page(s) from \(server.rawValue)")
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
            zip(items, reports).map { AppleNotifications.record($0.0, $0.1, structured: invocation.output.isStructured) },
            columns: AppleNotifications.columns)
        return .success
    }

}
