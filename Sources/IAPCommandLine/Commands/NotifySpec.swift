// The specification of `iapctl notify`: App Store Server Notifications V2.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let notify = CommandSpec(
        name: "notify",
        abstract: "Apply App Store Server Notifications V2.",
        discussion: """
            Reads a raw JWS, a webhook body {"signedPayload": "…"}, or many of either one per line, \
            from FILE or stdin. Each is verified (signature, certificate chain, bundle id, app id, \
            environment), kept in the ledger, and applied through the subscription engine.

            Each item gets a verdict: applied, duplicate, stale, ignored, unmatched or rejected. \
            A single item exits with its code; a batch exits 0, or 1 if some item failed.
            """,
        examples: [
            CommandExample(
                "iapctl notify body.json --bundle-id com.example.app --app-apple-id 1234567890",
                "Apply one webhook body."),
            CommandExample(
                "iapctl notify --environment Sandbox -o ndjson < notifications.ndjson",
                "Apply many Sandbox notifications; one result object per line."),
            CommandExample("iapctl notify --replay-unmatched", "Retry unmatched notifications after creating orders."),
            CommandExample(
                "iapctl notify --gap-report history.json --apply", "Apply what Apple sent but never reached us."),
        ],
        options: [
            dryRun, NotifySpec.atomic, NotifySpec.replayUnmatched, NotifySpec.gapReport,
            applyOption.with(help: "With --gap-report: replay exactly the missing notifications."),
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handler: NotifyCommand.run
    )
}

/// The options only `notify` has; its handlers read them by these values.
enum NotifySpec {
    /// `--atomic`.
    static let atomic = OptionSpec.flag(
        "atomic", help: "Apply the whole batch in one transaction: all items or none.")

    /// `--replay-unmatched`.
    static let replayUnmatched = OptionSpec.flag(
        "replay-unmatched", help: "Apply again the notifications kept as unmatched in the ledger.")

    /// `--gap-report FILE`.
    static let gapReport = OptionSpec(
        "gap-report", valueName: "file",
        help: "Report the notifications in these saved Get Notification History responses that the "
            + "ledger never applied, with Apple's send attempts (exit 1 when some are missing).",
        completion: .file)
}
