import IAPFoundation
import IAPOperations
import StoreAccess
import SubscriptionEngine
import SubscriptionModel

/// `iapctl db init`: `StoreAccess` plans and runs the migrations; this prints.
enum DbInit {
    static let command = CommandSpec(
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
        options: [CommandTree.dryRun.with(help: "List the migrations that would run; run none.")],
        handler: run)

    /// Creates (mode 0600) or migrates the schema; idempotent. `--dry-run` lists what it would do
    /// (on MySQL as a SQL script: the statements it would run).
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let name = DbOpen.display(invocation)
        let location = try DbOpen.location(DbOpen.raw(invocation))
        let opener = try DbOpen.opener(invocation, location)
        var result = Record()
        result.append("database", name)
        if invocation.flag(CommandTree.dryRun) {
            let plan: SchemaPlan
            do {
                plan = try DatabaseInit.plan(opener)
            } catch let error as NewerSchema {
                throw DbOpen.newer(error, invocation)
            }
            return DbOutput.emit(planRecord(plan, result), invocation: invocation) { planLines(plan, name: name) }
        }
        let outcome = try DatabaseInit.run(opener, actor: invocation.actor)
        result.append("action", words(outcome.action))
        result.append("schema_version", outcome.current)
        result.append("migrations", .array(outcome.applied.map(JSONValue.string)))
        if let added = outcome.added { result.append("added", .array(added.map(JSONValue.string))) }
        if let rebuilt = outcome.rebuilt { result.append("facts_rebuilt", rebuilt.factsAdded) }
        return DbOutput.emit(result, invocation: invocation, report: true) {
            initLines(outcome, name: name) + (outcome.rebuilt.map { [$0.line] } ?? [])
        }
    }

    /// The `--dry-run` record: a new database gets every migration (and on MySQL its `CREATE DATABASE`).
    private static func planRecord(_ plan: SchemaPlan, _ record: Record) -> Record {
        var result = record
        switch plan.action {
        case .create:
            result.append("action", "would create")
            result.append("schema_version", plan.supported)
        case .migrate, .upToDate:
            result.append("action", plan.action == .upToDate ? "up to date" : "would migrate")
            result.append("schema_version", plan.current)
            result.append("supported_version", plan.supported)
        }
        result.append("migrations", .array(plan.pending.map(JSONValue.string)))
        if let statements = plan.statements { result.append("statements", .array(statements.map(JSONValue.string))) }
        if plan.rebuildFacts { result.append("rebuild_facts", true) }
        return result
    }

    /// The `--dry-run` lines; on MySQL a SQL script (the header is comments, each statement ends with ';').
    private static func planLines(_ plan: SchemaPlan, name: String) -> [String] {
        let sql = plan.statements != nil
        let comment = sql ? "-- " : ""
        switch plan.action {
        case .upToDate:
            return ["\(name) is up to date (schema v\(plan.current)); nothing to do"]
        case .create:
            let header = ["\(comment)would create \(name) (schema v\(plan.supported)), applying:"]
            guard let statements = plan.statements else { return header + plan.pending.map { "  \($0)" } }
            return header + plan.pending.map { "--   \($0)" } + statements.map { "\($0);" }
                + ["-- then every table of the schema is created in it"]
        case .migrate:
            return ["\(comment)would migrate \(name) from schema v\(plan.current) to v\(plan.supported), applying:"]
                + plan.pending.map { "\(sql ? "--   " : "  ")\($0)" } + (plan.statements ?? []).map { "\($0);" }
                + (plan.rebuildFacts ? ["\(sql ? "-- " : "  ")" + FactRebuild.plan] : [])
        }
    }

    /// The action's words in the record.
    private static func words(_ action: InitOutcome.Action) -> String {
        switch action {
        case .created: "created"
        case .migrated: "migrated"
        case .upToDate: "up to date"
        }
    }

    /// What `db init` says it did, on either backend (`added`: schema items added to an existing database).
    static func initLines(_ outcome: InitOutcome, name: String) -> [String] {
        switch outcome.action {
        case .created: return ["created \(name) (schema v\(outcome.current))"]
        case .upToDate: return ["\(name) is up to date (schema v\(outcome.current))"]
        case .migrated:
            return ["migrated \(name) from schema v\(outcome.before) to v\(outcome.current):"]
                + outcome.applied.map { "  \($0)" } + (outcome.added ?? []).map { "  added \($0)" }
        }
    }
}
