import AppStoreJWS
import IAPFoundation
import IAPOperations
import StoreSQL
import SubscriptionEngine
import SubscriptionModel

/// `iapctl doctor`: checks the data's invariants; each finding comes with the command that fixes it.
///
/// Read-only: it never changes anything (there is no implied `--fix`). Exit 0 clean, 1 findings.
enum DoctorCommand {
    static let environment = CommandTree.environmentOption.with(
        help: "An environment the database accepts; rows of others are findings.")

    /// `--lapsed-before TIME`: the `lapsed` check's threshold.
    static let lapsedBefore = Option<PointInTime>(
        "lapsed-before", valueName: "time",
        help: "Report an active or canceled contract as lapsed when its paid period ended before this moment "
            + "(default 24h: a day ago, while Apple may still be retrying a notification): \(CommandTree.timeForms).",
        defaultValue: "24h")

    /// `--grants-ending-within SPAN`: which grants in force doctor says end soon.
    static let grantsEnding = Option<String>(
        "grants-ending-within", valueName: "span",
        help: "List grants by hand in force that end within this span from now (information, not findings): "
            + "\(GrantOptions.spanForms).",
        defaultValue: "7d")

    static let command = CommandSpec(
        name: "doctor",
        abstract: "Check the data's invariants; print each finding with the command that fixes it.",
        discussion: """
            Read-only: doctor never changes anything; review the FIX commands and run the ones \
            you agree with. Exit 0 when clean, 1 with findings. A status held by a hand override \
            in force (contracts/orders update --status) is information, not a finding: doctor \
            lists it with the command that lifts it and still exits 0. So are grants by hand \
            (iapctl grants add) in force that end within --grants-ending-within (7d), and grants \
            of users with no order and no contract (a typo in the user id, or a trial by hand): \
            listed as information (JSON: grants), never findings. Checks:
            """ + "\n\n" + DoctorCommand.checks.map { "  \($0.name): \($0.about)" }.joined(separator: "\n"),
        examples: [
            CommandExample("iapctl doctor", "Check iapctl.db; findings as a table."),
            CommandExample("iapctl doctor -o json --environment Sandbox", "Check a Sandbox database, as JSON."),
            CommandExample("iapctl doctor --lapsed-before 2h", "Report contracts lapsed for more than two hours."),
        ],
        options: [environment, lapsedBefore, grantsEnding, CommandTree.limitOption],
        handler: run
    )

    /// One problem found.
    struct Finding {
        var check: String
        var entity: String
        var key: String
        var problem: String
        var fix: String

        var record: Record {
            var r = Record()
            r.append("check", check)
            r.append("entity", entity)
            r.append("key", key)
            r.append("problem", problem)
            r.append("fix", fix)
            return r
        }
    }

    /// The checks, in report order, with what each looks for (also the help text).
    static let checks: [(name: String, about: String)] =
        [integrityCheck] + DiagnosisCheck.allCases.map { ($0.rawValue, $0.about) }

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let environments = invocation[environment]
        let accepted = Set((environments.isEmpty ? [EnvironmentName.production] : environments).map(\.rawValue))
        let explicitEnvironment = invocation.source(of: environment) != .defaultValue
        let lapsedBefore = invocation[lapsedBefore].at(now)
        // Integrity first: the other checks read the rows, and a corrupt one stops them.
        let store = try DbOpen.existing(invocation, readOnly: true)
        let integrity = try store.read { _ in
            try (store as? any SQLStoreBackend).map { backend throws(StoreError) in try IntegrityScan.run(backend.transactions.connection) }
        }
        var findings = (integrity?.findings ?? []).map(integrityFinding)
        // Every finding, also those a terminal's table groups (the summary counts them all).
        var everyFinding = findings
        var scanned: [(String, Int)] = (integrity?.checked ?? []).map { ($0.table, $0.rows) }
        var overrides: [Finding] = []
        do {
            let report = try DbOpen.read(invocation) { session in
                try Diagnosis.examine(
                    session, now: now, accepted: accepted, environmentGiven: explicitEnvironment, lapsedBefore: lapsedBefore)
            }
            // A status someone holds by hand on purpose is information: it must not turn a
            // nightly doctor red every night; it is listed with the command that lifts it.
            let problems = report.findings.filter { !isHeldByHand($0) }
            overrides = report.findings.filter(isHeldByHand).map(finding)
            let diagnosed = problems.map(finding)
            everyFinding += diagnosed
            findings += invocation.output == .table ? groupedLapses(problems, diagnosed) : diagnosed
            scanned += [("orders", report.orders), ("contracts", report.contracts), ("unmatched", report.unmatched)]
        } catch StoreError.corrupt(let table, let id, _) where !findings.isEmpty {
            invocation.note("doctor: the other checks stopped at \(table) row \(id), which is corrupt: fix the integrity findings first")
        }
        guard let ending = GrantOptions.span(invocation[grantsEnding]) else {
            throw CLIError.usage(
                "--\(grantsEnding.spec.long) '\(TerminalText.escape(invocation[grantsEnding]))' is not a span",
                hint: "use \(GrantOptions.spanForms)")
        }
        let grantNotes = try DbOpen.read(invocation) { session in try grantInformation(session, now: now, within: ending) }
        let settings = carriedSettings(invocation)
        let notifySettings = explicitEnvironment ? accepted.sorted().map { " --environment \($0)" }.joined() : ""
        for index in findings.indices where findings[index].fix.hasPrefix("iapctl ") {
            findings[index].fix = carry(findings[index].fix, settings, notify: notifySettings)
        }
        for index in overrides.indices { overrides[index].fix = carry(overrides[index].fix, settings) }
        // One page rule with the listing commands: at a terminal the first page, else --limit's rows.
        let allOverrides = overrides.count
        var pageNotes: [String] = []
        if let limit = invocation[CommandTree.limitOption]?.count {
            findings = Array(findings.prefix(limit))
            overrides = Array(overrides.prefix(limit))
        } else {
            let (shown, note) = TerminalPage.cut(findings, noun: "findings", invocation: invocation)
            findings = shown
            pageNotes += note.map { [$0] } ?? []
            let (held, heldNote) = TerminalPage.cut(overrides, noun: "hand overrides", invocation: invocation)
            overrides = held
            pageNotes += heldNote.map { [$0] } ?? []
        }
        switch invocation.output {
        case .table:
            if !findings.isEmpty, invocation.tableWidth != nil {
                // On a terminal: one block per finding, so the problem and the command to run
                // are whole and readable at any width.
                invocation.emit(
                    detail: DetailView(
                        sections: findings.enumerated().map { index, finding in
                            var fields = Record()
                            fields.append("problem", finding.problem)
                            fields.append("fix", finding.fix)
                            return DetailView.Section(
                                key: "finding",
                                title: "\(index + 1). \(finding.check): \(finding.entity)"
                                    + (finding.key == "-" ? "" : " \(finding.key)"),
                                content: .fields(fields))
                        }))
            } else if !findings.isEmpty {
                invocation.emit(
                    findings.map(\.record),
                    columns: [
                        Column("check", title: "CHECK"), Column("key", title: "ROW"),
                        Column("problem", title: "PROBLEM", maxWidth: 90), Column("fix", title: "FIX", keepWhole: true),
                    ])
            }
        case .json:
            let document = JSONValue.object([
                ("clean", .bool(findings.isEmpty)),
                ("scanned", .object(scanned.map { ($0.0, JSONValue.int(Int64($0.1))) })),
                ("findings", .array(findings.map { $0.record.jsonObject() })),
                ("overrides", .array(overrides.map { $0.record.jsonObject() })),
                ("grants", .array(grantNotes.map { $0.jsonObject() })),
            ])
            invocation.emit(json: document)
        case .ndjson, .csv:
            invocation.emit(findings.map(\.record), columns: ["check", "entity", "key", "problem", "fix"])
        }
        for note in pageNotes { invocation.note("doctor: " + note) }
        let scannedText = scanned.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
        if invocation.output != .json {
            for held in overrides {
                invocation.note(
                    "doctor: information, not a finding: \(held.entity) \(held.key) \(held.problem); "
                        + "to go back to the facts: \(held.fix)")
            }
        }
        if invocation.output != .json {
            for note in grantNotes {
                invocation.note("doctor: information, not a finding: " + (note["note"]?.stringValue ?? ""))
            }
        }
        if findings.isEmpty {
            var info =
                allOverrides == 0 ? "" : "; \(allOverrides) hand override\(allOverrides == 1 ? "" : "s") in force (information)"
            if !grantNotes.isEmpty { info += "; \(grantNotes.count) grant note\(grantNotes.count == 1 ? "" : "s") (information)" }
            invocation.note("doctor: no findings (checked \(scannedText))\(info)")
            return .success
        }
        var perCheck: [String: Int] = [:]
        for finding in everyFinding { perCheck[finding.check, default: 0] += 1 }
        let parts = checks.compactMap { check in perCheck[check.name].map { "\($0) \(check.name)" } }
        invocation.note(
            "doctor: \(everyFinding.count) finding\(everyFinding.count == 1 ? "" : "s") (\(parts.joined(separator: ", "))); "
                + "nothing was changed: run the FIX commands you agree with")
        return .failure
    }

    /// Grants by hand in force that end within `within` ms of `now` (`ending-soon`), and those of
    /// users with no order and no contract (`no-purchase`): one record each, with a sentence.
    static func grantInformation(_ session: any StoreSession, now: Int64, within: Int64) throws -> [Record] {
        var notes: [Record] = []
        var purchased: [String: Bool] = [:]
        for grant in try session.grants(matching: GrantFilter()) where grant.inForce(at: now) {
            var kinds: [(String, String)] = []
            if grant.untilDate <= now + within {
                kinds.append(("ending-soon", "ends at \(Timestamp.iso8601(grant.untilDate))"))
            }
            let hasPurchase =
                try purchased[grant.userId]
                ?? {
                    try !session.orders(matching: OrderFilter(userId: grant.userId, limit: 1)).isEmpty
                        || !session.contracts(matching: ContractFilter(userId: grant.userId, limit: 1)).isEmpty
                }()
            purchased[grant.userId] = hasPurchase
            if !hasPurchase { kinds.append(("no-purchase", "the user has no order and no contract (check the user id)")) }
            for (kind, text) in kinds {
                var r = Record()
                r.append("kind", kind)
                r.append("grant_id", grant.id)
                r.append("user_id", grant.userId)
                r.append("product_id", grant.productId)
                r.append("until_date", grant.untilDate)
                r.append("audit_id", grant.auditId)
                r.append(
                    "note",
                    "grant \(grant.id) of \(grant.userId) for \(grant.productId) (\(grant.label)) \(text); "
                        + "to end it now: iapctl grants revoke \(grant.id) --reason …")
                notes.append(r)
            }
        }
        return notes
    }

    /// The `integrity` check's name (not one of ``DiagnosisCheck``: it reads the stored bytes, not the rows' meaning).
    static let integrityCheck = (
        name: "integrity",
        about: "every stored row checked as it is read: ledger and audit row digests, ledger raw frames (checksum) "
            + "and references, facts' digests, contract snapshots' check lines"
    )

    /// A row that fails its check, and what to do: a contract's snapshot needs nothing (it is not
    /// used; the next event rewrites it); a fact is decoded again from the subscription's ledger rows
    /// by `db repair` (when they are intact); the rest needs a backup.
    static func integrityFinding(_ found: IntegrityScan.Finding) -> Finding {
        let fix: String
        switch found.table {
        case "member_contracts":
            fix = "nothing to run: the snapshot is not used, and the next event of the subscription writes a new one"
        case "iap_facts":
            fix = "iapctl db repair"
        default:
            fix = "cannot be fixed by iapctl: restore \(found.table) row \(found.id) from a backup"
        }
        return Finding(
            check: integrityCheck.name, entity: found.table, key: String(found.id), problem: "corrupt: \(found.what)", fix: fix)
    }

    /// A finding as people read it: the problem, and the command that fixes it.
    static func finding(_ found: DiagnosisFinding) -> Finding {
        let (problem, fix) = text(found)
        return Finding(check: found.check.rawValue, entity: found.entity, key: found.key, problem: problem, fix: fix)
    }

    /// The problem and the fix command of a finding.
    static func text(_ found: DiagnosisFinding) -> (problem: String, fix: String) {
        let time = { (ms: Int64) in Timestamp.iso8601(ms) }
        let w = ShellWord.word
        switch found {
        case .lapsed(let contract, let lapse):
            return (
                "\(contract.status.rawValue), but \(lapse.text): no renewal, expiry, grace or billing retry was applied",
                "iapctl apple reconcile --contract \(w(contract.contractId))"
            )
        case .paidWithoutTransaction(let order, let tx):
            let fix =
                tx.map {
                    "iapctl orders update \(w(order.no)) --trade-no \(w($0)) --reason "
                        + ShellWord.quoted("doctor: transaction \($0) carries this order's appAccountToken")
                }
                ?? "iapctl orders update \(w(order.no)) --status pending --reason "
                + ShellWord.quoted("doctor: no transaction proves this payment")
            return ("paid, but no transactionId proves the payment", fix)
        case .tradeNoClearedByHand(let order, let audit, let tx):
            return (
                "paid, but its trade_no \(tx) was cleared by hand (audit #\(audit)) while Apple's signed transaction "
                    + "\(tx) is still in the ledger",
                "iapctl audit undo \(audit) --reason " + ShellWord.quoted("doctor: trade_no \(tx) is in the signed facts")
            )
        case .mixedOwners(let order, let contract):
            return (
                "belongs to \(order.userId) but its contract \(contract.contractId) belongs to \(contract.userId)",
                "iapctl orders update \(w(order.no)) --user \(w(contract.userId)) --reason "
                    + ShellWord.quoted("doctor: follow contract \(contract.contractId)")
            )
        case .orderWithoutContract(let order, let origin, let fromLedger):
            let fix =
                fromLedger.map {
                    "iapctl orders update \(w(order.no)) --origin-no \(w($0)) --reason "
                        + ShellWord.quoted("doctor: Apple's transaction says originalTransactionId \($0)")
                }
                ?? "iapctl orders update \(w(order.no)) --origin-no '' --reason "
                + ShellWord.quoted("doctor: no subscription \(origin) exists")
            return ("origin_no \(origin) has no contract", fix)
        case .sharedTransactionId(let order, let first, let tx):
            return shared(order, with: first, what: "transactionId \(tx)")
        case .sharedAppAccountToken(let order, let first, let token):
            return shared(order, with: first, what: "appAccountToken \(token)")
        case .refundRequestDue(let request):
            let left = max(0, request.deadline - Timestamp.now()) / 60_000
            return (
                "refund request (CONSUMPTION_REQUEST) for transaction \(request.transactionId)"
                    + (request.userId.map { " of user \($0)" } ?? "") + " unanswered; Apple stops waiting at "
                    + "\(time(request.deadline)) (\(left / 60) h \(left % 60) min left); check the body this "
                    + "shows, then send it with --customer-consented (only if the customer consented) --apply",
                "iapctl refunds answer \(w(request.transactionId))"
            )
        case .refundAnswerClaimed(let request, let claim):
            let left = max(0, request.deadline - Timestamp.now()) / 60_000
            return (
                "refund answer for transaction \(request.transactionId) claimed at \(time(claim.claimedAt)) by "
                    + "\(claim.claimedBy), and Apple's answer was never recorded (the sender died while sending); "
                    + "Apple stops waiting at \(time(request.deadline)) (\(left / 60) h \(left % 60) min left)",
                "iapctl refunds answer \(w(request.transactionId)) --resend-claimed"
            )
        case .oldUnmatched(let entry):
            let id = entry.transactionId ?? entry.originalTransactionId ?? entry.notificationUUID ?? "#\(entry.id)"
            return (
                "\(RowRendering.eventName(entry)) for \(id) unmatched since \(time(entry.receivedAt)): \(entry.detail ?? "")",
                "iapctl notify --replay-unmatched"
                    + (entry.appAccountToken.map { "  # after: iapctl orders create --no \(w($0)) --user USER --product PRODUCT" }
                        ?? "")
            )
        case .foreignEnvironment(let entity, let key, let environment, let accepted):
            return (
                "\(environment) \(entity.rawValue) in a database that accepts \(accepted.joined(separator: ", "))",
                "iapctl \(entity == .order ? "orders" : "contracts") update \(w(key)) --status revoked --reason "
                    + ShellWord.quoted("doctor: \(environment) data")
            )
        case .environmentUnchecked(let environment, let count, let accepted):
            return (
                "\(count) row\(count == 1 ? "" : "s") of \(environment), and --environment was not given "
                    + "(the default accepts only \(accepted.joined(separator: ", "))); nothing is wrong "
                    + "if this is a \(environment) database",
                "iapctl doctor --environment \(w(environment))"
            )
        case .orderStatusVsFacts(let order, let tx, let signed, let derived, let held):
            return (
                "status \(order.status.rawValue)\(heldBy(held)), but the newest signed version of transaction \(tx) "
                    + "(signed \(time(signed))) derives \(derived.rawValue)",
                "iapctl orders update \(w(order.no)) "
                    + (held == nil ? "--status \(derived.rawValue)" : "--clear-override status") + " --reason "
                    + ShellWord.quoted("doctor: follow the signed facts")
            )
        case .contractStatusVsFacts(let contract, let expected, let basis, let held):
            let because: String
            switch basis {
            case .facts(let fact, let signed):
                because = "its signed facts derive \(expected.rawValue) (\(fact ?? "?")\(signed.map { " signed \(time($0))" } ?? ""))"
            case .latestEvent(let event, let signed):
                because =
                    "the latest applied event \(RowRendering.eventName(event)) (signed \(time(signed))) "
                    + "leaves it \(expected.rawValue)"
            }
            return (
                "status \(contract.status.rawValue)\(heldBy(held)), but \(because)",
                "iapctl contracts update \(w(contract.contractId)) "
                    + (held == nil ? "--status \(expected.rawValue)" : "--clear-override status") + " --reason "
                    + ShellWord.quoted("doctor: follow the signed facts")
            )
        }
    }

    /// A status that differs from the facts because a hand override in force holds it.
    static func isHeldByHand(_ found: DiagnosisFinding) -> Bool {
        switch found {
        case .orderStatusVsFacts(_, _, _, _, let held): return held != nil
        case .contractStatusVsFacts(_, _, _, let held): return held != nil
        default: return false
        }
    }

    /// ` held by hand (override #17, T-1)` for a status under a hand override in force: the audit row
    /// says who and why (`iapctl audit show 17`); no person's name or free text in doctor's report.
    static func heldBy(_ held: Override?) -> String {
        guard let held else { return "" }
        return " held by hand (override \(held.label); iapctl audit show \(held.auditId))"
    }

    /// The options a fix command needs to act on what doctor examined: `--db` always, and
    /// `--config` and `--actor` when doctor was given them, each as one shell word.
    static func carriedSettings(_ invocation: Invocation) -> String {
        var words = ["--db", ShellWord.word(URLSecrets.redacted(DbOpen.raw(invocation)))]
        if let config = invocation[CommandTree.configOption] { words += ["--config", ShellWord.word(config)] }
        if invocation.source(of: CommandTree.actorOption) == .commandLine, let actor = invocation[CommandTree.actorOption] {
            words += ["--actor", ShellWord.word(actor)]
        }
        return words.joined(separator: " ")
    }

    /// `fix` with `settings` added to its command, and to the command in its `# after:` note;
    /// a `notify` command also gets `notify` (the environments doctor accepted); its other trust
    /// options come from `--config` or the environment (IAPCTL_BUNDLE_ID), as when it first ran.
    static func carry(_ fix: String, _ settings: String, notify: String = "") -> String {
        let marker = "  # after: "
        return fix.split(separator: marker, omittingEmptySubsequences: false).map { part in
            part + " " + settings + (part.hasPrefix("iapctl notify") ? notify : "")
        }.joined(separator: marker)
    }

    /// More lapsed contracts than a screen reads one by one (a webhook outage): one finding with
    /// their count, a few examples, and the commands that fetch what Apple sent since (every
    /// finding stays in JSON, NDJSON and CSV).
    static func groupedLapses(_ found: [DiagnosisFinding], _ findings: [Finding]) -> [Finding] {
        var lapsed: [Contract] = []
        for item in found { if case .lapsed(let contract, _) = item { lapsed.append(contract) } }
        guard lapsed.count > lapsedShownOneByOne else { return findings }
        let statuses = Array(Set(lapsed.map(\.status.rawValue))).sorted()
        let examples = lapsed.prefix(3).map(\.contractId).joined(separator: ", ")
        let group = Finding(
            check: "lapsed", entity: "contract", key: "\(lapsed.count) contracts",
            problem: "\(lapsed.count) contracts are paid until a past moment with nothing from Apple since (\(examples), …): "
                + "notifications were probably missed (`iapctl doctor -o json` lists each one)",
            fix: "iapctl apple notifications sync"
                + statuses.map { "  # after: iapctl apple reconcile --all --status \($0)" }.joined())
        var result = findings.filter { $0.check != "lapsed" }
        result.insert(group, at: 0)
        return result
    }

    /// Up to this many lapsed contracts are reported one by one on a terminal or in a table.
    static let lapsedShownOneByOne = 3

    static func shared(_ order: Order, with first: Order, what: String) -> (problem: String, fix: String) {
        (
            "\(what) is also on order \(first.no)",
            "iapctl orders update \(ShellWord.word(order.no)) --status revoked --reason "
                + ShellWord.quoted("doctor: duplicate of order \(first.no)")
        )
    }
}
