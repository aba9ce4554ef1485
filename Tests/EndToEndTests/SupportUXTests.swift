import Foundation
import Testing

/// Issue #14: what support staff meet on their first day (read-only access, …).
@Suite("support staff UX, end to end")
struct SupportUXTests {
    static var canSwitchUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && E2EBackend.current == .sqlite
    }

    /// #14.6: a user with read access only (file 0644, folder 0555) can look everything up; a
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

    /// #14.6: readers never create files, not even where they could: another user's database in a
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

    /// #14.8: doctor's fix commands carry --db (and --config, --actor) shell-quoted, so pasted as
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
            let words = try Self.shellWords(command)
            #expect(words.first == "iapctl", "\(fix)")
            let db = try #require(words.firstIndex(of: "--db"), "\(fix)")
            #expect(words[db + 1] == odd, "\(fix)")
            let configIndex = try #require(words.firstIndex(of: "--config"), "\(fix)")
            #expect(words[configIndex + 1] == config)
            let actor = try #require(words.firstIndex(of: "--actor"), "\(fix)")
            #expect(words[actor + 1] == "pat o'neil")
        }
    }

    /// The words bash splits `command` into (nothing is run: printf shows them).
    static func shellWords(_ command: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let script = "set -- " + command + "; printf '%s\\0' \"$@\""
        process.arguments = ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\0").map(String.init)
    }
}
