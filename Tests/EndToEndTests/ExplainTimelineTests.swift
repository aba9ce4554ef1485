import Foundation
import Testing

/// `contracts explain`: WHY of a step is the rule and the audit rows holding its changes (not a
/// list of `∅ →` changes), and each row of the field table tells one event: its SIGNED, FROM,
/// STEP and FACT are of the same step.
@Suite("contracts explain: the rule in WHY, one event per field row", .serialized)
struct ExplainTimelineTests {
    static let contract = "2000000900000001"

    @Test func whyIsTheRuleAndTheChangesAreInAudit() throws {
        let cli = try Examples.exampleDatabase()
        let explained = try cli.ok(["contracts", "explain", Self.contract, "-o", "json"]).jsonObject()
        let trace = try #require(explained["trace"] as? [[String: Any]])
        let first = try #require(trace.first)
        let why = try #require(first["why"] as? String)
        #expect(first["verdict"] as? String == "applied")
        #expect(!why.contains("∅"), "\(why)")
        #expect(why.count < 140, "\(why)")
        let ids = try #require(first["audit_ids"] as? [Int])
        #expect(!ids.isEmpty && why.contains("audit #\(ids[0])"), "\(why)")
        // What the step changed is in the audit rows it names.
        let shown = try cli.ok(["audit", "show", String(ids[0]), "-o", "json"]).stdout
        #expect(shown.contains("\"before\""), "\(shown)")
        for columns in [80, 120] {
            let screen = try TerminalTablesTests.screen(cli, ["contracts", "explain", Self.contract], columns: columns)
            #expect(!screen.contains { $0.contains("∅ →") }, "\(columns): \(screen)")
            for line in screen { #expect(line.count <= columns, "\(columns): \(line)") }
        }
    }

    @Test func eachFieldRowIsOneEvent() throws {
        let cli = try Examples.exampleDatabase()
        // A renewal and a hand change after the purchase: facts, stored values and steps differ.
        try cli.ok(["contracts", "update", Self.contract, "--auto-renew", "off", "--reason", "asked", "-q"])
        let explained = try cli.ok(["contracts", "explain", Self.contract, "-o", "json"]).jsonObject()
        let trace = try #require(explained["trace"] as? [[String: Any]])
        let fields = try #require(explained["fields"] as? [[String: Any]])
        #expect(!fields.isEmpty)
        var checked = 0
        for field in fields {
            guard let step = field["fact_step"] as? Int else { continue }
            let event = trace[step - 1]
            // SIGNED of the row is the signedDate of the step it names.
            #expect(event["signed_date"] as? String == field["signed_date"] as? String, "\(field) vs \(event)")
            if field["source"] as? String == "hand" {
                #expect(event["verdict"] as? String == "audited", "\(field) vs \(event)")
            } else {
                #expect(event["verdict"] as? String == "applied", "\(field) vs \(event)")
            }
            checked += 1
        }
        #expect(checked == fields.count, "\(fields)")
        // The table's STEP column is that step.
        let lines = try TerminalTablesTests.screen(cli, ["contracts", "explain", Self.contract], columns: 120)
        let (header, rows) = try TerminalTablesTests.table(lines, header: "FIELD")
        #expect(header.contains("STEP"), "\(lines)")
        for field in fields {
            let name = try #require(field["field"] as? String)
            let row = try #require(rows.first { $0.hasPrefix("  \(name) ") || $0.hasPrefix("\(name) ") }, "\(rows)")
            let step = try #require(field["fact_step"] as? Int)
            #expect(row.contains(" \(step) "), "\(row)")
        }
    }
}
