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
}
