import AppStoreAPI
import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl apple notifications sync`: Notification History since the last run (a checkpoint in the
/// database), applied through the engine as Apple's word; the job a cron runs every few minutes.
enum AppleNotificationSync {
    static let command = CommandSpec(
        name: "sync",
        abstract: "Apply Notification History since the last run (a checkpoint in the database); for cron.",
        discussion: """
            Reads Get Notification History from where the last run stopped, verifies each notification \
            and applies it through the engine exactly as 'iapctl notify' does: one the ledger already \
            processed (the webhook delivered it, or an earlier run) is a duplicate and changes nothing, \
            one that fails verification is kept in the ledger as rejected. Each page is applied in one \
            transaction that also moves the checkpoint (named notification-history:Production, or \
            :Sandbox), so a run killed at any moment resumes where its committed work ends: no gap, \
            nothing applied twice.

            Each run reads from the checkpoint less 10 minutes (notifications Apple records late are \
            not missed; those read again are recognised) up to 1 minute ago. A first run reads the last \
            day, or from --since; --since also starts over from a given time. Apple keeps 180 days: a \
            checkpoint older than that is refused (start over with --since). --status prints the \
            checkpoint, --reset deletes it; --dry-run shows what would be applied and moves nothing. \
            With --environment auto, Production is read. The audit rows carry --reason and --ticket when \
            given.

            A run keeps one page at a time (a dry run keeps the notifications of the whole window, at \
            most 64 MiB). A page whose paginationToken repeats an earlier one stops the run before it is \
            applied (exit 65, naming the token and the page); so do more than --max-pages pages (exit \
            65) and a walk longer than --walk-deadline in all (exit 69). The pages before stay \
            committed and the error says where the checkpoint is.

            Exit 0 when every notification was applied, a duplicate or ignored; 1 when some are \
            unmatched (kept for 'iapctl notify --replay-unmatched'); 2 when some failed verification \
            (kept in the ledger as rejected); 69, 75 and 78 when Apple, its rate limit or the key say \
            so: the next run resumes from the checkpoint.
            """,
        examples: [
            CommandExample(
                "iapctl apple notifications sync --since 7d --environment Production",
                "First run: apply the last week, then keep up from there."),
            CommandExample(
                "*/5 * * * * iapctl apple notifications sync -q -o ndjson --config /etc/iapctl/iapctl.json >> /var/log/iapctl-sync.ndjson",
                "A crontab line: every 5 minutes, quiet unless something failed; the database, key and app in the config file."),
            CommandExample(
                "iapctl apple notifications sync --status", "Where the next run starts."),
            CommandExample(
                "iapctl apple notifications sync --dry-run -o table", "What the next run would apply; nothing moves."),
        ],
        options: [
            sinceOption, statusOption, resetOption, CommandTree.engineReasonOption, CommandTree.ticketOption, CommandTree.dryRun,
        ],
        handler: run)

    /// `sync --since TIME`.
    static let sinceOption = Option<PointInTime?>(
        "since", valueName: "time",
        help: "Start from this time instead of the checkpoint (a first run, or starting over): ISO-8601, ms, "
            + "or back from now (36h, 7d); within the last 180 days.",
        defaultDescription: "the checkpoint; on a first run 1 day back")

    /// `sync --status`.
    static let statusOption = OptionSpec.flag(
        "status", help: "Print the checkpoint and where the next run starts; ask Apple nothing.")

    /// `sync --reset`.
    static let resetOption = OptionSpec.flag(
        "reset", help: "Delete the checkpoint (the next run reads the last day, or from --since); ask Apple nothing.")

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let status = invocation.flag(statusOption), reset = invocation.flag(resetOption)
        let dryRun = invocation.flag(CommandTree.dryRun)
        if status && reset { throw CLIError.usage("--status and --reset exclude each other") }
        if (status || reset) && (dryRun || invocation[sinceOption] != nil) {
            throw CLIError.usage(
                "--\(status ? "status" : "reset") reads or deletes the checkpoint only; it takes no --since or --dry-run")
        }
        let server = invocation[AppleCommands.environmentOption].singleServer
        let name = NotificationSync.checkpointName(server)
        if status { return try printStatus(invocation, name: name) }
        if reset { return try delete(invocation, name: name) }
        return try sync(invocation, server: server, name: name, dryRun: dryRun)
    }

    static func sync(_ invocation: Invocation, server: APIServer, name: String, dryRun: Bool) throws -> ExitCode {
        let now = Timestamp.now()
        let since = invocation[sinceOption]?.at(now)
        let store = try DbOpen.existing(invocation)
        let window = try NotificationSync.window(saved: try NotificationSync.saved(name, in: store), since: since, now: now)
        let session = try AppleSession(invocation)
        let verifier = try session.verifier(for: server)
        let roots = try TrustSetup.roots(invocation, option: AppleCommands.rootCAOption)
        Interrupt.install()
        let run = NotificationSyncRun(
            store: store, verifier: verifier, checkpoint: name,
            context: try Corrections.engineContext(invocation, command: "apple notifications sync"), dryRun: dryRun,
            shouldStop: { Interrupt.isRequested }, limits: session.api.walkLimits)
        if window.origin == .firstRun {
            invocation.note("no checkpoint \(name) yet: reading the last \(NotificationSync.firstRunDays) day (--since to choose)")
        }
        let printer = BatchPrinter(invocation, columns: NotifyCommand.columns)
        var committed = 0, pages = 0
        let summary: NotificationSync.Summary
        do {
            summary = try run.run(
                window,
                fetch: { body, token in
                    var call = Endpoint.notificationHistory(body: body)
                    if let token { call.query = [("paginationToken", token)] }
                    let answer = try session.explaining { () throws(AppStoreAPIError) in
                        try session.api.send(call, to: server, within: run.walk)
                    }
                    pages += 1
                    session.progress("notification history: page \(pages); \(printer.count) notifications done")
                    return answer.json ?? .null
                },
                page: { items in
                    for item in items {
                        var report = ItemReport(line: item.line, item.result) { $0.hint(roots: roots) }
                        report.dryRun = dryRun
                        printer.add(report)
                    }
                    if !dryRun { committed += items.count }
                    try? invocation.stdout.flush()
                })
        } catch var error as AppStoreAPIError where !Interrupt.isRequested {
            session.endProgress()
            // Where the next run starts: the checkpoint the last committed page saved.
            error.message +=
                dryRun
                ? "; dry run: nothing was written"
                : "; checkpoint \(name) "
                    + (run.saved.map { "now " + Timestamp.iso8601($0.through) }
                        ?? window.resumed.map { "stays at " + Timestamp.iso8601($0.through) } ?? "not saved yet")
            return try printer.stopped(
                by: error, command: "apple notifications sync", committed: committed,
                final: "those reported above are committed with the checkpoint", rerun: "the next run resumes from there")
        } catch {
            session.endProgress()
            return try printer.stopped(
                by: error, command: "apple notifications sync", committed: committed,
                final: "those reported above are committed with the checkpoint", rerun: "the next run resumes from there")
        }
        session.endProgress()
        let note = note(window, summary, server: server, dryRun: dryRun)
        guard printer.count > 0 else {
            return printer.finish(summary: "apple notifications sync: 0 items; " + note, status: .success)
        }
        // Whatever the number of items: 2 when some failed verification, else 1 when some failed.
        let rejected = (printer.counts[Verdict.rejected.rawValue] ?? 0) > 0
        let code: ExitCode = rejected ? .verificationFailed : printer.exitCode == .success ? .success : .failure
        // Items Apple's own API sent that do not verify mostly mean trust options that do not fit the
        // app: the checkpoint moved on (the rest was applied), so say how to read them again.
        let again =
            rejected && !dryRun
            ? "; after fixing the trust options (--bundle-id, --app-apple-id, --root-ca) read this window again "
                + "with --since \(Timestamp.iso8601(window.start))" : ""
        return printer.finish(command: "apple notifications sync", extraNote: note + again, status: code)
    }

    /// What the summary line adds: the window read, and where the checkpoint is now.
    static func note(_ window: NotificationSync.Window, _ summary: NotificationSync.Summary, server: APIServer, dryRun: Bool) -> String {
        let read =
            "\(server.rawValue) history \(Timestamp.iso8601(window.start)) → \(Timestamp.iso8601(window.end)), "
            + "\(summary.pages) page\(summary.pages == 1 ? "" : "s")"
        if dryRun {
            return read + "; dry run: nothing was written, the checkpoint "
                + (window.resumed.map { "stays at " + Timestamp.iso8601($0.through) } ?? "is not saved")
        }
        return read + (summary.saved.map { "; checkpoint now " + Timestamp.iso8601($0.through) } ?? "")
    }

    static let statusColumns: [Column] = [
        Column("checkpoint", title: "CHECKPOINT"), Column("through", title: "THROUGH"),
        Column("updated_at", title: "SAVED"), Column("next_start", title: "NEXT_RUN_READS_FROM"),
    ]

    /// `--status`: the checkpoint, when it was saved, and where the next run starts.
    static func printStatus(_ invocation: Invocation, name: String) throws -> ExitCode {
        let store = try DbOpen.existing(invocation, readOnly: true)
        guard let checkpoint = try store.read({ try $0.checkpoint(named: name) }) else {
            invocation.emit([], columns: statusColumns)
            invocation.note(
                "no checkpoint \(name) yet: the next run reads the last \(NotificationSync.firstRunDays) day, or from --since")
            return .success
        }
        let position = try NotificationSync.Position(checkpoint)
        var r = Record()
        r.append("checkpoint", checkpoint.name)
        r.append("through", Timestamp.iso8601(position.through))
        r.append("updated_at", Timestamp.iso8601(checkpoint.updatedAt))
        r.append("next_start", Timestamp.iso8601(position.through - NotificationSync.overlap))
        invocation.emit([r], columns: statusColumns)
        return .success
    }

    /// `--reset`: deletes the checkpoint.
    static func delete(_ invocation: Invocation, name: String) throws -> ExitCode {
        let store = try DbOpen.existing(invocation)
        let deleted = try store.write { session -> Checkpoint? in
            let saved = try session.checkpoint(named: name)
            if saved != nil { _ = try session.deleteCheckpoint(named: name) }
            return saved
        }
        guard let deleted else {
            invocation.note("no checkpoint \(name) to delete")
            return .success
        }
        invocation.note(
            "checkpoint \(name) deleted (it was \(deleted.value)); the next run reads the last "
                + "\(NotificationSync.firstRunDays) day, or from --since")
        return .success
    }
}

extension NotificationSync.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .unreadableCheckpoint(let name, let value):
            CLIError(
                .dataError, "the checkpoint \(name) holds \(value), not a position this iapctl wrote",
                hint: "start over: iapctl apple notifications sync --since TIME (or --reset)")
        case .beyondRetention(let start, true):
            CLIError(
                .usage, "the checkpoint is older than the 180 days Apple keeps (the next run would read from \(Timestamp.iso8601(start)))",
                hint: "notifications before 180 days ago cannot be fetched; start over with --since 180d and check the "
                    + "subscriptions of that time with 'iapctl apple subscriptions'")
        case .beyondRetention(_, false):
            .usage("--since is more than 180 days ago", hint: "Apple keeps notification history for 180 days")
        case .startNotBeforeEnd(let start, let end, true):
            CLIError(
                .usage, "the checkpoint (\(Timestamp.iso8601(start + NotificationSync.overlap))) is ahead of this machine's clock",
                hint: "check the clock; to start over: --since TIME (the window ends at \(Timestamp.iso8601(end)))")
        case .startNotBeforeEnd(_, let end, false):
            .usage("--since must be before \(Timestamp.iso8601(end)) (a run reads up to 1 minute ago)")
        }
    }
}

extension NotificationSync.PageRefusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .response(let refusal): refusal.cliError(name: "Apple's notification history")
        case .dryRunTooLarge(let page):
            CLIError(
                .dataError,
                "apple notifications sync --dry-run: the notifications read by page \(page) pass the \(NotificationSync.maxDryRunBytes >> 20) MiB a dry run holds; stopped, nothing was written",
                hint: "dry-run a shorter window (--since a later time), or run without --dry-run (it keeps one page at a time)")
        }
    }
}
