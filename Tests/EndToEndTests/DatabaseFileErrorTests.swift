import Foundation
import Testing

/// Errors about the database file name the path and the part that is wrong, say what
/// to do, and exit with the contract's code (no "corrupt", no database-server hint).
@Suite("database file errors, end to end")
struct DatabaseFileErrorTests {
    /// Running as another user needs root and setpriv(1) (root itself bypasses file permissions).
    static var canSwitchUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    /// A text file given as --db is "not an iapctl database" (exit 65: the file is there but
    /// its content has the wrong shape), with the path and how to point --db elsewhere.
    @Test func aFileThatIsNotSQLiteIsNamedAndNotCalledCorrupt() throws {
        let cli = try CLI()
        let notes = try cli.write("notes.txt", "meeting notes: call alice about her refund\n")
        for args in [["orders", "list"], ["orders", "create", "--user", "a", "--product", "p"], ["db", "init"]] {
            let r = try cli.run(args + ["--db", notes])
            #expect(r.status == 65, "\(args): \(r)")
            #expect(r.stderr.contains("\(notes) is not an iapctl database"), "\(args): \(r)")
            #expect(r.stderr.contains("not an SQLite database"))
            #expect(r.stderr.contains("--db") && r.stderr.contains("IAPCTL_DB"))
            #expect(r.stderr.contains("iapctl db init --db"))
            #expect(!r.stderr.contains("corrupt"))
            #expect(!r.stderr.contains("server"))
        }
        // Left as it was.
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "meeting notes: call alice about her refund\n")
    }

    /// A database file this user cannot read is "permission denied" on that file, exit 78
    /// (the contract has no 77; 78 is what it gives refused privileges), with the fix.
    @Test(.enabled(if: canSwitchUser)) func anUnreadableFileIsPermissionDeniedOnThatFile() throws {
        let cli = try CLI()
        let db = cli.path("private.db")
        try cli.ok(["db", "init", "-q", "--db", db])
        #expect(chmod(db, 0o600) == 0)
        try Self.expectPermissionDenied(cli, db, naming: "cannot read the database file \(db)")
    }

    /// A folder on the path this user cannot enter is named as the part that is refused.
    @Test(.enabled(if: canSwitchUser)) func aFolderThatCannotBeEnteredIsNamed() throws {
        let cli = try CLI()
        let folder = cli.path("locked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let db = folder + "/x.db"
        try cli.ok(["db", "init", "-q", "--db", db])
        #expect(chmod(db, 0o644) == 0)
        #expect(chmod(folder, 0o700) == 0)
        try Self.expectPermissionDenied(cli, db, naming: "cannot enter the folder \(folder) ")
    }

    /// A look-up and a change on `db` as nobody: exit 78, "permission denied" on the part `naming`
    /// says, the fix (ls -l, ask for access, another --db), no database-server hint.
    static func expectPermissionDenied(_ cli: CLI, _ db: String, naming: String) throws {
        for args in [["orders", "list"], ["orders", "create", "--user", "a", "--product", "p"]] {
            let r = try cli.run(args + ["--db", db], asUser: 65534)
            #expect(r.status == 78, "\(args): \(r)")
            #expect(r.stderr.contains("permission denied"), "\(r)")
            #expect(r.stderr.contains(naming), "\(r)")
            #expect(r.stderr.contains("ls -l") && r.stderr.contains("access") && r.stderr.contains("--db"))
            #expect(!r.stderr.contains("server"))
        }
    }

    /// `db init` into a missing folder says the folder is missing and creates nothing.
    @Test func dbInitIntoAMissingFolderSaysSo() throws {
        let cli = try CLI()
        let r = try cli.run(["db", "init", "--db", "nope/x.db"])
        #expect(r.status == 66, "\(r)")
        #expect(r.stderr.contains("the folder nope does not exist"), "\(r)")
        #expect(r.stderr.contains("mkdir -p nope"))
        #expect(!cli.exists("nope"))
    }

    /// With no --db and no IAPCTL_DB, the error says it looked for iapctl.db in the
    /// current folder and how to point elsewhere.
    @Test func theDefaultDatabaseErrorSaysWhereItLooked() throws {
        let cli = try CLI()
        cli.environment["IAPCTL_DB"] = nil
        let r = try cli.run(["orders", "list"])
        #expect(r.status == 66, "\(r)")
        let first = r.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("no iapctl.db in the current folder"), "\(r)")
        #expect(r.stderr.contains("--db") && r.stderr.contains("IAPCTL_DB"))
        #expect(r.stderr.contains("iapctl db init"))
        // An explicit --db keeps naming that path.
        let named = try cli.run(["orders", "list", "--db", "elsewhere.db"])
        #expect(named.status == 66)
        #expect(named.stderr.contains("database elsewhere.db does not exist"), "\(named)")
    }
}
