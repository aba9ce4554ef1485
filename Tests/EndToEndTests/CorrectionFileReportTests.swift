import Foundation
import Testing

/// `orders update --from FILE` / `contracts update --from FILE` report every bad row in one run
/// (line, field, value and fix), name an order or contract the file names twice, suggest the value
/// a near miss meant, and write nothing while any row is bad.
@Suite("Correction files: every bad row in one report", .serialized)
struct CorrectionFileReportTests {
    static let alice = BatchUndoAndLongListsTests.alice
    static let bob = BatchUndoAndLongListsTests.bob

    /// The orders' (no, status, user) as stored, to show nothing changed.
    static func orders(_ cli: CLI) throws -> [String] {
        try cli.ok(["orders", "list", "-o", "json"]).jsonArray().map {
            "\($0["no"] ?? "") \($0["status"] ?? "") \($0["user_id"] ?? "")"
        }.sorted()
    }

    @Test func everyBadRowIsListedWithItsLineAndFix() throws {
        let cli = try Examples.exampleDatabase()
        let before = try Self.orders(cli)
        let csv = """
            no,status,user_id
            \(Self.alice),payed,
            \(Self.bob),refunded,
            00000000-0000-4000-8000-00000000dead,paid,
            \(Self.alice),,zed
            \(Self.bob),revoekd,

            """
        let r = try cli.run(["orders", "update", "--from", try cli.write("bad.csv", csv), "--reason", "r"])
        #expect(r.status == 65, "\(r)")
        // One report: how many rows are bad, each line with what is wrong and the fix.
        #expect(r.stderr.contains("4 of 5 rows of"), "\(r.stderr)")
        #expect(r.stderr.contains("nothing was changed"), "\(r.stderr)")
        #expect(r.stderr.contains("line 2: unknown status 'payed'"), "\(r.stderr)")
        #expect(r.stderr.contains("did you mean 'paid'?"), "\(r.stderr)")
        #expect(r.stderr.contains("line 4: no order with no = 00000000-0000-4000-8000-00000000dead"), "\(r.stderr)")
        #expect(r.stderr.contains("line 5: order \(Self.alice) is also on line 2"), "\(r.stderr)")
        #expect(r.stderr.contains("merge lines 2 and 5"), "\(r.stderr)")
        #expect(r.stderr.contains("line 6: unknown status 'revoekd'"), "\(r.stderr)")
        #expect(r.stderr.contains("did you mean 'revoked'?"), "\(r.stderr)")
        #expect(r.stderr.contains("line 6: order \(Self.bob) is also on line 3"), "\(r.stderr)")
        // In line order, each problem of a line (line 6 has two), and line 3 (good) is not reported.
        let reported = r.stderr.components(separatedBy: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: #"^  line (\d+):"#, options: .regularExpression) else { return nil }
            return Int(line[range].dropFirst(7).dropLast())
        }
        #expect(reported == [2, 4, 5, 6, 6], "\(r.stderr)")
        #expect(try Self.orders(cli) == before)
        // The same file as a dry run reports the same and writes nothing either.
        let dry = try cli.run(["orders", "update", "--from", try cli.write("bad2.csv", csv), "--reason", "r", "--dry-run"])
        #expect(dry.status == 65 && dry.stderr.contains("4 of 5 rows"), "\(dry)")
    }

    @Test func rowShapeAndValueProblemsShareTheReport() throws {
        let cli = try Examples.exampleDatabase()
        let before = try Self.orders(cli)
        let ndjson =
            [
                "{\"no\":\"\(Self.alice)\",\"stauts\":\"paid\"}",
                "{\"status\":\"paid\"}",
                "{\"no\":\"\(Self.bob)\",\"expires_date\":\"tomorrow\"}",
            ].joined(separator: "\n") + "\n"
        let r = try cli.run(["orders", "update", "--from", "-", "--reason", "r"], stdin: ndjson)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("3 of 3 rows of stdin are bad"), "\(r.stderr)")
        #expect(r.stderr.contains("line 1: unknown field 'stauts'") && r.stderr.contains("did you mean 'status'?"), "\(r.stderr)")
        #expect(r.stderr.contains("line 2: no no or trade_no to say which order"), "\(r.stderr)")
        #expect(r.stderr.contains("line 3: expires_date 'tomorrow' is not a time"), "\(r.stderr)")
        #expect(try Self.orders(cli) == before)
    }

    @Test func oneBadRowKeepsItsOwnErrorAndExitCode() throws {
        let cli = try Examples.exampleDatabase()
        let missing = try cli.run(
            ["orders", "update", "--from", "-", "--reason", "r"],
            stdin: "{\"no\":\"00000000-0000-4000-8000-00000000dead\",\"status\":\"paid\"}\n")
        #expect(missing.status == 3, "\(missing)")
        #expect(missing.stderr.contains("error: line 1: no order with no = 00000000-0000-4000-8000-00000000dead"))
        // One order named twice, once by its number and once by its transactionId: refused, naming both lines.
        let before = try Self.orders(cli)
        let twice = try cli.run(
            ["orders", "update", "--from", "-", "--reason", "r"],
            stdin: "{\"no\":\"\(Self.alice)\",\"status\":\"refunded\"}\n"
                + "{\"trade_no\":\"2000000900000001\",\"user_id\":\"zed\"}\n")
        #expect(twice.status == 65, "\(twice)")
        #expect(
            twice.stderr.contains("line 2: order \(Self.alice) (trade_no 2000000900000001) is also on line 1"), "\(twice)")
        #expect(twice.stderr.contains("hint: put every change of one order in one row (merge lines 1 and 2)"), "\(twice)")
        #expect(try Self.orders(cli) == before)
    }
}
