import Foundation
import Testing

@Suite("E2E harness")
struct HarnessTests {
    @Test func runsTheBinaryAndCapturesOutputAndStatus() throws {
        let cli = try CLI()
        let version = try cli.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("iapctl "))
        let bad = try cli.run(["no-such-command"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("error:"))
    }

    /// The prepared copy most tests start from is the database `db init` makes: `db init` finds it
    /// current, `db status` reads the same, and on MySQL every table's columns, keys, checks and
    /// foreign keys are the same text.
    @Test func aPreparedDatabaseIsWhatDbInitMakes() throws {
        let copied = try CLI()
        try copied.initializeDatabase()
        let initialized = try CLI()
        try initialized.ok(["db", "init"])
        #expect(try copied.ok(["db", "init"]).stderr.contains("is up to date"))
        var status = try copied.ok(["db", "status", "-o", "json"]).jsonObject()
        var expected = try initialized.ok(["db", "status", "-o", "json"]).jsonObject()
        status["database"] = nil
        expected["database"] = nil
        #expect(NSDictionary(dictionary: status).isEqual(to: expected), "\(status) vs \(expected)")
        if let (server, database) = copied.mysql.map({ ($0.server, $0.database) }), let reference = initialized.mysql?.database {
            func tables(_ name: String) throws -> [String] {
                try server.run("SELECT table_name FROM information_schema.tables WHERE table_schema = '\(name)' ORDER BY table_name")
                    .split(separator: "\n").map { try server.run("SHOW CREATE TABLE `\($0)`", database: name) }
            }
            let made = try tables(reference)
            #expect(made.count >= 10)
            #expect(try tables(database) == made)
        }
    }
}
