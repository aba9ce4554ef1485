import AppStoreJWS
import SubscriptionEngine

/// `iapctl audit list|show`: the audit trail of every change, manual or by the engine.
enum AuditCommands {
    /// Audit rows newest first, filtered by actor, time and ticket.
    static func list(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let limit = invocation.parsed.value("limit").flatMap { Int($0) }
        let user = invocation.parsed.value("user")
        let order = invocation.parsed.value("order")
        let contract = invocation.parsed.value("contract")
        let command = invocation.parsed.value("command")
        let narrowed = user != nil || order != nil || contract != nil || command != nil
        let filter = AuditFilter(
            // On this command --actor filters (command line only: IAPCTL_ACTOR is who *runs* iapctl).
            actor: invocation.parsed.value("actor"),
            since: try AuditTime.option(invocation, "since", now: now),
            ticket: invocation.parsed.value("ticket"),
            limit: narrowed ? nil : limit)
        let entries = try DbOpen.read(invocation) { session -> [AuditEntry] in
            var entries = try session.auditEntries(matching: filter)
            guard narrowed else { return entries }
            var keys: Set<String>?
            if let user {
                var owned = Set(try session.orders(matching: OrderFilter(userId: user)).map(\.no))
                owned.formUnion(try session.contracts(matching: ContractFilter(userId: user)).map(\.contractId))
                keys = owned
            }
            var orderNo: String?
            if let order { orderNo = try (session.order(no: order) ?? session.order(tradeNo: order))?.no ?? order }
            entries = entries.filter { entry in
                if let orderNo, entry.entity != .order || entry.key != orderNo { return false }
                if let contract, entry.entity != .contract || entry.key != contract { return false }
                if let command, !(entry.command == command || entry.command.hasPrefix(command + " ")) { return false }
                if let user, let keys, !keys.contains(entry.key), !Self.names(user, entry) { return false }
                return true
            }
            return limit.map { Array(entries.prefix($0)) } ?? entries
        }
        let structured = invocation.output == .json || invocation.output == .ndjson
        invocation.emit(entries.map { record($0, structured: structured) }, columns: invocation.output == .table ? columns : nil)
        if entries.isEmpty, invocation.output == .table { invocation.note("no audit rows") }
        return .success
    }

    /// Whether an audit row's before or after state names `user` (a row moved to or from them).
    static func names(_ user: String, _ entry: AuditEntry) -> Bool {
        for json in [entry.before, entry.after] {
            guard let json, let members = (try? JSONText.parse(json))?.objectMembers else { continue }
            if members.contains(where: { $0.key == "userId" && $0.value == .string(user) }) { return true }
        }
        return false
    }

    /// The table columns of `audit list`.
    static let columns: [Column] = [
        Column("id", title: "ID"), Column("changed_at", title: "WHEN"), Column("actor", title: "ACTOR"),
        Column("command", title: "COMMAND", maxWidth: 24), Column("reason", title: "REASON", maxWidth: 32),
        Column("ticket", title: "TICKET"), Column("entity", title: "ENTITY"), Column("key", title: "ROW", maxWidth: 36),
        Column("changes", title: "CHANGES", maxWidth: 80),
    ]

    /// An audit row with its id first.
    static func record(_ entry: AuditEntry, structured: Bool) -> Record {
        RowRendering.record(entry, structured: structured)
    }

    /// One audit row: who, when, why, the field changes, and the row before and after.
    static func show(_ invocation: Invocation) throws -> ExitCode {
        let id = try auditId(invocation)
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
        let id = try auditId(invocation, what: "ledger item")
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
        invocation.stdout.write(invocation.isStdoutTTY ? escapingControls(entry.raw) : entry.raw)
        return .success
    }

    /// `text` with C0/C1 controls and bidi overrides shown as `\u{…}` (for a terminal; the bytes
    /// themselves go to a pipe or file).
    static func escapingControls(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) {
                out += "\\u{\(String(v, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `iapctl audit undo N …` for rows that can be undone; nil for inserts.
    static func undoHint(_ entry: AuditEntry) -> String? {
        guard entry.before != nil else { return nil }
        return "iapctl audit undo \(entry.id) --reason '…'"
    }

    /// A stored row JSON (camelCase keys) as a record with snake_case keys (dates shown as dates).
    static func rowRecord(_ json: String?) -> Record {
        guard let json, let members = (try? JSONText.parse(json))?.objectMembers else { return Record() }
        var columns: [(key: String, value: JSONValue)] = members.map { (RowRendering.snakeCase($0.key), $0.value) }
        let rank = { (key: String) in RowRendering.schemaOrder.firstIndex(of: key) ?? RowRendering.schemaOrder.count }
        columns = columns.enumerated().sorted { (rank($0.element.key), $0.offset) < (rank($1.element.key), $1.offset) }
            .map(\.element)
        return Record(columns)
    }

    /// The `<id>` argument as a positive integer (`#12` accepted).
    static func auditId(_ invocation: Invocation, what: String = "audit") throws(CLIError) -> Int64 {
        guard var raw = invocation.parsed.argument("id") else { throw CLIError.usage("missing argument <id>") }
        if raw.hasPrefix("#") { raw.removeFirst() }
        guard let id = Int64(raw), id > 0 else {
            throw CLIError.usage(
                "\(what) id '\(raw)' is not a number",
                hint: what == "audit" ? "the ID column of: iapctl audit list" : "the ledger_id of: iapctl audit show")
        }
        return id
    }
}
