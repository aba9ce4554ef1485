import AppStoreJWS
import IAPOperations
import SubscriptionEngine

/// `iapctl audit list|show`: the audit trail of every change, manual or by the engine.
enum AuditCommands {
    /// Audit rows newest first, filtered by actor, time and ticket.
    static func list(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let limit = invocation.parsed.value(CommandTree.limitOption).flatMap { Int($0) }
        let user = invocation.parsed.value(CommandTree.userOption)
        let order = invocation.parsed.value(AuditSpec.order)
        let contract = invocation.parsed.value(AuditSpec.contract)
        let command = invocation.parsed.value(AuditSpec.command)
        let filter = AuditFilter(
            // On this command --actor filters (command line only: IAPCTL_ACTOR is who *runs* iapctl).
            actor: invocation.parsed.value(CommandTree.actorOption),
            since: try AuditTime.option(invocation, AuditSpec.since, now: now),
            ticket: invocation.parsed.value(CommandTree.ticketOption))
        let narrowing = AuditQuery.Narrowing(user: user, order: order, contract: contract, command: command)
        let entries = try DbOpen.read(invocation) { session in
            try AuditQuery.entries(filter, narrowing: narrowing, limit: limit, in: session)
        }
        let structured = invocation.output == .json || invocation.output == .ndjson
        invocation.emit(entries.map { record($0, structured: structured) }, columns: invocation.output == .table ? columns : nil)
        if entries.isEmpty, invocation.output == .table { invocation.note("no audit rows") }
        return .success
    }

    /// The table columns of `audit list`.
    static let columns: [Column] = [
        Column("id", title: "ID"), Column("changed_at", title: "WHEN"), Column("actor", title: "ACTOR"),
        Column("command", title: "COMMAND", maxWidth: 24), Column("reason", title: "REASON", maxWidth: 32),
        Column("ticket", title: "TICKET"), Column("entity", title: "ENTITY"), Column("key", title: "ROW"),
        Column("changes", title: "CHANGES", maxWidth: 80),
    ]

    /// An audit row with its id first.
    static func record(_ entry: AuditEntry, structured: Bool) -> Record {
        RowRendering.record(entry, structured: structured)
    }

    /// One audit row: who, when, why, the field changes, and the row before and after.
    static func show(_ invocation: Invocation) throws -> ExitCode {
        let id = try auditId(invocation, AuditSpec.showId)
        guard let entry = try DbOpen.read(invocation, { try $0.auditEntry(id: id) }) else {
            throw CLIError(.notFound, "no audit row \(id)", hint: "list them with: iapctl audit list")
        }
        var head = Record()
        head.append("id", entry.id)
        head.append("changed_at", entry.at)
        head.append("actor", entry.actor)
        head.append("command", entry.command)
        head.append("reason", entry.reason)
        head.append("ticket", entry.ticket)
        head.append("entity", entry.entity.rawValue)
        head.append("key", entry.key)
        head.append("ledger_id", entry.ledgerId)
        head.append("undo", undoHint(entry))
        let changes: [Record] = RowRendering.auditChanges(entry).map { change in
            var r = Record()
            r.append("field", change.column)
            r.append("before", change.before)
            r.append("after", change.after)
            return r
        }
        invocation.emit(
            detail: DetailView(sections: [
                DetailView.Section(key: "audit", title: "Audit row \(entry.id)", content: .fields(head)),
                DetailView.Section(
                    key: "changes", title: "Changes (\(changes.count))",
                    content: .table(
                        changes,
                        columns: [Column("field", title: "FIELD"), Column("before", title: "BEFORE"), Column("after", title: "AFTER")])),
                DetailView.Section(key: "before", title: "Before", content: .fields(rowRecord(entry.before))),
                DetailView.Section(key: "after", title: "After", content: .fields(rowRecord(entry.after))),
            ]))
        return .success
    }

    /// One ledger item's raw text, exactly as received (issue 17: the ledger stores it packed).
    static func raw(_ invocation: Invocation) throws -> ExitCode {
        let id = try auditId(invocation, AuditSpec.rawId, what: "ledger item")
        let found = try DbOpen.read(invocation) { session throws -> LedgerEntry? in
            guard let entry = try session.ledgerEntry(id: id) else { return nil }
            // The later entries of one app receipt point to the row that keeps it (ReceiptMapping).
            if let kept = ReceiptMapping.referencedLedgerId(entry.raw) { return try session.ledgerEntry(id: kept) }
            return entry
        }
        guard let entry = found else {
            throw CLIError(
                .notFound, "no ledger item \(id)",
                hint: "ledger ids are the ledger_id of: iapctl audit show, iapctl contracts explain")
        }
        // On a terminal, what it would act on (controls, bidi overrides) is shown escaped, newlines kept.
        invocation.stdout.write(invocation.isStdoutTTY ? TerminalText.escape(entry.raw, keepNewlines: true) : entry.raw)
        return .success
    }

    /// `iapctl audit undo N …` for rows that can be undone; nil for inserts.
    static func undoHint(_ entry: AuditEntry) -> String? {
        guard entry.before != nil else { return nil }
        return "iapctl audit undo \(entry.id) --reason '…'"
    }

    /// A stored row (``AuditRows/columns(_:)``) as a record (dates shown as dates).
    static func rowRecord(_ json: String?) -> Record {
        Record(AuditRows.columns(json).map { (key: $0.column, value: $0.value) })
    }

    /// The `<id>` argument as a positive integer (`#12` accepted).
    static func auditId(_ invocation: Invocation, _ argument: ArgumentSpec, what: String = "audit") throws(CLIError)
        -> Int64
    {
        guard var raw = invocation.parsed.argument(argument) else { throw CLIError.usage("missing argument <id>") }
        if raw.hasPrefix("#") { raw.removeFirst() }
        guard let id = Int64(raw), id > 0 else {
            throw CLIError.usage(
                "\(what) id '\(raw)' is not a number",
                hint: what == "audit" ? "the ID column of: iapctl audit list" : "the ledger_id of: iapctl audit show")
        }
        return id
    }
}
