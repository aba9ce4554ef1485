import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `--from` batches: NDJSON and CSV rows with their lines, each way a batch is refused, and the
/// typing of cells.
@Suite("Batch rows")
struct BatchRowsTests {
    /// Each row as its line and its fields (key=value, JSON for non-strings), in input order.
    static func shape(_ rows: [BatchRow]) -> [String] {
        rows.map { row in
            "\(row.line): "
                + row.fields.map { "\($0.key)=\($0.value.stringValue ?? $0.value.serialized())" }.joined(separator: " ")
        }
    }

    static func error(_ body: () throws(BatchRowsError) -> Void) -> BatchRowsError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func ndjsonRowsKeepTheirLinesAndFieldOrder() throws {
        let text = "\u{FEFF}{\"no\": \"o1\", \"status\": \"paid\"}\n\n   \n{\"user\": \"u\", \"product\": 7, \"x\": null}\n"
        let rows = try BatchRows.parse(text, path: "-")
        #expect(Self.shape(rows) == ["1: no=o1 status=paid", "4: user=u product=7 x=null"])
        #expect(rows[1].value("product") == .int(7))
        #expect(rows[1].value("missing") == nil)
    }

    /// A file saved on Windows (CRLF) gives the same rows and line numbers, also with a lone CR
    /// before LF after a Unicode line separator inside a string (JSON allows U+2028 raw).
    @Test func ndjsonWithCRLFLineEndingsGivesTheSameRows() throws {
        let lf = "{\"no\": \"o1\", \"status\": \"paid\"}\n\n{\"no\": \"o2\", \"note\": \"a\u{2028}b\"}\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let expected = try BatchRows.ndjson(lf)
        #expect(Self.shape(expected) == ["1: no=o1 status=paid", "3: no=o2 note=a\u{2028}b"])
        #expect(Self.shape(try BatchRows.ndjson(crlf)) == Self.shape(expected))
        let refused = Self.error({ () throws(BatchRowsError) in _ = try BatchRows.ndjson("{\"no\": \"o1\"}\r\n{oops}\r\n") })
        guard case .notJSON(let line, _, _)? = refused else {
            Issue.record("not refused as JSON: \(String(describing: refused))")
            return
        }
        #expect(line == 2)
    }

    @Test func ndjsonErrorsNameTheLine() {
        guard
            case .notJSON(let line, let column, let reason)? = Self.error({ () throws(BatchRowsError) in
                _ = try BatchRows.ndjson("{\"a\": 1}\n\n{\"a\": }\n")
            })
        else {
            Issue.record("not refused as JSON")
            return
        }
        #expect(line == 3)
        #expect(column == 7)
        #expect(!reason.isEmpty)

        guard
            case .notJSON(let dupLine, _, let dupReason)? = Self.error({ () throws(BatchRowsError) in
                _ = try BatchRows.ndjson("{\"no\": \"a\", \"no\": \"b\"}")
            })
        else {
            Issue.record("a duplicate key was accepted")
            return
        }
        #expect(dupLine == 1)
        #expect(dupReason.contains("duplicate"))

        #expect(
            Self.error({ () throws(BatchRowsError) in _ = try BatchRows.ndjson("{}\n[1, 2]") })
                == .notAnObject(line: 2, found: .array([.int(1), .int(2)])))
    }

    @Test func csvRowsTrimAndLowercaseTheHeaderAndSkipEmptyCells() throws {
        let text = "\u{FEFF} No ,STATUS,reason\r\no1,paid,\"a, b\"\r\n\r\no2,,\"say \"\"hi\"\"\nthere\"\no3,refunded,\"\"\n"
        let rows = try BatchRows.parse(text, path: "fix.CSV")
        #expect(Self.shape(rows) == ["2: no=o1 status=paid reason=a, b", "4: no=o2 reason=say \"hi\"\nthere", "6: no=o3 status=refunded"])
    }

    @Test func theFormatComesFromTheExtensionOrTheFirstLine() {
        #expect(BatchRows.isCSV(path: "rows.csv", text: "{\"a\":1}"))
        #expect(!BatchRows.isCSV(path: "rows.ndjson", text: "no,status"))
        #expect(!BatchRows.isCSV(path: "rows.jsonl", text: "no,status"))
        #expect(!BatchRows.isCSV(path: "rows.json", text: "no,status"))
        #expect(BatchRows.isCSV(path: "-", text: "\n\nno,status\n"))
        #expect(!BatchRows.isCSV(path: "-", text: "\n \u{FEFF}{\"no\": \"o1\"}\n"))
        #expect(!BatchRows.isCSV(path: "-", text: ""))
    }

    @Test func csvErrorsNameTheLine() {
        func csvError(_ text: String) -> BatchRowsError? {
            Self.error { () throws(BatchRowsError) in _ = try BatchRows.csv(text) }
        }
        #expect(csvError("no,,status\n") == .emptyHeaderName(line: 1, column: 2))
        #expect(csvError("\nno,NO\n") == .duplicateHeaderName(line: 2, name: "no"))
        #expect(csvError("no,status\no1,paid\no2,paid,extra\n") == .wrongFieldCount(line: 3, header: ["no", "status"], found: 3))
        #expect(csvError("no,status\no1,pa\"id\n") == .quoteInUnquotedCell(line: 2))
        #expect(csvError("no,reason\no1,\"two\nlines\no2,x\n") == .unterminatedQuote(line: 2))
        // A quoted newline moves the line of what follows.
        #expect(csvError("no,reason\no1,\"a\nb\"\no2\n") == .wrongFieldCount(line: 4, header: ["no", "reason"], found: 1))
    }

    @Test func emptyInputsHaveNoRows() throws {
        #expect(try BatchRows.parse("", path: "-").isEmpty)
        #expect(try BatchRows.parse("no,status\n", path: "x.csv").isEmpty)
        #expect(try BatchRows.parse("\n\n", path: "x.ndjson").isEmpty)
    }

    /// A batch cell's limit is the stored columns' (`StoredFields.maxId`, what ingest checks); the
    /// typing of each cell is `SubscriptionModelTests/BatchFieldTests`.
    @Test func aCellsLengthLimitIsTheColumns() {
        #expect(BatchField.maxLength == StoredFields.maxId)
    }
}
