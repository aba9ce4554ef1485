import Foundation
import StoreTestSupport
import Testing

/// Start-up: libsqlite3 is loaded when a command opens an SQLite database, and libcrypto
/// when one first hashes or checks a signature, not when iapctl starts; when one cannot be loaded,
/// the command that needs it is refused naming the library and the package to install, and
/// commands that do not need it still run.
@Suite("start-up: libsqlite3 and libcrypto loaded on first use, end to end")
struct StartupTests {
    /// The libraries the dynamic loader reports loading for one run (`LD_DEBUG=libs`, on stderr).
    static func loaded(_ cli: CLI, _ args: [String]) throws -> (result: CLI.Result, libraries: Set<String>) {
        let result = try cli.run(args, env: ["LD_DEBUG": "libs"])
        // "   1234:\tfind library=libsqlite3.so.0 [0]; searching" — for DT_NEEDED and dlopen alike.
        let names = result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "find library=") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
        return (result, Set(names))
    }

    /// The environment in which `library` is found first but cannot be loaded (an empty file through
    /// LD_LIBRARY_PATH): a machine without its package. `--version` still runs there.
    static func unloadable(_ library: String, _ cli: CLI) throws -> [String: String] {
        let folder = cli.path("lib")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/" + library, contents: Data())
        let env = ["LD_LIBRARY_PATH": folder]
        let version = try cli.run(["--version"], env: env)
        #expect(version.status == 0, "\(version)")
        #expect(version.stdout.hasPrefix("iapctl "))
        return env
    }

    @Test func versionLoadsNeitherOpeningADatabaseLoadsSQLiteAndVerifyLoadsCrypto() throws {
        let cli = try CLI()
        let version = try Self.loaded(cli, ["--version"])
        #expect(version.result.status == 0, "\(version.result)")
        // The loader's report was seen at all (libc is always looked up by name).
        #expect(version.libraries.contains("libc.so.6"), "\(version.result)")
        #expect(!version.libraries.contains(where: { $0.hasPrefix("libsqlite3") }), "\(version.libraries)")
        #expect(!version.libraries.contains(where: { $0.hasPrefix("libcrypto") }), "\(version.libraries)")

        let initialised = try Self.loaded(cli, ["db", "init", "-q", "--db", cli.path("startup.db")])
        #expect(initialised.result.status == 0, "\(initialised.result)")
        #expect(initialised.libraries.contains("libsqlite3.so.0"), "\(initialised.libraries)")

        // verify reads its trusted root (the built-in Apple root) with libcrypto, even for a JWS it refuses.
        let jws = try cli.write("one.jws", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA\n")
        let verified = try Self.loaded(cli, ["verify", jws, "--bundle-id", "com.example", "--environment", "Sandbox"])
        #expect(verified.libraries.contains("libcrypto.so.3"), "\(verified.libraries)")
    }

    /// The same for libcrypto: `verify` of a JWS cannot run without it and says which package brings it.
    @Test func anUnloadableCryptoLibraryIsRefusedByNameAndThePackageToInstall() throws {
        let cli = try CLI()
        let env = try Self.unloadable("libcrypto.so.3", cli)

        let jws = try cli.write("one.jws", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA\n")
        let refused = try cli.run(["verify", jws, "--bundle-id", "com.example", "--environment", "Sandbox"], env: env)
        #expect(refused.status == 70, "\(refused)")
        #expect(refused.stderr.contains("cannot load the OpenSSL library (libcrypto.so.3)"), "\(refused)")
        #expect(refused.stderr.contains("install Debian's libssl3"), "\(refused)")
    }

    /// The built binary stays position-independent (the loader places it at a random address: ASLR)
    /// and carries its 42,000 relative relocations packed (DT_RELR, lld's `-z pack-relative-relocs`
    /// in Package.swift) instead of as a 1 MB table read at every start.
    @Test(.enabled(if: Programs.which("readelf") != nil, "readelf (binutils) is not installed"))
    func theBinaryIsPositionIndependentWithPackedRelocations() throws {
        let dynamic = try Programs.run(Programs.which("readelf")!, ["--dynamic", CLI.binary.path])
        #expect(dynamic.status == 0, "\(dynamic.output)")
        let entries = dynamic.output.split(separator: "\n")
        #expect(entries.contains { $0.contains("(FLAGS_1)") && $0.contains("PIE") }, "\(dynamic.output)")
        #expect(entries.contains { $0.contains("(RELR)") }, "\(dynamic.output)")
        #expect(entries.contains { $0.contains("(RELRSZ)") }, "\(dynamic.output)")
    }

    /// Without Debian's libsqlite3-0, every command that opens an SQLite database is refused by name.
    @Test func anUnloadableSQLiteLibraryIsRefusedByNameAndThePackageToInstall() throws {
        let cli = try CLI()
        let env = try Self.unloadable("libsqlite3.so.0", cli)

        let never = cli.path("never.db")
        let existing = cli.path("existing.db")
        try cli.ok(["db", "init", "-q", "--db", existing])
        for args in [["db", "init", "--db", never], ["orders", "list", "--db", existing]] {
            let refused = try cli.run(args, env: env)
            #expect(refused.status == 70, "\(args): \(refused)")
            #expect(refused.stderr.contains("cannot load the SQLite library (libsqlite3.so.0)"), "\(args): \(refused)")
            #expect(refused.stderr.contains("install Debian's libsqlite3-0"), "\(args): \(refused)")
            #expect(refused.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: never))
    }
}
