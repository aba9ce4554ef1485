import Foundation
import Testing

/// ASCII for a C locale, a semicolon CSV header named, doctor's fix for a trade_no
/// cleared by hand.
@Suite("a C locale, a semicolon CSV header, a trade_no cleared by hand, settings and hints", .serialized)
struct LocaleCSVAndHandEditTests {
    /// The number of alice's first renewal order (trade_no 2000000900000011; made by notify).
    static func renewalOrder(_ cli: CLI) throws -> String {
        let orders = try cli.ok(["orders", "list", "--user", "alice", "-o", "json"]).jsonArray()
        return try #require(orders.first { $0["trade_no"] as? String == "2000000900000011" }?["no"] as? String)
    }

    @Test(.enabled(if: Examples.hasPython)) func aCLocaleTerminalGetsASCII() throws {
        let cli = try Examples.exampleDatabase()
        let renewal = try Self.renewalOrder(cli)
        let args = ["orders", "update", renewal, "--trade-no", "", "--reason", "locale test"]
        let r = try Examples.onTerminal(
            args, input: "", columns: 100, environment: cli.environment.merging(["LC_ALL": "C"]) { $1 })
        #expect(r.status == 0, "\(r.screen)")
        #expect(r.screen.contains("trade_no: 2000000900000011 -> (none)"), "\(r.screen)")
        #expect(!r.screen.contains("→") && !r.screen.contains("∅"))
        // A UTF-8 locale keeps the symbols.
        let utf8 = try Examples.onTerminal(
            ["orders", "update", renewal, "--trade-no", "2000000900000011", "--reason", "back"], input: "",
            columns: 100, environment: cli.environment)
        #expect(utf8.screen.contains("∅ → 2000000900000011"), "\(utf8.screen)")
    }

    @Test func aSemicolonHeaderIsNamed() throws {
        let cli = try Examples.exampleDatabase()
        let file = cli.dir.appendingPathComponent("fix.csv").path
        try "trade_no;status\r\n2000000900000001;refunded\r\n".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try cli.run(["orders", "update", "--from", file, "--reason", "x"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("line 1: the header has one column 'trade_no;status': use commas"), "\(r.stderr)")
        #expect(r.stderr.contains("trade_no,status"))
    }

    @Test func aTradeNoClearedByHandIsUndoneNotDemoted() throws {
        let cli = try Examples.exampleDatabase()
        let renewal = try Self.renewalOrder(cli)
        try cli.ok(["orders", "update", renewal, "--trade-no", "", "--reason", "cleared by mistake"])
        let doctor = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        let findings = try #require(try doctor.jsonObject()["findings"] as? [[String: Any]], "\(doctor)")
        let finding = try #require(findings.first { $0["key"] as? String == renewal }, "\(findings)")
        let fix = try #require(finding["fix"] as? String)
        #expect(fix.hasPrefix("iapctl audit undo "), "\(fix)")
        #expect(!fix.contains("--status pending"))
        #expect((finding["problem"] as? String ?? "").contains("cleared by hand"))
        // The fix, run as doctor wrote it, puts the transaction back and the finding goes.
        let words = try Examples.shellWords(fix)
        try cli.ok(Array(words.dropFirst()))
        #expect(try Self.renewalOrder(cli) == renewal)
        let again = try cli.run(["doctor", "--environment", "Sandbox", "-o", "json"])
        let left = try #require(try again.jsonObject()["findings"] as? [[String: Any]])
        #expect(!left.contains { $0["key"] as? String == renewal }, "\(left)")
    }

    /// A config file named on the command line whose value loses to an exported variable says so.
    @Test func aConfigFileOverriddenByTheEnvironmentIsWarned() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let config = cli.dir.appendingPathComponent("other.json").path
        try "{\"db\": \"other.db\", \"actor\": \"pat\"}".write(toFile: config, atomically: true, encoding: .utf8)
        let r = try cli.run(["db", "status", "--config", config])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("warning: \(config) sets 'db', but the exported IAPCTL_DB wins"), "\(r.stderr)")
        #expect(!r.stderr.contains("'actor'"))
        // Given on the command line, the value is chosen: no warning.
        let chosen = try cli.run(["db", "status", "--config", config, "--db", cli.environment["IAPCTL_DB"]!])
        #expect(!chosen.stderr.contains("warning"), "\(chosen.stderr)")
    }

    /// `orders update --from` names each change's audit row, the id `audit undo` takes.
    @Test func aBatchCorrectionPrintsItsAuditIds() throws {
        let cli = try Examples.exampleDatabase()
        let file = cli.dir.appendingPathComponent("fix.csv").path
        try "trade_no,status\n2000000900000001,refunded\n".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try cli.ok(["orders", "update", "--from", file, "--reason", "batch"])
        let id = try #require(r.stdout.firstMatch(of: /: updated \(audit #(\d+)\)/)?.1, "\(r.stdout)")
        let audit = try cli.ok(["audit", "show", String(id), "-o", "json"]).jsonObject()
        #expect(audit["reason"] as? String == "batch" || "\(audit)".contains("batch"), "\(audit)")
        try cli.ok(["audit", "undo", String(id), "--reason", "undo the batch"])
        let json = try cli.ok(["orders", "update", "--from", file, "--reason", "again", "-o", "json"]).jsonArray()
        #expect(json.first?["audit_id"] is Int, "\(json)")
    }

    /// An unknown key's hint fits its shape: a receipt e-mail's order ID goes to `apple lookup`
    /// (`apple transactions history` takes a transaction id), a transaction id to its history.
    @Test func unknownOrderKeyHintFitsItsShape() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let orderId = try cli.run(["orders", "show", "MK5TTTVWJH"])
        #expect(orderId.status != 0)
        #expect(orderId.stderr.contains("iapctl apple lookup MK5TTTVWJH"), "\(orderId.stderr)")
        #expect(!orderId.stderr.contains("transactions history"), "\(orderId.stderr)")
        let transaction = try cli.run(["orders", "show", "2000000900000099"])
        #expect(transaction.stderr.contains("iapctl apple transactions history 2000000900000099"), "\(transaction.stderr)")
        let other = try cli.run(["orders", "show", "no-such-order"])
        #expect(!other.stderr.contains("apple "), "\(other.stderr)")
        #expect(other.stderr.contains("iapctl orders list --user USER"), "\(other.stderr)")
    }

    /// A database in a folder that does not exist: the first hint works as printed (mkdir first).
    @Test func aMissingFolderIsInTheFirstHint() throws {
        let cli = try CLI()
        let listed = try cli.run(["orders", "list", "--db", "nope/shop.db"])
        #expect(listed.status == 66, "\(listed)")
        #expect(listed.stderr.contains("hint: create both with: mkdir -p nope && iapctl db init --db nope/shop.db"), "\(listed.stderr)")
        let made = try cli.run(["db", "init", "-q", "--db", "nope/shop.db"])
        #expect(made.status != 0, "db init alone fails while the folder is missing: \(made)")
    }
}
