import Foundation
import Testing

/// The README's tour runs as shown: each command below appears in README.md (a README edit that
/// drops or changes one fails here) and gives the exit status and output the README shows.
@Suite("README tour")
struct ReadmeTests {
    static let readme: String = {
        let text = (try? String(contentsOf: CLI.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
        // Join `\`-continued lines and squeeze spaces, as a shell would read them.
        return text.replacingOccurrences(of: "\\\n", with: " ").split(separator: " ", omittingEmptySubsequences: true).joined(
            separator: " ")
    }()

    /// `iapctl …` as written in the README (with the repo-relative paths it uses).
    func command(_ line: String) -> [String] {
        #expect(Self.readme.contains(line), "README.md no longer shows: \(line)")
        return shellWords(String(line.dropFirst("iapctl ".count)))
    }

    /// The StoreKit 1 section's receipt verifies as shown, line for line.
    @Test func theReceiptExampleRunsAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        let line =
            "iapctl verify Tests/EndToEndTests/Fixtures/receipts/receipt-sandbox-g5 --bundle-id dev.bonzer.weeka.app --environment Sandbox"
        let result = try cli.run(command(line).map { $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 })
        #expect(result.status == 0, "\(result)")
        for printed in result.lines {
            #expect(
                Self.readme.contains(printed.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")),
                "README lacks: \(printed)")
        }
        let now = try cli.run(command(line).map { $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 } + ["--at", "now"])
        #expect(now.status == 2)
    }

    @Test func theTourRunsAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        // Run from the package root so examples/ and Tests/ paths resolve as in the README.
        func run(_ line: String) throws -> CLI.Result {
            try cli.run(
                ["--db", cli.dbPath] + command(line).map { $0.hasPrefix("examples/") || $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 })
        }
        #expect(try run("iapctl db init").status == 0)
        let created = try run("iapctl orders create --user u42 --product com.example.app.monthly")
        #expect(created.status == 0)
        #expect(UUID(uuidString: created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
        let imported = try run("iapctl orders create --from examples/orders.ndjson")
        #expect(imported.lines == ["7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e", "a9c8e7d6-5b4a-4c3d-9e2f-1a0b9c8d7e6f"])

        let notify = try run(
            "iapctl notify examples/notifications.ndjson --root-ca examples/ca/root.pem --bundle-id com.example.iapctl --environment Sandbox"
        )
        #expect(notify.status == 1, "\(notify)")
        let verdicts = notify.lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }
        #expect(
            verdicts == [
                "ignored", "applied", "applied", "applied", "applied", "applied", "applied", "duplicate", "unmatched", "applied", "applied",
            ])
        #expect(notify.stderr.contains("notify: 11 items: 8 applied, 1 duplicate, 1 ignored, 1 unmatched"))
        #expect(Self.readme.contains("notify: 11 items: 8 applied, 1 duplicate, 1 ignored, 1 unmatched"))

        let orders = try run("iapctl orders list")
        #expect(orders.lines.count == 7)
        #expect(orders.stdout.contains("refunded  2000000900000012"))
        let contracts = try run("iapctl contracts list")
        #expect(
            contracts.stdout.contains(
                "2000000900000002  bob    com.example.iapctl.premium.monthly  revoked  true        2025-05-10T14:00:00Z"))
        #expect(
            contracts.stdout.contains(
                "2000000900000001  alice  com.example.iapctl.monthly          expired  false       2025-06-01T10:00:00Z"))
        #expect(try run("iapctl contracts show 2000000900000001").status == 0)
        #expect(try run("iapctl orders show 2000000900000001").status == 0)

        let dry = try cli.run([
            "--db", cli.dbPath, "orders", "update", "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e", "--status", "refunded", "--reason",
            "refund by hand, Apple refund confirmed by mail", "--ticket", "T-1042", "--dry-run",
        ])
        #expect(Self.readme.contains("iapctl orders update 7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e --status refunded"))
        #expect(dry.status == 0)
        #expect(dry.stdout.contains("status: paid → refunded"))
        let missing = try run("iapctl orders show nope")
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("error: no order with no, trade_no or origin_no = nope"))

        let verify = try run(
            "iapctl verify Tests/EndToEndTests/Fixtures/real/01-loki-test.jws --bundle-id com.loki-project.loki-messenger --environment Sandbox"
        )
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("line 1: notification TEST: VALID"))
        #expect(verify.stdout.contains("\"signedDate\": \"2025-09-05T01:24:32.686Z (1757035472686)\""))

        let restore = try run(
            "iapctl restore --user alice examples/restored.ndjson --root-ca examples/ca/root.pem --bundle-id com.example.iapctl --environment Sandbox"
        )
        #expect(restore.status == 1)
        #expect(
            restore.stdout.contains(
                "restorable      transaction-id  7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e  2000000900000001  alice  expired  2025-06-01T10:00:00Z"
            ))
        #expect(
            restore.stdout.contains(
                "owned-by-other  transaction-id  a9c8e7d6-5b4a-4c3d-9e2f-1a0b9c8d7e6f  2000000900000002  bob    revoked  2025-05-10T14:00:00Z"
            ))
    }

    /// Splits a command line on spaces, honouring double quotes (enough for the README).
    func shellWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        for c in line {
            if c == "\"" { quoted.toggle(); continue }
            if c == " " && !quoted {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}

/// The README's database section: a hand change's reason and before/after, straight from SQL.
@Suite("README database section")
struct ReadmeDatabaseTests {
    @Test(.enabled(if: E2EBackend.current == .mysql || FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func aHandChangeReadsInSQLAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        #expect(try cli.run(["db", "init"]).status == 0)
        #expect(try cli.run(["orders", "create", "--from", root + "/examples/orders.ndjson"]).status == 0)
        let line =
            #"iapctl orders update 7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e --status refunded --reason "refund by hand, Apple refund confirmed by mail" --ticket T-1042 --actor alice"#
        #expect(ReadmeTests.readme.contains(line), "README.md no longer shows: \(line)")
        let update = try cli.run(ReadmeTests().shellWords(String(line.dropFirst("iapctl ".count))))
        #expect(update.status == 0, "\(update)")
        let query =
            "SELECT actor, command, reason, ticket, before_json, after_json FROM iap_audit WHERE ticket = 'T-1042'"
        #expect(ReadmeTests.readme.contains(#"sqlite3 -line iapctl.db ""# + query + #"""#))
        let output: String
        if let mysql = cli.mysql {
            // The client's batch output: one tab-separated row, the columns in the query's order.
            let row = try mysql.server.run(query, database: mysql.database).trimmingCharacters(in: .newlines)
            let keys = ["actor", "command", "reason", "ticket", "before_json", "after_json"]
            output = zip(keys, row.split(separator: "\t", omittingEmptySubsequences: false)).map { "\($0) = \($1)" }.joined(
                separator: "\n")
        } else {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = ["-line", cli.dbPath, query]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            output = String(decoding: data, as: UTF8.self)
        }
        let fields = Dictionary(
            output.split(separator: "\n").compactMap { row -> (String, String)? in
                guard let colon = row.firstIndex(of: "=") else { return nil }
                return (
                    row[..<colon].trimmingCharacters(in: .whitespaces),
                    row[row.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            }, uniquingKeysWith: { first, _ in first })
        for key in ["actor", "command", "reason", "ticket"] {
            let value = try #require(fields[key], "\(key) in \(output)")
            #expect(ReadmeTests.readme.contains("\(key) = \(value)"), "README shows \(key) = \(value)")
        }
        #expect(fields["before_json"]?.contains(#""status":"pending""#) == true, "\(output)")
        #expect(fields["after_json"]?.contains(#""status":"refunded""#) == true, "\(output)")
        #expect(fields["after_json"]?.contains(#""userId":"alice""#) == true, "\(output)")
    }
}
