import AppStoreJWS
import SubscriptionEngine

/// `iapctl doctor`: checks the data's invariants; each finding comes with the command that fixes it.
///
/// Read-only: it never changes anything (there is no implied `--fix`). Exit 0 clean, 1 findings.
enum DoctorCommand {
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
    static let checks: [(name: String, about: String)] = [
        ("expired-still-active", "active or canceled contracts whose expiry is more than 3 days past"),
        ("paid-without-transaction", "paid orders with no transactionId (trade_no)"),
        ("mixed-owners", "a contract whose orders belong to different users"),
        ("order-without-contract", "orders whose originalTransactionId has no contract (one-time purchases excepted)"),
        ("shared-id", "one transactionId or appAccountToken (order number) on two orders"),
        ("old-unmatched", "unmatched ledger items older than a day"),
        ("environment", "rows of an environment the database does not accept (--environment)"),
        (
            "status-vs-facts",
            "contracts whose status differs from what their signed facts derive (the latest applied event where no facts are kept)"
        ),
    ]

    static let day: Int64 = 86_400_000

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let now = Timestamp.now()
        let accepted = Set(invocation.values("environment").isEmpty ? ["Production"] : invocation.values("environment"))
        let explicitEnvironment = invocation.settings.source(of: "environment") != .defaultValue
        var (findings, scanned) = try DbOpen.read(invocation) { session in
            try examine(session, now: now, accepted: accepted)
        }
        if !explicitEnvironment { findings = environmentLeftOut(findings, accepted: accepted) }
        let settings = carriedSettings(invocation)
        let notifySettings = explicitEnvironment ? accepted.sorted().map { " --environment \($0)" }.joined() : ""
        for index in findings.indices {
            findings[index].fix = carry(findings[index].fix, settings, notify: notifySettings)
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
                        Column("check", title: "CHECK"), Column("key", title: "ROW", maxWidth: 36),
                        Column("problem", title: "PROBLEM", maxWidth: 90), Column("fix", title: "FIX", keepWhole: true),
                    ])
            }
        case .json:
            let document = JSONValue.object([
                ("clean", .bool(findings.isEmpty)),
                ("scanned", .object(scanned.map { ($0.0, JSONValue.int(Int64($0.1))) })),
                ("findings", .array(findings.map { $0.record.jsonObject() })),
            ])
            invocation.emit(json: document)
        case .ndjson, .csv:
            invocation.emit(findings.map(\.record), columns: ["check", "entity", "key", "problem", "fix"])
        }
        let scannedText = scanned.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
        if findings.isEmpty {
            invocation.note("doctor: no findings (checked \(scannedText))")
            return .success
        }
        var perCheck: [String: Int] = [:]
        for finding in findings { perCheck[finding.check, default: 0] += 1 }
        let parts = checks.compactMap { check in perCheck[check.name].map { "\($0) \(check.name)" } }
        invocation.note(
            "doctor: \(findings.count) finding\(findings.count == 1 ? "" : "s") (\(parts.joined(separator: ", "))); "
                + "nothing was changed: run the FIX commands you agree with")
        return .failure
    }

    /// Every finding, in check order, and what was scanned.
    static func examine(_ session: any StoreSession, now: Int64, accepted: Set<String>) throws -> (
        [Finding], [(String, Int)]
    ) {
        let contracts = try session.contracts(matching: ContractFilter())
        let orders = try session.orders(matching: OrderFilter())
        let unmatched = try session.unmatchedLedger(limit: nil)
        var findings: [Finding] = []
        var byContract: [String: Contract] = [:]
        for contract in contracts { byContract[contract.contractId] = contract }
        var ordersByOrigin: [String: [Order]] = [:]
        for order in orders { if let origin = order.originNo { ordersByOrigin[origin, default: []].append(order) } }
        var events: [String: [LedgerEntry]] = [:]
        for contract in contracts {
            events[contract.contractId] = try session.ledger(
                transactionIds: [], originalTransactionIds: [contract.contractId], appAccountTokens: [])
        }

        // expired-still-active
        for contract in contracts.reversed()
        where contract.status == .active || contract.status == .canceled {
            guard let expires = contract.expiresDate, expires < now - 3 * day else { continue }
            findings.append(
                Finding(
                    check: "expired-still-active", entity: "contract", key: contract.contractId,
                    problem: "\(contract.status.rawValue) but expired at \(Timestamp.iso8601(expires)) "
                        + "and no EXPIRED notification was applied",
                    fix: "iapctl contracts update \(contract.contractId) --status expired --reason "
                        + quote("doctor: expired at \(Timestamp.iso8601(expires))")))
        }

        // paid-without-transaction
        for order in orders.reversed() where order.status == .paid && (order.tradeNo ?? "").isEmpty {
            let mentions = try session.ledger(transactionIds: [], originalTransactionIds: [], appAccountTokens: [order.no])
            let fix: String
            if let tx = mentions.last(where: { $0.transactionId != nil })?.transactionId {
                fix =
                    "iapctl orders update \(order.no) --trade-no \(tx) --reason "
                    + quote("doctor: transaction \(tx) carries this order's appAccountToken")
            } else {
                fix =
                    "iapctl orders update \(order.no) --status pending --reason "
                    + quote("doctor: no transaction proves this payment")
            }
            findings.append(
                Finding(
                    check: "paid-without-transaction", entity: "order", key: order.no,
                    problem: "paid, but no transactionId proves the payment", fix: fix))
        }

        // mixed-owners
        for contract in contracts.reversed() {
            let own = ordersByOrigin[contract.contractId] ?? []
            for order in own where order.userId != contract.userId {
                findings.append(
                    Finding(
                        check: "mixed-owners", entity: "order", key: order.no,
                        problem: "belongs to \(order.userId) but its contract \(contract.contractId) belongs to "
                            + "\(contract.userId)",
                        fix: "iapctl orders update \(order.no) --user \(shellWord(contract.userId)) --reason "
                            + quote("doctor: follow contract \(contract.contractId)")))
            }
        }

        // order-without-contract
        for order in orders.reversed() {
            guard let origin = order.originNo, byContract[origin] == nil else { continue }
            let mentions = try session.ledger(
                transactionIds: order.tradeNo.map { [$0] } ?? [], originalTransactionIds: [origin], appAccountTokens: [])
            if mentions.contains(where: { $0.notificationType == "ONE_TIME_CHARGE" }) { continue }
            let fromLedger = mentions.last {
                $0.transactionId == order.tradeNo && $0.originalTransactionId != nil && $0.originalTransactionId != origin
            }?.originalTransactionId
            let fix: String
            if let fromLedger, byContract[fromLedger] != nil {
                fix =
                    "iapctl orders update \(order.no) --origin-no \(fromLedger) --reason "
                    + quote("doctor: Apple's transaction says originalTransactionId \(fromLedger)")
            } else {
                fix =
                    "iapctl orders update \(order.no) --origin-no '' --reason "
                    + quote("doctor: no subscription \(origin) exists")
            }
            findings.append(
                Finding(
                    check: "order-without-contract", entity: "order", key: order.no,
                    problem: "origin_no \(origin) has no contract", fix: fix))
        }

        // shared-id
        var seenTrade: [String: Order] = [:]
        var seenNo: [String: Order] = [:]
        for order in orders.reversed() {  // oldest first: the later one is reported
            if let trade = order.tradeNo?.lowercased(), !trade.isEmpty {
                if let first = seenTrade[trade] {
                    findings.append(shared(order, with: first, what: "transactionId \(order.tradeNo!)"))
                } else {
                    seenTrade[trade] = order
                }
            }
            let no = order.no.lowercased()
            if let first = seenNo[no] {
                findings.append(shared(order, with: first, what: "appAccountToken \(no)"))
            } else {
                seenNo[no] = order
            }
        }

        // old-unmatched
        for entry in unmatched where entry.receivedAt < now - day {
            let id = entry.transactionId ?? entry.originalTransactionId ?? entry.notificationUUID ?? "#\(entry.id)"
            findings.append(
                Finding(
                    check: "old-unmatched", entity: "ledger", key: String(entry.id),
                    problem: "\(RowRendering.eventName(entry)) for \(id) unmatched since "
                        + "\(Timestamp.iso8601(entry.receivedAt)): \(entry.detail ?? "")",
                    fix: "iapctl notify --replay-unmatched"
                        + (entry.appAccountToken.map { "  # after: iapctl orders create --no \($0) --user USER --product PRODUCT" }
                            ?? "")))
        }

        // environment
        for contract in contracts.reversed() {
            guard let environment = contract.environment, !accepted.contains(environment) else { continue }
            findings.append(
                Finding(
                    check: "environment", entity: "contract", key: contract.contractId,
                    problem: "\(environment) contract in a database that accepts \(accepted.sorted().joined(separator: ", "))",
                    fix: "iapctl contracts update \(contract.contractId) --status revoked --reason "
                        + quote("doctor: \(environment) data")))
        }
        for order in orders.reversed() {
            guard let environment = order.environment, !accepted.contains(environment) else { continue }
            guard order.status == .paid || order.status == .pending else { continue }
            findings.append(
                Finding(
                    check: "environment", entity: "order", key: order.no,
                    problem: "\(environment) order in a database that accepts \(accepted.sorted().joined(separator: ", "))",
                    fix: "iapctl orders update \(order.no) --status revoked --reason " + quote("doctor: \(environment) data")))
        }

        // status-vs-facts: the stored status against the engine's derivation of the kept facts
        for contract in contracts.reversed() {
            let facts = try session.facts(originalTransactionId: contract.contractId)
            let derivation = Derivation.derive(FactSet(facts), now: now)
            for derivedOrder in derivation.orders {
                let tx = derivedOrder.transaction
                guard let order = ordersByOrigin[contract.contractId]?.first(where: { $0.tradeNo == tx.transactionId }),
                    order.status != derivedOrder.status
                else { continue }
                let signed = Timestamp.iso8601(derivedOrder.signedDate)
                findings.append(
                    Finding(
                        check: "status-vs-facts", entity: "order", key: order.no,
                        problem: "status \(order.status.rawValue), but the newest signed version of transaction "
                            + "\(tx.transactionId) (signed \(signed)) derives \(derivedOrder.status.rawValue)",
                        fix: "iapctl orders update \(order.no) --status \(derivedOrder.status.rawValue) --reason "
                            + quote("doctor: follow the signed facts")))
            }
            let expected: (status: ContractStatus, because: String)
            if let derived = derivation.contract {
                let reason = derived.reason("status")
                let signed = reason?.signedDate.map { " signed \(Timestamp.iso8601($0))" } ?? ""
                expected = (derived.status, "its signed facts derive \(derived.status.rawValue) (\(reason?.fact ?? "?")\(signed))")
            } else if let latest = expectedStatus(contract, events: events[contract.contractId] ?? []) {
                expected = (
                    latest.status,
                    "the latest applied event \(latest.event) (signed \(Timestamp.iso8601(latest.signed))) "
                        + "leaves it \(latest.status.rawValue)"
                )
            } else {
                continue
            }
            guard expected.status != contract.status else { continue }
            findings.append(
                Finding(
                    check: "status-vs-facts", entity: "contract", key: contract.contractId,
                    problem: "status \(contract.status.rawValue), but \(expected.because)",
                    fix: "iapctl contracts update \(contract.contractId) --status \(expected.status.rawValue) --reason "
                        + quote("doctor: follow the signed facts")))
        }

        let scanned = [("orders", orders.count), ("contracts", contracts.count), ("unmatched", unmatched.count)]
        return (findings, scanned)
    }

    /// The status the newest applied state change leaves, when that event alone decides it.
    static func expectedStatus(_ contract: Contract, events: [LedgerEntry]) -> (
        status: ContractStatus, event: String, signed: Int64
    )? {
        let applied = events.filter { entry in
            guard entry.verdict == .applied, entry.signedDate != nil else { return false }
            return ReceiptMapping.rule(for: entry).changesState
        }
        guard let latest = applied.max(by: { ($0.signedDate!, $0.id) < ($1.signedDate!, $1.id) }) else { return nil }
        let rule = ReceiptMapping.rule(for: latest)
        guard let status = rule.resultingStatus else { return nil }
        let signed = latest.signedDate!
        // A paid period newer than an EXPIRED event (a renewal that arrived late) legitimately revives it.
        if status == .expired, let expires = contract.expiresDate, expires > signed { return nil }
        return (status, RowRendering.eventName(latest), signed)
    }

    /// Without `--environment`, rows of another environment are not proof of bad data (the
    /// database may simply be a Sandbox one): one finding per environment says how to check it
    /// properly, instead of proposing to revoke paid orders.
    static func environmentLeftOut(_ findings: [Finding], accepted: Set<String>) -> [Finding] {
        var kept = findings.filter { $0.check != "environment" }
        var counts: [String: Int] = [:]
        for finding in findings where finding.check == "environment" {
            let environment = String(finding.problem.prefix { $0 != " " })
            counts[environment, default: 0] += 1
        }
        for (environment, count) in counts.sorted(by: { $0.key < $1.key }) {
            kept.append(
                Finding(
                    check: "environment", entity: "database", key: "-",
                    problem: "\(count) row\(count == 1 ? "" : "s") of \(environment), and --environment was not given "
                        + "(the default accepts only \(accepted.sorted().joined(separator: ", "))); nothing is wrong "
                        + "if this is a \(environment) database",
                    fix: "iapctl doctor --environment \(environment)"))
        }
        return kept
    }

    /// The options a fix command needs to act on what doctor examined: `--db` always, and
    /// `--config` and `--actor` when doctor was given them, each as one shell word.
    static func carriedSettings(_ invocation: Invocation) -> String {
        var words = ["--db", StoreAccess.shellWord(URLSecrets.redacted(DbOpen.raw(invocation)))]
        if let config = invocation.value("config") { words += ["--config", StoreAccess.shellWord(config)] }
        if invocation.settings.source(of: "actor") == .commandLine, let actor = invocation.value("actor") {
            words += ["--actor", StoreAccess.shellWord(actor)]
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

    static func shared(_ order: Order, with first: Order, what: String) -> Finding {
        Finding(
            check: "shared-id", entity: "order", key: order.no,
            problem: "\(what) is also on order \(first.no)",
            fix: "iapctl orders update \(order.no) --status revoked --reason "
                + quote("doctor: duplicate of order \(first.no)"))
    }

    /// A single-quoted shell word.
    static func quote(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// The text as is when it is a plain shell word, else quoted.
    static func shellWord(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_.@:/".unicodeScalars.contains($0)
        }
        return plain && !text.isEmpty ? text : quote(text)
    }
}
