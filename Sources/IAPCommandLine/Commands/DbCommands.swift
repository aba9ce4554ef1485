import IAPFoundation
import IAPOperations
import StoreAccess
import SubscriptionEngine

/// `iapctl db init` and `iapctl db status`: `StoreAccess` plans, runs and inspects; this prints.
enum DbCommands {
    /// Creates (mode 0600) or migrates the schema; idempotent. `--dry-run` lists what it would do
    /// (on MySQL as a SQL script: the statements it would run).
    static func initialize(_ invocation: Invocation) throws -> ExitCode {
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
            return emit(planRecord(plan, result), invocation: invocation) { planLines(plan, name: name) }
        }
        let outcome = try DatabaseInit.run(opener, actor: invocation.actor)
        result.append("action", words(outcome.action))
        result.append("schema_version", outcome.current)
        result.append("migrations", .array(outcome.applied.map(JSONValue.string)))
        if let added = outcome.added { result.append("added", .array(added.map(JSONValue.string))) }
        if let rebuilt = outcome.rebuilt { result.append("facts_rebuilt", rebuilt.factsAdded) }
        return emit(result, invocation: invocation, report: true) {
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

    /// Where the database is, its schema version and the row count of each table; on MySQL also
    /// the server version and what the schema lacks (`missing`).
    static func status(_ invocation: Invocation) throws -> ExitCode {
        let store = try DbOpen.existing(invocation, readOnly: true)
        let status: DatabaseStatus
        do {
            status = try DatabaseStatus.inspect(store)
        } catch let error as NewerSchema {
            throw DbOpen.newer(error, invocation)
        }
        var r = Record()
        r.append("database", DbOpen.display(invocation))
        r.append("backend", status.backend.rawValue)
        if let server = status.serverVersion { r.append("server_version", server) }
        r.append("schema_version", status.current)
        r.append("supported_version", status.supported)
        if let missing = status.missing { r.append("missing", list(missing, separator: ", ", invocation)) }
        if let incompatible = status.incompatible {
            r.append("incompatible", list(incompatible, separator: "; ", invocation))
            for item in incompatible { invocation.warn(item) }
        }
        if let counts = try status.counts(in: store) {
            r.append("orders", counts.orders)
            r.append("contracts", counts.contracts)
            r.append("ledger", counts.ledger)
            r.append("unmatched", counts.unmatched)
            r.append("audit", counts.audit)
        } else {
            let raw = ShellWord.word(URLSecrets.redacted(DbOpen.raw(invocation)))
            invocation.warn(
                status.current == 0
                    ? "\(DbOpen.display(invocation)) has no iapctl schema; create it with: iapctl db init --db \(raw)"
                    : "schema v\(status.current) is older than this iapctl's (v\(status.supported)); migrate with: "
                        + "iapctl db init --db \(raw)"
                        + (status.rebuildFacts
                            ? " (it also rebuilds the engine's facts from the ledger and re-derives every row)" : ""))
        }
        invocation.emit(document: r)
        return .success
    }

    /// A list as one text in a table, an array in other formats.
    private static func list(_ items: [String], separator: String, _ invocation: Invocation) -> JSONValue {
        invocation.output == .table
            ? .string(items.isEmpty ? "nothing" : items.joined(separator: separator))
            : .array(items.map(JSONValue.string))
    }

    /// Table mode: the given lines; other formats: the record.
    /// `report` (what `db init` did) goes to stderr like any note: stdout is for data (plans, status).
    private static func emit(
        _ record: Record, invocation: Invocation, report: Bool = false, lines: () -> [String]
    ) -> ExitCode {
        if invocation.output == .table {
            for line in lines() {
                if report { invocation.note(line) } else { invocation.print(line) }
            }
        } else {
            invocation.emit(document: record)
        }
        return .success
    }
}
