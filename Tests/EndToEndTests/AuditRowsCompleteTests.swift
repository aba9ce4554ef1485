import Foundation
import JWSForge
import Testing

/// Every command that writes orders or contracts leaves audit rows that say who (the actor), with
/// which command, why (its `--reason`, or the event when the command takes none) and under which
/// ticket (its `--ticket`) — as given. On the backend of the run (SQLite, or MariaDB with
/// `IAPCTL_E2E_BACKEND=mysql`). `refunds answer --apply` is left out: its audit rows are the refund
/// desk's, covered by its own tests.
@Suite("audit rows carry actor, command, reason and ticket as given, end to end")
struct AuditRowsCompleteTests {
    let token = "3c1f6b0e-7a52-4d8e-9f10-2b4c6d8e0a01"
    let sync = AppleNotificationSyncTests()
    let reconcile = AppleReconcileTests()

    /// What a writer's audit rows must say.
    enum Reason {
        case exactly(String)
        case containing(String)
    }

    /// One writing command: what it needs first, its arguments and input, and its rows' expected columns.
    struct Writer {
        var name: String
        var prepare: (CLI, AppleWorld, AppleAPIServer) throws -> Void = { _, _, _ in }
        var arguments: (CLI, AppleWorld) throws -> [String]
        var stdin: ((AppleWorld) throws -> String)? = nil
        var command: String
        var reason: Reason
        var ticket: String?
        /// Its exit statuses on success.
        var statuses: Set<Int32> = [0]
    }

    func bought(_ cli: CLI, _ world: AppleWorld) throws {
        let buy = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: world.transaction("1000", original: "1000", token: token))
        try cli.ok(["notify"] + world.trust, stdin: buy)
    }

    var writers: [Writer] {
        let apple = { (world: AppleWorld) in ["--environment", "sandbox", "--root-ca", world.rootPath] }
        return [
            Writer(
                name: "notify", arguments: { _, world in ["notify"] + world.trust },
                stdin: { world in
                    try world.notification(
                        "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0,
                        tx: world.transaction("1000", original: "1000", token: token))
                }, command: "notify", reason: .exactly("SUBSCRIBED/INITIAL_BUY"), ticket: nil),
            Writer(
                name: "verify --apply", arguments: { _, world in ["verify", "--apply"] + world.trust },
                stdin: { world in try world.signedTransaction(world.transaction("1000", original: "1000", token: token)) },
                command: "verify --apply", reason: .exactly("client submission"), ticket: nil),
            Writer(
                name: "restore --apply",
                prepare: { cli, world, _ in
                    try cli.ok(["orders", "create", "--user", "bob", "--product", AppleWorld.product, "--no", "bob-order"])
                    let buy = try world.notification(
                        "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0,
                        tx: world.transaction("2000", original: "2000", token: "bob-order"))
                    try cli.ok(["notify"] + world.trust, stdin: buy)
                },
                arguments: { _, world in
                    ["restore", "--user", "alice", "--apply", "--policy", "transfer", "--reason", "moved to alice"] + world.trust
                },
                stdin: { world in try world.signedTransaction(world.transaction("2000", original: "2000", token: "bob-order")) },
                command: "restore --apply", reason: .containing("moved to alice"), ticket: nil),
            Writer(
                name: "orders update", prepare: { cli, world, _ in try bought(cli, world) },
                arguments: { _, _ in ["orders", "update", token, "--status", "refunded", "--reason", "refund by mail", "--ticket", "T-1"] },
                command: "orders update", reason: .exactly("refund by mail"), ticket: "T-1"),
            Writer(
                name: "contracts update", prepare: { cli, world, _ in try bought(cli, world) },
                arguments: { _, _ in ["contracts", "update", "1000", "--status", "revoked", "--reason", "fraud", "--ticket", "T-2"] },
                command: "contracts update", reason: .exactly("fraud"), ticket: "T-2"),
            Writer(
                name: "contracts update --clear-override",
                prepare: { cli, world, _ in
                    try bought(cli, world)
                    try cli.ok(["contracts", "update", "1000", "--status", "revoked", "--reason", "fraud", "--ticket", "T-2"])
                },
                arguments: { _, _ in
                    ["contracts", "update", "1000", "--clear-override", "status", "--reason", "fraud ruled out", "--ticket", "T-3"]
                },
                command: "contracts update --clear-override", reason: .containing("fraud ruled out"), ticket: "T-3"),
            Writer(
                name: "audit undo",
                prepare: { cli, world, _ in
                    try bought(cli, world)
                    try cli.ok(["orders", "update", token, "--status", "refunded", "--reason", "refund by mail"])
                },
                arguments: { cli, _ in
                    let id = try #require(try cli.ok(["audit", "list", "-o", "json", "--limit", "1"]).jsonArray().first?["id"] as? Int)
                    return ["audit", "undo", String(id), "--reason", "refund was a mistake", "--ticket", "T-4"]
                },
                command: "audit undo", reason: .exactly("refund was a mistake"), ticket: "T-4"),
            Writer(
                name: "apple reconcile --apply",
                prepare: { cli, world, server in
                    try bought(cli, world)
                    let tx = try reconcile.signed(
                        world, world.transaction("1000", original: "1000", token: token), at: AppleWorld.t0 + AppleWorld.day)
                    let renewal = try reconcile.renewal(world, "1000", autoRenew: 0, signed: AppleWorld.t0 + AppleWorld.day)
                    try server.routes([reconcile.status("1000", 1, latest: tx, renewal: renewal)] + reconcile.history("1000", [[tx]]))
                },
                arguments: { _, world in
                    ["apple", "reconcile", "--contract", "1000", "--apply", "--reason", "nightly check", "--ticket", "T-5"]
                        + apple(world)
                },
                command: "apple reconcile", reason: .exactly("nightly check"), ticket: "T-5"),
            Writer(
                name: "apple notifications sync",
                prepare: { _, world, server in
                    try sync.plant(server, [sync.page(try sync.lifecycle(world, hoursAgo: [5]))])
                },
                arguments: { _, world in
                    ["apple", "notifications", "sync", "--since", "1d", "--reason", "backfill", "--ticket", "T-6"] + apple(world)
                },
                command: "apple notifications sync", reason: .exactly("backfill"), ticket: "T-6"),
            Writer(
                name: "apple notifications sync without --reason",
                prepare: { _, world, server in
                    try sync.plant(server, [sync.page(try sync.lifecycle(world, hoursAgo: [5]))])
                },
                arguments: { _, world in ["apple", "notifications", "sync", "--since", "1d"] + apple(world) },
                command: "apple notifications sync", reason: .exactly("SUBSCRIBED/INITIAL_BUY"), ticket: nil),
        ]
    }

    @Test func everyWritersAuditRowsCarryActorCommandReasonAndTicketAsGiven() throws {
        for (index, writer) in writers.enumerated() {
            let cli = try CLI()
            let world = try AppleWorld(cli: cli)
            let server = try AppleAPIServer(cli: cli)
            for (name, value) in server.environment { cli.environment[name] = value }
            try world.database(orders: [(token, "alice")])
            try writer.prepare(cli, world, server)
            let before = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().compactMap { $0["id"] as? Int }.max() ?? 0
            let actor = "actor-\(index)"
            let result = try cli.run(
                try writer.arguments(cli, world) + ["--actor", actor], stdin: try writer.stdin?(world))
            #expect(writer.statuses.contains(result.status), "\(writer.name): \(result)")
            let rows = try cli.ok(["audit", "list", "-o", "json"]).jsonArray().filter { ($0["id"] as? Int ?? 0) > before }
            #expect(!rows.isEmpty, "\(writer.name) wrote no audit row")
            for row in rows {
                #expect(row["actor"] as? String == actor, "\(writer.name): \(row)")
                #expect((row["command"] as? String)?.hasPrefix(writer.command) == true, "\(writer.name): \(row)")
                let reason = row["reason"] as? String
                switch writer.reason {
                case .exactly(let text): #expect(reason == text, "\(writer.name): \(row)")
                case .containing(let text): #expect(reason?.contains(text) == true, "\(writer.name): \(row)")
                }
                #expect(row["ticket"] as? String == writer.ticket, "\(writer.name): \(row)")
            }
            if let ticket = writer.ticket {
                // `audit list --ticket` finds exactly these rows.
                let found = try cli.ok(["audit", "list", "--ticket", ticket, "-o", "json"]).jsonArray()
                    .compactMap { $0["id"] as? Int }.filter { $0 > before }
                #expect(Set(found) == Set(rows.compactMap { $0["id"] as? Int }), "\(writer.name)")
            }
        }
    }

    @Test func clearOverridePrintsTheAuditIdOfItsChange() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        try bought(cli, world)
        try cli.ok(["contracts", "update", "1000", "--status", "revoked", "--reason", "fraud"])
        let dry = try cli.ok(
            ["contracts", "update", "1000", "--clear-override", "status", "--reason", "ruled out", "--dry-run", "-o", "json"])
        #expect(try dry.jsonArray().first?["audit_id"] as? Int == nil, "\(dry)")
        let cleared = try cli.ok(
            ["contracts", "update", "1000", "--clear-override", "status", "--reason", "ruled out", "--ticket", "T-7", "-o", "json"])
        let record = try #require(try cleared.jsonArray().first)
        let auditId = try #require(record["audit_id"] as? Int, "\(cleared)")
        let row = try #require(try cli.ok(["audit", "list", "--ticket", "T-7", "-o", "json"]).jsonArray().first)
        #expect(row["id"] as? Int == auditId)
        #expect(row["key"] as? String == "1000" && row["entity"] as? String == "contract")

        // The table says it too, as other corrections do.
        try cli.ok(["contracts", "update", "1000", "--status", "revoked", "--reason", "fraud again"])
        let table = try cli.ok(["contracts", "update", "1000", "--clear-override", "status", "--reason", "ruled out again"])
        #expect(table.stdout.contains("contract 1000: updated (audit #"), "\(table)")

        // A dry run names the override it would clear, then sums up (the summary last).
        try cli.ok(["contracts", "update", "1000", "--status", "revoked", "--reason", "fraud once more"])
        let preview = try cli.ok(["contracts", "update", "1000", "--clear-override", "status", "--reason", "x", "--dry-run"])
        let lines = preview.stderr.split(separator: "\n").map(String.init)
        let detail = try #require(lines.firstIndex { $0.contains("would clear override #") }, "\(preview)")
        let summary = try #require(lines.firstIndex { $0.contains("nothing written") }, "\(preview)")
        #expect(detail < summary, "\(preview.stderr)")
    }
}
