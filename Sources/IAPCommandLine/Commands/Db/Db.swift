// `iapctl db`: the database. Each subcommand's spec, options and handler are in its own file beside
// this one (DbInit.swift, DbStatus.swift, DbRepair.swift).
extension CommandTree {
    static let db = CommandSpec(
        name: "db",
        abstract: "Create, migrate and inspect the database.",
        discussion: "The database is chosen with --db (or IAPCTL_DB, or 'db' in --config); by default iapctl.db "
            + "in the current folder.",
        examples: [
            CommandExample("iapctl db init", "Create iapctl.db here, or migrate it to the current schema."),
            CommandExample("iapctl db status -o json", "The schema version and row counts as JSON."),
            CommandExample("iapctl db repair --dry-run", "What of doctor's integrity findings iapctl can mend."),
        ],
        subcommands: [DbInit.command, DbStatus.command, DbRepair.command]
    )
}
