import Foundation
import Testing

/// What support staff meet on their first day: read-only access, pasting at a terminal, doctor's
/// fixes, audit ids, first contact.
@Suite("read-only look-ups, pasting at a terminal, doctor's fixes, audit ids, end to end")
struct ReadOnlyLookUpsAndPastingTests {
    static var canSwitchUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && E2EBackend.current == .sqlite
    }

    /// A user with read access only (file 0644, folder 0555) can look everything up; a
    /// change fails with a plain read-only message; no SQL, no MySQL hint; no file is created.
    @Test(.enabled(if: canSwitchUser)) func lookUpsWorkOnAReadOnlyFileAndFolder() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let order = try cli.ok(["orders", "create", "--user", "alice", "--product", "p1", "-q"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let db = cli.dbPath
        #expect(chmod(db, 0o644) == 0)
        #expect(chmod(cli.dir.path, 0o555) == 0)
        defer { chmod(cli.dir.path, 0o755) }
        let before = try FileManager.default.contentsOfDirectory(atPath: cli.dir.path).sorted()
        let lookUps: [[String]] = [
            ["orders", "list"], ["orders", "show", order], ["contracts", "list"], ["audit", "list"],
            ["entitled", "--user", "alice"], ["db", "status"], ["orders", "list", "--redact"],
        ]
        for args in lookUps {
            let r = try cli.run(args, asUser: 65534)
            #expect(r.status == 0 || (args[0] == "entitled" && r.status == 1), "\(args): \(r)")
        }
        let list = try cli.run(["orders", "list", "-o", "json"], asUser: 65534)
        #expect(list.stdout.contains(order))
        let change = try cli.run(
            ["orders", "update", order, "--status", "paid", "--reason", "test"], asUser: 65534)
        #expect(change.status == 78, "\(change)")
        #expect(change.stderr.contains("read-only"))
        #expect(!change.stderr.contains("IAPCTL_DB_PASSWORD"))
        #expect(!change.stderr.contains("SQL"))
        #expect(!change.stderr.contains("PRAGMA"))
        chmod(cli.dir.path, 0o755)
        let after = try FileManager.default.contentsOfDirectory(atPath: cli.dir.path).sorted()
        #expect(before == after)
    }

    /// Readers never create files, not even where they could: another user's database in a
    /// folder everyone may write gets no `-wal`/`-shm` owned by the reader.
    @Test(.enabled(if: canSwitchUser)) func readersCreateNoFiles() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--user", "alice", "--product", "p1", "-q"])
        #expect(chmod(cli.dbPath, 0o644) == 0)
        #expect(chmod(cli.dir.path, 0o777) == 0)
        defer { chmod(cli.dir.path, 0o755) }
        let files = {
            try FileManager.default.contentsOfDirectory(atPath: cli.dir.path).filter { $0.hasPrefix("iapctl.db") }
                .sorted()
        }
        #expect(try files() == ["iapctl.db"])
        for args in [["orders", "list"], ["contracts", "list"], ["audit", "list"], ["db", "status"]] {
            let r = try cli.run(args, asUser: 65534)
            #expect(r.status == 0, "\(args): \(r)")
            #expect(try files() == ["iapctl.db"], "\(args)")
        }
    }

    /// Doctor's fix commands carry --db (and --config, --actor) shell-quoted, so pasted as
    /// printed they act on the database doctor examined; without --environment it never proposes
    /// to revoke paid orders of another environment.
    @Test func doctorFixesCarryTheSettingsDoctorRanWith() throws {
        guard E2EBackend.current == .sqlite else { return }
        let h = try PowerHistory()
        let cli = h.cli
        let odd = cli.path("it's a copy.db")
        try FileManager.default.copyItem(atPath: cli.dbPath, toPath: odd)
        let config = try cli.write("my settings.json", "{\"no-color\": true}")
        // Without --environment: no revocations, one finding that says how to check a Sandbox database.
        let plain = try cli.run(["doctor", "--db", odd, "-o", "json"], env: ["IAPCTL_DB": ""])
        let findings = try plain.jsonObject()["findings"] as? [[String: Any]] ?? []
        #expect(!findings.isEmpty)
        #expect(!findings.contains { ($0["fix"] as? String)?.contains("--status revoked") == true }, "\(plain)")
        let environment = try #require(findings.first { $0["check"] as? String == "environment" })
        #expect((environment["fix"] as? String)?.hasPrefix("iapctl doctor --environment Sandbox --db ") == true)
        // With it: every fix names the same database, config and actor, quoted for the shell.
        let explicit = try cli.run(
            [
                "doctor", "--db", odd, "--config", config, "--actor", "pat o'neil", "--environment", "Production",
                "-o", "json",
            ], env: ["IAPCTL_DB": ""])
        let fixes = (try explicit.jsonObject()["findings"] as? [[String: Any]] ?? []).compactMap { $0["fix"] as? String }
        #expect(fixes.contains { $0.contains("--status revoked") })
        for fix in fixes {
            let command = String(fix.split(separator: "  # ").first ?? "")
            // What a shell makes of the pasted command: its words.
            let words = try Examples.shellWords(command)
            #expect(words.first == "iapctl", "\(fix)")
            let db = try #require(words.firstIndex(of: "--db"), "\(fix)")
            #expect(words[db + 1] == odd, "\(fix)")
            let configIndex = try #require(words.firstIndex(of: "--config"), "\(fix)")
            #expect(words[configIndex + 1] == config)
            let actor = try #require(words.firstIndex(of: "--actor"), "\(fix)")
            #expect(words[actor + 1] == "pat o'neil")
        }
    }

    /// A 15 KB notification pasted at a terminal is read whole (not cut at 4,095 bytes), a
    /// prompt says what to do, and the terminal is back in canonical mode afterwards, also after a signal.
    @Test(.enabled(if: Examples.hasPython)) func pastingAtATerminalReadsTheWholeLine() throws {
        let jws = try Examples.exampleNotification()
        #expect(jws.utf8.count > 8192)
        let r = try Examples.onTerminal(["verify"] + Examples.exampleTrust, input: jws)
        #expect(r.screen.contains("paste the input"), "\(r.screen.suffix(2000))")
        #expect(r.screen.contains("VALID"), "\(r.screen.suffix(2000))")
        #expect(!r.screen.contains("segments"))
        #expect(r.status == 0)
        #expect(r.canonical)
        let interrupted = try Examples.onTerminal(["verify"] + Examples.exampleTrust, input: "", signal: SIGTERM)
        #expect(interrupted.canonical)
        let stopped = try Examples.onTerminal(["verify"] + Examples.exampleTrust, input: "", signal: SIGINT)
        #expect(stopped.canonical)
    }

    /// Copy-paste damage: a cut, wrapped or decoded paste gets a hint, not a forgery
    /// verdict; a byte-order mark is ignored.
    @Test func copyPasteDamageGetsAHint() throws {
        let cli = try CLI()
        let jws = try Examples.exampleNotification()
        let cut = try cli.run(["verify"] + Examples.exampleTrust, stdin: String(jws.prefix(4095)) + "\n")
        #expect(cut.status == 65)
        #expect(cut.stdout.contains("this looks cut short: 4095 bytes"), "\(cut)")
        #expect(cut.stdout.contains("not a forgery"))
        var wrapped = ""
        var rest = Substring(jws)
        while !rest.isEmpty {
            wrapped += rest.prefix(76) + "\n"
            rest = rest.dropFirst(76)
        }
        let folded = try cli.run(["verify"] + Examples.exampleTrust, stdin: wrapped + jws + "\n")
        #expect(folded.stdout.contains("wrapped at 76 columns"), "\(folded)")
        #expect(folded.stdout.contains("VALID"))  // the next line is read as usual
        #expect(folded.stdout.components(separatedBy: "REJECTED").count == 2)  // one error, not one per line
        let bom = try cli.run(["verify"] + Examples.exampleTrust, stdin: "\u{FEFF}" + jws + "\n")
        #expect(bom.status == 0, "\(bom)")
        let decoded = try cli.run(
            ["verify"] + Examples.exampleTrust, stdin: "{\"notificationType\":\"DID_RENEW\",\"data\":{\"bundleId\":\"x\"}}\n")
        #expect(decoded.stdout.contains("decoded payload"), "\(decoded)")
        #expect(!decoded.stdout.contains("signature"))
    }

    /// Audit ids where people look (orders show, contracts show, explain), audit list by
    /// user/order/contract/command, change sets undone whole or refused, a second undo named.
    @Test func auditIdsFiltersAndUndo() throws {
        let cli = try Examples.exampleDatabase()
        let contract = "2000000900000001"
        let order = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"
        let shown = try cli.ok(["orders", "show", order, "-o", "json"]).jsonObject()
        let changes = try #require(shown["changes"] as? [[String: Any]])
        #expect(!changes.isEmpty && changes.allSatisfy { $0["id"] is Int })
        #expect(try cli.ok(["contracts", "show", contract]).stdout.contains("AUDIT"))
        let explained = try cli.ok(["contracts", "explain", contract, "-o", "json"]).jsonObject()
        let steps = try #require(explained["trace"] as? [[String: Any]])
        #expect(steps.contains { ($0["audit_ids"] as? [Int])?.isEmpty == false })

        let all = try cli.ok(["audit", "list", "-o", "json"]).jsonArray()
        let byContract = try cli.ok(["audit", "list", "--contract", contract, "-o", "json"]).jsonArray()
        #expect(!byContract.isEmpty && byContract.count < all.count)
        #expect(byContract.allSatisfy { $0["key"] as? String == contract && $0["entity"] as? String == "contract" })
        let byOrder = try cli.ok(["audit", "list", "--order", "2000000900000001", "-o", "json"]).jsonArray()
        #expect(!byOrder.isEmpty && byOrder.allSatisfy { $0["key"] as? String == order })
        let byCommand = try cli.ok(["audit", "list", "--command", "orders", "-o", "json"]).jsonArray()
        #expect(!byCommand.isEmpty && byCommand.allSatisfy { ($0["command"] as? String)?.hasPrefix("orders ") == true })
        let byUser = try cli.ok(["audit", "list", "--user", "bob", "-o", "json"]).jsonArray()
        let bobs = Set(try cli.ok(["orders", "list", "--user", "bob", "-o", "json"]).jsonArray().compactMap { $0["no"] as? String })
            .union(["2000000900000002"])
        #expect(!byUser.isEmpty && byUser.allSatisfy { bobs.contains($0["key"] as? String ?? "") }, "\(byUser)")
        #expect(try cli.ok(["audit", "list", "--user", "bob", "--limit", "1", "-o", "json"]).jsonArray().count == 1)

        // An engine change set (one notification: the order and the contract) is undone whole or refused.
        let sets = Dictionary(grouping: all.filter { ($0["ledger_id"] as? Int) != nil }) { $0["ledger_id"] as! Int }
            .values.filter { $0.count == 2 }
        let purchase = try #require(sets.first { $0.first?["reason"] as? String == "SUBSCRIBED/INITIAL_BUY" })
        let refused = try cli.run(["audit", "undo", String(purchase[1]["id"] as! Int), "--reason", "test"])
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.stderr.contains("change set"))
        #expect(refused.stderr.contains("nothing was undone"))
        #expect(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().count == all.count)
        // A change set that can be undone is undone whole: each of its rows gets its undo row.
        for members in sets where members.first?["reason"] as? String != "SUBSCRIBED/INITIAL_BUY" {
            let ids = members.compactMap { $0["id"] as? Int }
            let r = try cli.run(["audit", "undo", String(ids[0]), "--reason", "test", "-q"])
            guard r.status == 0 else { continue }
            let commands = Set(try cli.ok(["audit", "list", "-o", "json"]).jsonArray().compactMap { $0["command"] as? String })
            for id in ids { #expect(commands.contains("audit undo \(id)"), "\(ids)") }
            break
        }

        // Undoing twice names the first undo.
        try cli.ok(["orders", "update", order, "--status", "refunded", "--reason", "mistake", "-q"])
        let mistake = try #require(try cli.ok(["audit", "list", "--limit", "1", "-o", "json"]).jsonArray().first?["id"] as? Int)
        try cli.ok(["audit", "undo", String(mistake), "--reason", "undo it", "-q"])
        let undo = try #require(try cli.ok(["audit", "list", "--limit", "1", "-o", "json"]).jsonArray().first?["id"] as? Int)
        let again = try cli.run(["audit", "undo", String(mistake), "--reason", "undo it again"])
        #expect(again.status == 4)
        #expect(again.stderr.contains("already undone by #\(undo)"), "\(again)")
    }

    /// First contact (no arguments, version), one naming for machine output, one
    /// form of `changes` in CSV, auto-renew one way, -q still says why, trust errors in plain words.
    @Test func firstContactAndOneNaming() throws {
        let cli = try CLI()
        let bare = try cli.run([])
        #expect(bare.status == 0 && bare.stdout.contains("Usage: iapctl <command>"))
        #expect(try cli.ok(["version"]).stdout == "iapctl 0.1.0\n")
        let notifications = CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson").path
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--from", CLI.packageRoot.appendingPathComponent("examples/orders.ndjson").path, "-q"])
        let ndjson = try cli.run(["notify", notifications, "-o", "ndjson"] + Examples.exampleTrust)
        #expect(ndjson.status == 1)
        for item in try ndjson.ndjson() {
            for key in item.keys { #expect(key == key.lowercased(), "camelCase key \(key)") }
        }
        let renewal = try #require(try ndjson.ndjson().first { $0["subtype"] as? String == "AUTO_RENEW_DISABLED" })
        #expect((renewal["detail"] as? String)?.contains("auto_renew true → false") == true, "\(renewal)")
        // CSV: changes as text, the form audit rows use.
        let csv = try cli.run(["notify", notifications, "-o", "csv", "--dry-run"] + Examples.exampleTrust)
        #expect(csv.stdout.hasPrefix("line,verdict,notification_uuid,"))
        #expect(!csv.stdout.contains("[{"))
        // -q: a run that exits non-zero still says why, in one line.
        let quiet = try cli.run(["notify", notifications, "-q"] + Examples.exampleTrust)
        #expect(quiet.status == 1)
        #expect(quiet.stderr.split(separator: "\n").count == 1 && quiet.stderr.contains("unmatched"), "\(quiet)")
        // A chain that does not lead to the root in use: which root, and the option that sets it.
        let jws = try Examples.exampleNotification()
        let untrusted = try cli.run(["verify", "--bundle-id", "com.example.iapctl", "--environment", "Sandbox"], stdin: jws)
        #expect(untrusted.status != 0)
        #expect(untrusted.stdout.contains("Apple Root CA - G3 (built in)"), "\(untrusted)")
        #expect(untrusted.stdout.contains("--root-ca"))
        #expect(!untrusted.stdout.contains("unable to get local issuer"), "\(untrusted)")
    }

    /// `contracts show --as-of T` shows only values as of T.
    @Test func contractsShowAsOfShowsOnlyValuesOfThen() throws {
        let cli = try Examples.exampleDatabase()
        let then: Int64 = 1_744_675_200_000  // 2025-04-15T00:00:00Z
        let shown = try cli.ok(["contracts", "show", "2000000900000001", "--as-of", "2025-04-15T00:00:00Z", "-o", "json"])
            .jsonObject()
        let contract = try #require(shown["contract"] as? [String: Any])
        #expect(contract["status"] as? String == "active")
        let last = try #require(contract["last_event_date_ms"] as? Int64 ?? (contract["last_event_date_ms"] as? Int).map(Int64.init))
        #expect(last <= then, "\(contract)")
        #expect(contract["updated_at"] == nil && contract["created_at"] == nil)
        for order in shown["orders"] as? [[String: Any]] ?? [] {
            #expect(order["updated_at"] == nil && order["created_at"] == nil)
        }
        for event in shown["events"] as? [[String: Any]] ?? [] {
            #expect(((event["signed_date_ms"] as? Int).map(Int64.init) ?? .max) <= then)
        }
    }
}
