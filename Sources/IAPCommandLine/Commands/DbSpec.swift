// The specification of `iapctl db init|status`: the database.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let db = CommandSpec(
        name: "db",
        abstract: "Create, migrate and inspect the database.",
        discussion: "The database is chosen with --db (or IAPCTL_DB, or 'db' in --config); by default iapctl.db "
            + "in the current folder.",
        examples: [
            CommandExample("iapctl db init", "Create iapctl.db here, or migrate it to the current schema."),
            CommandExample("iapctl db status -o json", "The schema version and row counts as JSON."),
        ],
        subcommands: [
            CommandSpec(
                name: "init",
                abstract: "Create the schema or migrate it to the current version (safe to run again).",
                discussion: "Applies the migrations the database has not seen yet, in order, each in its own "
                    + "transaction. Running it on an up-to-date database changes nothing.",
                examples: [
                    CommandExample("iapctl db init", "Create or migrate iapctl.db in the current folder."),
                    CommandExample(
                        "iapctl db init --db sqlite:/var/lib/iapctl/shop.db --dry-run",
                        "List the migrations that would run, without running them."),
                ],
                options: [dryRun.with(help: "List the migrations that would run; run none.")],
                handler: DbCommands.initialize),
            CommandSpec(
                name: "status",
                abstract: "Show the schema version and the number of rows in each table.",
                examples: [
                    CommandExample("iapctl db status", "Version and row counts as a table."),
                    CommandExample("iapctl db status -o json --db sqlite:shop.db", "The same for shop.db, as JSON."),
                ],
                handler: DbCommands.status),
        ]
    )
}
