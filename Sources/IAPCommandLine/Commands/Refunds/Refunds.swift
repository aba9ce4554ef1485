// `iapctl refunds list|answer|consents`: the refund-request desk. Each subcommand's spec, options and
// handler are in its own file beside this one.
//
// A group of its own, not under `apple`: `list` and `consents` read only the database (no API key),
// like `doctor`; `answer` composes the request from the database and takes the `apple` options to
// send it. (`apple refunds` is Apple's refund history of a customer, read from Apple.)
extension CommandTree {
    static let refunds = CommandSpec(
        name: "refunds",
        abstract: "The refund-request desk: Apple's CONSUMPTION_REQUESTs, their deadlines, answers and outcomes.",
        discussion: """
            When a customer asks Apple for a refund, Apple sends CONSUMPTION_REQUEST and waits 12 hours \
            for your Consumption Information. 'notify' keeps each request in the ledger; 'refunds list' \
            shows them, oldest deadline first, with the answer sent (the audit row) and what Apple decided \
            later (REFUND or REFUND_DECLINED) and the policy rule that answered; 'refunds answer' composes \
            the answer from the database by Apple's rules and sends it with --apply, once per request; \
            'refunds answer --all --policy FILE' answers every open request by first-match rules (a cron \
            job); 'doctor' warns of a request with less than 3 hours left. 'refunds \
            consents' lists the RESCIND_CONSENT notifications to act on.
            """,
        examples: [
            CommandExample("iapctl refunds list --open", "The requests still to answer, the most urgent first."),
            CommandExample(
                "iapctl refunds answer 2000000123456789", "Show the answer composed from the database (sends nothing)."),
            CommandExample(
                "iapctl refunds answer --all --policy refund-policy.json", "What the policy would answer (sends nothing)."),
        ],
        subcommands: [RefundsList.command, RefundsAnswer.command, RefundsConsents.command]
    )
}
