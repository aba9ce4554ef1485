import Foundation
import Testing

/// The summary line of each command that writes, checked against what the database shows it
/// wrote (on SQLite, and on MariaDB with `IAPCTL_E2E_BACKEND=mysql`).
@Suite("every summary line matches what the database shows")
struct SummariesMatchTheDatabaseTests {
    /// A database with the examples' orders and no notification applied yet.
    static func ordersOnly() throws -> CLI {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--from", CLI.packageRoot.appendingPathComponent("examples/orders.ndjson").path, "-q"])
        return cli
    }

    /// The counts of a batch's summary line (`notify: 11 items: 6 applied, 2 duplicate; …`).
    static func counts(_ stderr: String, command: String) throws -> (items: Int, by: [String: Int]) {
        let line = try #require(stderr.split(separator: "\n").last { $0.hasPrefix(command + ": ") }, "\(stderr)")
        let afterCommand = line.dropFirst(command.count + 2)
        let parts = afterCommand.split(separator: ";")[0].split(separator: ":", maxSplits: 1)
        let items = try #require(Int(parts[0].split(separator: " ")[0]), "\(line)")
        var by: [String: Int] = [:]
        for part in (parts.count > 1 ? parts[1] : "").split(separator: ",") {
            let words = part.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            if words.count == 2, let n = Int(words[0]) { by[String(words[1])] = n }
        }
        return (items, by)
    }

    func status(_ cli: CLI) throws -> [String: Any] { try cli.ok(["db", "status", "-o", "json"]).jsonObject() }

    /// `notify --dry-run` says `would apply` (nothing written), and the run says `applied` for
    /// exactly the items whose changes the audit trail shows; unmatched as the ledger keeps them;
    /// the parts add up to the items.
    @Test func notifysSummaryCountsWhatTheDatabaseShows() throws {
        let cli = try Self.ordersOnly()
        let input = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        let before = try status(cli)

        let dry = try cli.run(["notify", "--dry-run", "-o", "ndjson"] + Examples.exampleTrust, stdin: input)
        let predicted = try Self.counts(dry.stderr, command: "notify")
        #expect(predicted.by["applied"] == nil, "a dry run never says applied: \(dry.stderr)")
        #expect((predicted.by["would apply"] ?? 0) > 0, "\(dry.stderr)")
        #expect(predicted.by.values.reduce(0, +) == predicted.items, "\(dry.stderr)")
        #expect(try status(cli)["audit"] as? Int == before["audit"] as? Int, "the dry run wrote nothing")
        #expect(try status(cli)["ledger"] as? Int == before["ledger"] as? Int)

        let run = try cli.run(["notify", "-o", "ndjson"] + Examples.exampleTrust, stdin: input)
        let done = try Self.counts(run.stderr, command: "notify")
        #expect(done.by["would apply"] == nil, "\(run.stderr)")
        #expect(done.by["applied"] == predicted.by["would apply"], "\(dry.stderr)\n\(run.stderr)")
        #expect(done.by.values.reduce(0, +) == done.items, "\(run.stderr)")
        let audits = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { $0["command"] as? String == "notify" }
        let appliedItems = Set(audits.compactMap { $0["ledger_id"] as? Int })
        #expect(appliedItems.count == done.by["applied"] ?? 0, "one applied item per ledger item with audited changes")
        #expect(try status(cli)["unmatched"] as? Int == done.by["unmatched"] ?? 0, "\(run.stderr)")
        let rows = try run.ndjson()
        #expect(rows.count == done.items)
        for (verdict, count) in done.by {
            #expect(rows.count { $0["verdict"] as? String == verdict } == count, "\(verdict): \(run.stderr)")
        }
    }

    /// `audit undo --ticket` of a ticket that changed an order and a contract: the summary names
    /// one of each (it said `2 contracts`, the kind of the first row), as the audit trail shows.
    @Test func anUndoOfAnOrderAndAContractCountsEachKind() throws {
        let cli = try Self.ordersOnly()
        let input = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        _ = try cli.run(["notify", "-q"] + Examples.exampleTrust, stdin: input)
        let order = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e", contract = "2000000900000001"
        let orderStatus = try cli.order(order)["status"] as? String
        let contractStatus = try cli.ok(["contracts", "show", contract, "-o", "json"]).jsonObject()
        let wasContract = (contractStatus["contract"] as? [String: Any])?["status"] as? String
        try cli.ok(["orders", "update", order, "--status", "refunded", "--reason", "test", "--ticket", "T-9"])
        let other = wasContract == "expired" ? "canceled" : "expired"
        try cli.ok(["contracts", "update", contract, "--status", other, "--reason", "test", "--ticket", "T-9"])
        let auditsBefore = try status(cli)["audit"] as? Int ?? 0

        let dry = try cli.ok(["audit", "undo", "--ticket", "T-9", "--reason", "wrong ticket", "--dry-run"])
        #expect(dry.stderr.contains("dry run: 1 order and 1 contract would change; nothing written"), "\(dry.stderr)")
        #expect(try status(cli)["audit"] as? Int == auditsBefore)

        let undo = try cli.ok(["audit", "undo", "--ticket", "T-9", "--reason", "wrong ticket"])
        #expect(undo.stderr.contains("updated 1 order and 1 contract (audited as"), "\(undo.stderr)")
        let undone = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter {
            ($0["id"] as? Int ?? 0) > auditsBefore
        }
        #expect(undone.count { $0["entity"] as? String == "order" } == 1, "\(undone)")
        #expect(undone.count { $0["entity"] as? String == "contract" } == 1, "\(undone)")
        #expect(try cli.order(order)["status"] as? String == orderStatus)
        let contractNow = try cli.ok(["contracts", "show", contract, "-o", "json"]).jsonObject()
        #expect((contractNow["contract"] as? [String: Any])?["status"] as? String == wasContract)
    }

    /// `restore --apply --policy transfer --dry-run` says `would transfer` and writes nothing; the
    /// run says `transferred` for each contract whose owner the database now shows moved.
    @Test func restoresSummaryCountsTheTransfersTheDatabaseShows() throws {
        let cli = try Self.ordersOnly()
        let examples = CLI.packageRoot.appendingPathComponent("examples")
        let input = try String(contentsOf: examples.appendingPathComponent("notifications.ndjson"), encoding: .utf8)
        _ = try cli.run(["notify", "-q"] + Examples.exampleTrust, stdin: input)
        let restored = examples.appendingPathComponent("restored.ndjson").path
        func owners() throws -> [String: String] {
            var owners: [String: String] = [:]
            for contract in try cli.ok(["contracts", "list", "-o", "json"]).jsonArray() {
                if let id = contract["contract_id"] as? String { owners[id] = contract["user_id"] as? String }
            }
            return owners
        }
        let before = try owners()
        let args = ["restore", "--user", "carol", restored, "--apply", "--policy", "transfer", "--reason", "support ticket"]
        let dry = try cli.run(args + ["--dry-run", "-o", "ndjson"] + Examples.exampleTrust)
        let predicted = try Self.counts(dry.stderr, command: "restore")
        #expect(predicted.by["transferred"] == nil, "nothing was transferred: \(dry.stderr)")
        #expect((predicted.by["would transfer"] ?? 0) > 0, "\(dry.stderr)")
        #expect(try dry.ndjson().allSatisfy { $0["dry_run"] as? Bool == true }, "\(dry.stdout)")
        #expect(try owners() == before, "the dry run wrote nothing")

        let run = try cli.run(args + ["-o", "ndjson"] + Examples.exampleTrust)
        let done = try Self.counts(run.stderr, command: "restore")
        #expect(done.by["transferred"] == predicted.by["would transfer"], "\(dry.stderr)\n\(run.stderr)")
        let after = try owners()
        let moved = after.filter { before[$0.key] != $0.value && $0.value == "carol" }
        #expect(moved.count == done.by["transferred"], "\(before) → \(after): \(run.stderr)")
    }

    /// `orders update --from` with a row that changes and one that is already so: `updated 1
    /// order`, one audit row.
    @Test func aCorrectionBatchCountsOnlyTheRowsItChanged() throws {
        let cli = try Self.ordersOnly()
        let orders = try cli.ok(["orders", "list", "-o", "json"]).jsonArray().compactMap { $0["no"] as? String }.sorted()
        try #require(orders.count >= 2)
        try cli.ok(["orders", "update", orders[1], "--status", "revoked", "--reason", "setup"])
        let auditsBefore = try status(cli)["audit"] as? Int ?? 0
        let batch = "{\"no\":\"\(orders[0])\",\"status\":\"revoked\"}\n{\"no\":\"\(orders[1])\",\"status\":\"revoked\"}\n"
        let dry = try cli.ok(["orders", "update", "--from", "-", "--reason", "batch", "--dry-run"], stdin: batch)
        #expect(dry.stderr.contains("dry run: 1 order would change; nothing written"), "\(dry.stderr)")
        let run = try cli.ok(["orders", "update", "--from", "-", "--reason", "batch"], stdin: batch)
        #expect(run.stderr.contains("updated 1 order (audited as"), "\(run.stderr)")
        #expect(try status(cli)["audit"] as? Int == auditsBefore + 1)
    }
}
