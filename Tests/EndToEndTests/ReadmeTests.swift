import Foundation
import Testing

/// The repository's guides as a shell reads their commands: `\`-continued lines joined, spaces
/// squeezed. A test that runs a documented command first checks the guide still shows it.
enum Guide {
    static func text(_ path: String) -> String {
        let text = (try? String(contentsOf: CLI.packageRoot.appendingPathComponent(path), encoding: .utf8)) ?? ""
        return text.replacingOccurrences(of: "\\\n", with: " ").split(separator: " ", omittingEmptySubsequences: true).joined(
            separator: " ")
    }

    static let readme = text("README.md")
    static let receipts = text("docs/receipts.md")
    static let database = text("docs/database.md")
    static let appleSetup = text("docs/apple-setup.md")

    /// `iapctl …` as written in a guide, as arguments; fails the test when the guide no longer shows it.
    static func command(_ line: String, in guide: String, _ name: String) -> [String] {
        #expect(guide.contains(line), "\(name) no longer shows: \(line)")
        return shellWords(String(line.dropFirst("iapctl ".count)))
    }

    /// Splits a command line on spaces, honouring double quotes (enough for the guides).
    static func shellWords(_ line: String) -> [String] {
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

/// The README's tour runs as shown: each command below appears in README.md (a README edit that
/// drops or changes one fails here) and gives the exit status and output the README shows.
@Suite("README tour")
struct ReadmeTests {
    static let readme = Guide.readme

    /// `iapctl …` as written in the README (with the repo-relative paths it uses).
    func command(_ line: String) -> [String] { Guide.command(line, in: Self.readme, "README.md") }

    @Test func theTourRunsAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        // Run from the package root so examples/ and Tests/ paths resolve as in the README.
        func run(_ line: String) throws -> CLI.Result {
            try cli.run(
                ["--db", cli.dbPath] + command(line).map { $0.hasPrefix("examples/") || $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 })
        }
        let initialized = try run("iapctl db init")
        #expect(initialized.status == 0)
        // The README shows the schema version a fresh database gets.
        let version = try #require(initialized.stderr.split(separator: " ").last.map { $0.dropLast(2) }, "\(initialized)")
        #expect(version.hasPrefix("v"), "\(initialized)")
        #expect(Self.readme.contains("created tour.db (schema \(version))"), "README.md shows another schema version than \(version)")
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

        // The support questions, on the tour's database.
        let explain = try run("iapctl contracts explain 2000000900000002")
        #expect(explain.status == 0, "\(explain)")
        #expect(explain.stdout.contains("revoked"), "\(explain)")
        let entitled = try run("iapctl entitled --user alice --at 2025-05-20T00:00:00Z")
        #expect(entitled.status == 0, "\(entitled)")
        let then = try run("iapctl contracts show 2000000900000001 --as-of 2025-05-20T00:00:00Z")
        #expect(then.status == 0, "\(then)")
        #expect(then.stdout.contains("active"), "\(then)")
        let audit = try run("iapctl audit list --user alice --command notify")
        #expect(audit.status == 0, "\(audit)")
        #expect(audit.stdout.contains("7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"), "\(audit)")
        let doctor = try run("iapctl doctor --environment Sandbox")
        #expect(doctor.status == 0, "\(doctor)")
        let redacted = try run("iapctl orders show 7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e --redact")
        #expect(redacted.status == 0, "\(redacted)")
        #expect(!redacted.stdout.contains("7b1f0c1e"), "\(redacted)")

        // One customer from any id, a note, and a risk filter.
        let customer = try run("iapctl customer 2000000900000002 --redact")
        #expect(customer.status == 0, "\(customer)")
        #expect(customer.stdout.contains("Contracts (1)") && !customer.stdout.contains("bob"), "\(customer)")
        let note = try run("iapctl customer note add alice --text \"charged twice, refund asked from Apple\" --ticket T-1042")
        #expect(note.status == 0, "\(note)")
        #expect(try run("iapctl customer note list alice").stdout.contains("charged twice"))
        let risk = try run("iapctl contracts list --risk billing-retry")
        #expect(risk.status == 0 && risk.stderr.contains("no contracts at risk billing-retry"), "\(risk)")
    }
}

/// docs/receipts.md's receipt verifies as shown, line for line.
@Suite("docs/receipts.md example")
struct ReceiptGuideTests {
    @Test func theReceiptExampleRunsAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        let line =
            "iapctl verify Tests/EndToEndTests/Fixtures/receipts/receipt-sandbox-g5 --bundle-id dev.bonzer.weeka.app --environment Sandbox"
        let result = try cli.run(
            Guide.command(line, in: Guide.receipts, "docs/receipts.md").map { $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 })
        #expect(result.status == 0, "\(result)")
        for printed in result.lines {
            #expect(
                Guide.receipts.contains(printed.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")),
                "docs/receipts.md lacks: \(printed)")
        }
        let now = try cli.run(
            Guide.command(line, in: Guide.receipts, "docs/receipts.md").map { $0.hasPrefix("Tests/") ? root + "/" + $0 : $0 } + [
                "--at", "now",
            ])
        #expect(now.status == 2)
    }
}

/// docs/database.md: a hand change's reason and before/after, straight from SQL.
@Suite("docs/database.md: reading a hand change in SQL")
struct DatabaseGuideTests {
    @Test(.sqlClient)
    func aHandChangeReadsInSQLAsShown() throws {
        let cli = try CLI()
        let root = CLI.packageRoot.path
        #expect(try cli.run(["db", "init"]).status == 0)
        #expect(try cli.run(["orders", "create", "--from", root + "/examples/orders.ndjson"]).status == 0)
        let line =
            #"iapctl orders update 7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e --status refunded --reason "refund by hand, Apple refund confirmed by mail" --ticket T-1042 --actor alice"#
        #expect(Guide.database.contains(line), "docs/database.md no longer shows: \(line)")
        let update = try cli.run(Guide.shellWords(String(line.dropFirst("iapctl ".count))))
        #expect(update.status == 0, "\(update)")
        let query =
            "SELECT actor, command, reason, ticket, before_json, after_json FROM iap_audit WHERE ticket = 'T-1042'"
        #expect(Guide.database.contains(#"sqlite3 -line iapctl.db ""# + query + #"""#))
        let output: String
        if cli.server != nil {
            // The server client's batch output: one tab-separated row, the columns in the query's order.
            let row = try cli.sql(query).trimmingCharacters(in: .newlines)
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
            #expect(Guide.database.contains("\(key) = \(value)"), "docs/database.md shows \(key) = \(value)")
        }
        #expect(fields["before_json"]?.contains(#""status":"pending""#) == true, "\(output)")
        #expect(fields["after_json"]?.contains(#""status":"refunded""#) == true, "\(output)")
        #expect(fields["after_json"]?.contains(#""userId":"alice""#) == true, "\(output)")
    }
}
