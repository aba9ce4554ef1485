// The specification of `iapctl restore [--apply]`: restore questions.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let restore = CommandSpec(
        name: "restore",
        abstract: "Say which orders a device's restored transactions are, and whether they belong to a user.",
        discussion: """
            Reads the transactions (one JWS per line) a device restored for user U and reports \
            for each: which order or contract it is, how it matched (transactionId, \
            originalTransactionId, appAccountToken), and a verdict: restorable, owned-by-other, \
            transferred, unknown or rejected. A purchase is never credited to another account \
            unless --policy allows a transfer.

            A StoreKit 1 app receipt (base64, DER or {"receipt-data": "…"}) works too: after it \
            verifies, each of its in-app entries is answered like a transaction (a receipt has no \
            appAccountToken, so it matches by transactionId, originalTransactionId or the \
            product fallback). A receipt proves what was paid when it was signed, not renewals, \
            refunds or family sharing after that; with --apply it never revokes, expires or \
            reopens a state Apple set.
            """,
        examples: [
            CommandExample(
                "iapctl restore --user u42 restored.txt --bundle-id com.example.app",
                "Report only."),
            CommandExample(
                "iapctl restore --user u42 --apply --policy transfer-if-inactive --reason 'new phone' < restored.txt",
                "Apply, moving subscriptions whose owner has no active contract."),
        ],
        options: [
            userOption("The user the device belongs to.", required: true),
            applyOption.with(help: "Apply restorable transactions through the subscription engine."),
            RestoreSpec.policy,
            reasonOption.with(help: "Why, for the audit trail (needed for transfers).", isRequired: false),
            RestoreSpec.order,
            dryRun,
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handler: RestoreCommand.run
    )
}

/// The options only `restore` has; its handler reads them by these values.
enum RestoreSpec {
    /// `--policy POLICY`.
    static let policy = OptionSpec(
        "policy", valueName: "policy",
        help: "Transactions owned by another user: keep them there, transfer them, or transfer only "
            + "when the other user is not entitled now (a canceled contract inside its paid period is active).",
        allowedValues: CommandTree.restorePolicies, defaultValue: "keep")

    /// `--order NO`.
    static let order = OptionSpec("order", valueName: "no", help: "Only consider this order number.")
}
