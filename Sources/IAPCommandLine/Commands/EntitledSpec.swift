// The specification of `iapctl entitled`: entitlement queries.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let entitled = CommandSpec(
        name: "entitled",
        abstract: "Say whether a user was entitled at a time: yes (exit 0) or no (exit 1), with the contract and why.",
        discussion: """
            Reconstructs each of the user's subscriptions at --at (default now) from the audit \
            trail, dating the engine's changes by Apple's signedDate and manual changes (corrections, \
            transfers) by when they were made: a refund signed later still counts as paid then; a \
            transfer made later still counts as the old owner's. Entitled means: the user held the \
            contract then, and a paid, not-refunded period covered that moment, or the contract \
            was in its billing grace period. A user with no orders and no contracts in the \
            database (a typo, another database) is not a "no": it is "unknown user", exit 3.
            """,
        examples: [
            CommandExample(
                "iapctl entitled --user u42 --at 2025-03-14T09:30:00Z", "Was u42 entitled when they complained?"),
            CommandExample("iapctl entitled --user u42 --product com.example.pro.monthly -o json", "Now, as JSON."),
        ],
        options: [
            userOption("The user (your account id).", required: true),
            EntitledSpec.product, EntitledSpec.at,
        ],
        handler: EntitledCommand.run
    )
}

/// The options only `entitled` has; its handler reads them by these values.
enum EntitledSpec {
    /// `--product ID`.
    static let product = OptionSpec("product", valueName: "product", help: "Only this product id.")

    /// `--at TIME`.
    static let at = OptionSpec(
        "at", valueName: "time", help: "The moment to answer for: \(CommandTree.timeForms).", defaultValue: "now")
}
