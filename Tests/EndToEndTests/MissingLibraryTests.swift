import Foundation
import StoreTestSupport
import Testing

/// Every C library iapctl loads with dlopen (the bindings scripts/c-bindings generates) follows one
/// policy when it cannot be loaded: the command that needs it is refused naming the library and the
/// Debian package, with exit 69 (unavailable), and nothing is stored; commands that do not need it
/// still run. A library is made unloadable by an empty file of its soname found first through
/// LD_LIBRARY_PATH (a machine with a damaged package); the loader's message then says why and to
/// reinstall the package.
@Suite("a missing C library: refused by name and package, exit 69, nothing stored")
struct MissingLibraryTests {
    /// The environment in which `library` is found first but cannot be loaded. `--version` still
    /// runs there.
    static func unloadable(_ library: String, _ cli: CLI) throws -> [String: String] {
        let folder = cli.path("lib-\(library)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/" + library, contents: Data())
        let env = ["LD_LIBRARY_PATH": folder]
        let version = try cli.run(["--version"], env: env)
        #expect(version.status == 0, "\(version)")
        #expect(version.stdout.hasPrefix("iapctl "))
        return env
    }

    /// The one refusal: exit 69, the library, why, and the package to reinstall; nothing on stdout.
    static func expectRefused(
        _ result: CLI.Result, _ library: String, _ package: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 69, "\(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("error: \(library) cannot be loaded ("), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("file too short"), "\(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("): apt-get install --reinstall \(package)"), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    func ledgerCount(_ cli: CLI) throws -> Int? {
        try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int
    }

    @Test func withoutSQLiteNoDatabaseIsOpenedOrCreated() throws {
        let cli = try CLI()
        let env = try Self.unloadable("libsqlite3.so.0", cli)
        let never = cli.path("never.db")
        let existing = cli.path("existing.db")
        try cli.ok(["db", "init", "-q", "--db", existing])
        for args in [["db", "init", "--db", never], ["orders", "list", "--db", existing]] {
            Self.expectRefused(try cli.run(args, env: env), "libsqlite3.so.0", "libsqlite3-0")
        }
        #expect(!FileManager.default.fileExists(atPath: never))
    }

    @Test func withoutMariaDBsClientNoConnectionIsTried() throws {
        let cli = try CLI()
        let env = try Self.unloadable("libmariadb.so.3", cli)
        // Port 9 (discard): were a connection tried, the error would be the server's, not the library's.
        let url = "mysql://iapctl@127.0.0.1:9/iapctl"
        for args in [["db", "init", "--db", url], ["orders", "list", "--db", url]] {
            Self.expectRefused(try cli.run(args, env: env), "libmariadb.so.3", "libmariadb3")
        }
    }

    @Test func withoutLibcryptoNothingIsVerified() throws {
        let cli = try CLI()
        let env = try Self.unloadable("libcrypto.so.3", cli)
        let jws = try cli.write("one.jws", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA\n")
        let refused = try cli.run(["verify", jws, "--bundle-id", "com.example", "--environment", "Sandbox"], env: env)
        Self.expectRefused(refused, "libcrypto.so.3", "libssl3")
    }

    /// The ledger keeps every raw as a zstd frame: without libzstd a notification is refused whole
    /// (not stored unpacked), and a stored raw is refused too, not reported corrupt (exit 65).
    @Test func withoutZstdNothingIsStoredAndNoStoredRawIsTakenForCorrupt() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = UUID().uuidString.lowercased()
        try world.database(orders: [(token, "alice")])
        let note = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: world.transaction("5000", original: "5000", token: token))
        let before = try world.tables(maskGeneratedNumbers: [token])
        let env = try Self.unloadable("libzstd.so.1", cli)

        Self.expectRefused(try cli.run(["notify"] + world.trust, stdin: note + "\n", env: env), "libzstd.so.1", "libzstd1")
        #expect(try ledgerCount(cli) == 0)
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before, "nothing changed")

        try cli.ok(["notify"] + world.trust, stdin: note + "\n")
        #expect(try ledgerCount(cli) == 1)
        Self.expectRefused(try cli.run(["audit", "raw", "1"], env: env), "libzstd.so.1", "libzstd1")
        #expect(try cli.ok(["audit", "raw", "1"]).stdout.utf8.elementsEqual(note.utf8))
    }

    /// Apple's API over libcurl: without it no request is sent (and none retried).
    @Test func withoutLibcurlNoRequestIsSent() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        let env = try Self.unloadable("libcurl.so.4", cli)
        let refused = try cli.run(
            ["apple", "lookup", "MK5TTTVWJH", "--environment", "sandbox", "--root-ca", world.rootPath], env: env)
        Self.expectRefused(refused, "libcurl.so.4", "libcurl4")
        #expect(try server.requests().isEmpty)
    }
}
