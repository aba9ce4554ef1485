import Foundation
import StoreTestSupport
import Testing

/// Issue #25 (start-up): libsqlite3 is loaded when a command opens an SQLite database, and libcrypto
/// when one first hashes or checks a signature, not when iapctl starts (a library that cannot be
/// loaded: MissingLibraryTests).
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

    @Test func versionLoadsNeitherOpeningADatabaseLoadsSQLiteAndVerifyLoadsCrypto() throws {
        let cli = try CLI()
        let version = try Self.loaded(cli, ["--version"])
        #expect(version.result.status == 0, "\(version.result)")
        // The loader's report was seen at all (libc is always looked up by name).
        #expect(version.libraries.contains("libc.so.6"), "\(version.result)")
        // None of the libraries of the C bindings (Sources/C*/bindings.list).
        for library in ["libsqlite3", "libcrypto", "libmariadb", "libpq", "libzstd", "libz.", "libcurl"] {
            #expect(!version.libraries.contains(where: { $0.hasPrefix(library) }), "\(library): \(version.libraries)")
        }

        let initialised = try Self.loaded(cli, ["db", "init", "-q", "--db", cli.path("startup.db")])
        #expect(initialised.result.status == 0, "\(initialised.result)")
        #expect(initialised.libraries.contains("libsqlite3.so.0"), "\(initialised.libraries)")

        // verify reads its trusted root (the built-in Apple root) with libcrypto, even for a JWS it refuses.
        let jws = try cli.write("one.jws", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA\n")
        let verified = try Self.loaded(cli, ["verify", jws, "--bundle-id", "com.example", "--environment", "Sandbox"])
        #expect(verified.libraries.contains("libcrypto.so.3"), "\(verified.libraries)")
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
}
