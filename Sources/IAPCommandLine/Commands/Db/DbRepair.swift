import IAPFoundation
import IAPOperations
import StoreAccess
import StoreSQL
import SubscriptionEngine
import SubscriptionModel

/// `iapctl db repair`: what `doctor`'s integrity check finds and iapctl can mend from the rows that
/// are intact. A corrupt fact is set aside and the subscription's facts are decoded again from its
/// ledger rows (each was verified when it was received; the ledger's own digests and frame checksums
/// are checked as they are read), then its orders and contract are re-derived with audit rows. A
/// snapshot that fails its check is cleared. A corrupt ledger or audit row cannot be rebuilt from
/// anything iapctl keeps: it is listed with the backup to restore.
enum DbRepair {
    static let command = CommandSpec(
        name: "repair",
        abstract: "Mend the rows doctor's integrity check finds corrupt, from the rows that are intact.",
        discussion: "A fact whose stored bytes fail their digest is removed and the subscription's facts are "
            + "decoded again from its ledger rows (the JWS as received); its orders and contract are then "
            + "re-derived, each change audited. A contract snapshot that fails its check is cleared. A corrupt "
            + "ledger or audit row is the record itself: it is listed, and only a backup can restore it. Each "
            + "subscription is repaired in its own transaction; a subscription with a corrupt ledger row is left "
            + "as it is.",
        examples: [
            CommandExample("iapctl doctor", "Find the corrupt rows first (its integrity check)."),
            CommandExample("iapctl db repair --dry-run", "What would be repaired, and what cannot be."),
            CommandExample(
                "iapctl db repair --reason 'disk fault on db-2' --ticket INC-42",
                "Repair, recording why in every audit row."),
        ],
        options: [
            CommandTree.dryRun.with(help: "List what would be repaired; change nothing."),
            CommandTree.engineReasonOption.with(
                help: "Why: recorded in every audit row the re-derivation writes (default: says it repaired "
                    + "corrupt facts from the ledger)."),
            CommandTree.ticketOption,
        ],
        handler: run)

    struct Outcome {
        var table: String
        var id: Int64
        var subscription: String?
        var action: String
        var repaired: Bool

        var record: Record {
            var r = Record()
            r.append("table", table)
            r.append("id", id)
            r.append("subscription", subscription)
            r.append("action", action)
            r.append("repaired", repaired)
            return r
        }
    }

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let dryRun = invocation.flag(CommandTree.dryRun)
        let store = try DbOpen.existing(invocation)
        guard let backend = store as? any SQLStoreBackend else {
            throw CLIError.usage("db repair needs an SQL database")
        }
        let connection = backend.transactions.connection
        let scan = try store.read { _ in try IntegrityScan.run(connection) }
        let reason =
            invocation[CommandTree.engineReasonOption].flatMap { $0.isEmpty ? nil : $0 }
            ?? "facts decoded again from the ledger after corrupt stored facts (db repair)"
        let context = EngineContext(
            actor: invocation.actor, command: "db repair", reason: reason,
            ticket: invocation[CommandTree.ticketOption].flatMap { $0.isEmpty ? nil : $0 })
        var outcomes: [Outcome] = []
        var changes = 0

        let corruptFacts = Dictionary(
            grouping: scan.findings.filter { $0.table == "iap_facts" }, by: { $0.originalTransactionId ?? "" })
        for (subscription, findings) in corruptFacts.sorted(by: { $0.key < $1.key }) {
            let ids = findings.map(\.id)
            do {
                let result = try repairFacts(
                    subscription, corrupt: ids, store: store, connection: connection, context: context, reason: reason,
                    dryRun: dryRun)
                changes += result.changes
                let action =
                    dryRun
                    ? "would decode the subscription's facts again from its \(result.ledgerRows) ledger row(s) and re-derive it"
                    : "decoded again from \(result.ledgerRows) ledger row(s): \(result.factsAdded) fact(s) stored, "
                        + "\(result.changes) row change(s) audited"
                for id in ids {
                    outcomes.append(Outcome(table: "iap_facts", id: id, subscription: subscription, action: action, repaired: true))
                }
            } catch StoreError.corrupt(let table, let rowId, _) {
                for id in ids {
                    outcomes.append(
                        Outcome(
                            table: "iap_facts", id: id, subscription: subscription,
                            action: "cannot repair: \(table) row \(rowId), which the facts are decoded from, is corrupt too: "
                                + "restore both from a backup",
                            repaired: false))
                }
            }
        }
        for finding in scan.findings where finding.table == "member_contracts" {
            if !dryRun, let contract = finding.originalTransactionId {
                try store.write { session in try session.saveContractSnapshot(contractId: contract, nil) }
            }
            outcomes.append(
                Outcome(
                    table: finding.table, id: finding.id, subscription: finding.originalTransactionId,
                    action: dryRun ? "would clear the snapshot" : "snapshot cleared (the next event writes a new one)",
                    repaired: true))
        }
        for finding in scan.findings where finding.table != "iap_facts" && finding.table != "member_contracts" {
            outcomes.append(
                Outcome(
                    table: finding.table, id: finding.id, subscription: nil,
                    action: "cannot repair: \(finding.what); restore \(finding.table) row \(finding.id) from a backup",
                    repaired: false))
        }

        invocation.emit(
            outcomes.map(\.record),
            columns: [
                Column("table", title: "TABLE"), Column("id", title: "ROW"), Column("subscription", title: "SUBSCRIPTION"),
                Column("action", title: "ACTION", keepWhole: true),
            ])
        let left = outcomes.filter { !$0.repaired }.count
        let mended = outcomes.count - left
        if outcomes.isEmpty {
            invocation.note("db repair: no corrupt rows (checked \(scan.checked.map { "\($0.rows) \($0.table)" }.joined(separator: ", ")))")
            return .success
        }
        invocation.note(
            "db repair: \(outcomes.count) corrupt row(s): \(mended) \(dryRun ? "would be repaired" : "repaired")"
                + (dryRun ? "" : " (\(changes) row change(s) audited)") + ", \(left) cannot be repaired by iapctl"
                + (dryRun ? "; dry run: nothing was changed" : ""))
        return left == 0 ? .success : .failure
    }

    /// One subscription's facts set aside and decoded again from its ledger rows, then its rows
    /// re-derived; one transaction. Throws `StoreError.corrupt` when a ledger row it reads is corrupt.
    private static func repairFacts(
        _ subscription: String, corrupt: [Int64], store: any Store, connection: any SQLConnection,
        context: EngineContext, reason: String, dryRun: Bool
    ) throws -> (ledgerRows: Int, factsAdded: Int, changes: Int) {
        let work = { (session: any StoreSession) throws -> (Int, Int, Int) in
            let entries = try session.ledger(transactionIds: [], originalTransactionIds: [subscription], appAccountTokens: [])
                .filter { $0.verdict != .rejected && $0.verdict != .conflict }
            if dryRun { return (entries.count, 0, 0) }
            for id in corrupt { _ = try connection.run("DELETE FROM iap_facts WHERE id = ?", [.int(id)]) }
            var added = 0
            for entry in entries {
                guard let event = FactRebuild.event(entry) else { continue }
                for fact in event.facts where try session.insertFact(fact) { added += 1 }
            }
            let changes = try SubscriptionEventEngine().rederive(
                originalTransactionId: subscription, in: session, context: context, reason: reason)
            return (entries.count, added, changes.count)
        }
        return dryRun ? try store.read(work) : try store.write(work)
    }
}
