import IAPFoundation
import Testing

@testable import CommandLineKit

/// A batch result with no app knowledge: an id, a status word, an exit code, a note.
private struct Item: BatchResult {
    var id: Int
    var status: String
    var code: ExitCode = .success
    var note: String? = nil

    func record(for format: OutputFormat) -> Record {
        guard format != .table else { return ["id": .int(Int64(id)), "status": .string(status)] }
        var record: Record = ["id": .int(Int64(id)), "status": .string(status)]
        if let note { record.append("note", note) }
        return record
    }

    var diagnostic: String? { code == .success ? nil : "item \(id): " + (note ?? "failed") }
}

/// A run of a one-command program with `-o` and `-q`, its streams kept in memory.
private struct Batch {
    static let root = CommandSpec(
        name: "batch", abstract: "Runs a batch.", options: [StandardOptions.output, StandardOptions.quiet],
        handler: { _ in .success })
    static let columns: [Column] = ["id", "status"]

    let invocation: Invocation
    let out = BufferSink()
    let err = BufferSink()

    init(_ arguments: [String]) throws {
        let parsed = try CommandLineParser(root: Self.root).parse(arguments)
        invocation = Invocation(
            parsed: parsed, settings: try Settings.resolve(parsed, environment: [:], root: Self.root), environment: [:],
            stdin: InputReader(string: ""), stdout: out, stderr: err, isStdoutTTY: false, root: Self.root)
    }

    func printer(spoolMemoryLimit: Int = 4 << 20) -> BatchPrinter {
        BatchPrinter(invocation, columns: Self.columns, spoolMemoryLimit: spoolMemoryLimit)
    }
}

@Suite("BatchPrinter: a batch's results in every format, its counts and its exit status")
struct BatchPrinterTests {
    private let items = [
        Item(id: 1, status: "done"), Item(id: 2, status: "failed", code: ExitCode(3), note: "no such thing"),
        Item(id: 3, status: "done", note: "again"), Item(id: 4, status: "skipped"),
    ]

    /// What `Invocation.emit` of all the records at once writes.
    private func rendered(_ items: [Item], _ format: OutputFormat) -> String {
        OutputRenderer.render(
            records: items.map { $0.record(for: format) }, columns: format == .table ? Batch.columns : nil, format: format)
    }

    @Test(arguments: [OutputFormat.table, .json, .ndjson, .csv])
    func eachFormatPrintsWhatEmitWouldPrint(format: OutputFormat) throws {
        let batch = try Batch(["-o", format.rawValue])
        let printer = batch.printer()
        for item in items { printer.add(item) }
        _ = printer.finish(summary: "batch: 4 items")
        #expect(batch.out.text == rendered(items, format))
    }

    @Test func tableAndCSVBytes() throws {
        let table = try Batch([])
        let printer = table.printer()
        for item in items.prefix(2) { printer.add(item) }
        _ = printer.finish(summary: "s")
        #expect(table.out.text == "ID  STATUS\n 1  done\n 2  failed\n")

        let csv = try Batch(["-o", "csv"])
        let csvPrinter = csv.printer()
        for item in items.prefix(3) { csvPrinter.add(item) }
        _ = csvPrinter.finish(summary: "s")
        // The header holds every key in order of first appearance; a row without one leaves it empty.
        #expect(csv.out.text == "id,status,note\n1,done,\n2,failed,no such thing\n3,done,again\n")
    }

    @Test func emptyBatches() throws {
        for (format, expected) in [("table", ""), ("json", "[]\n"), ("ndjson", ""), ("csv", "\n")] {
            let batch = try Batch(["-o", format])
            let code = batch.printer().finish(summary: "batch: 0 items")
            #expect(batch.out.text == expected, "\(format)")
            #expect(batch.err.text == "batch: 0 items\n")
            #expect(code == .success)
        }
    }

    @Test func countsByStatus() throws {
        let batch = try Batch(["-o", "json"])
        let printer = batch.printer()
        for item in items { printer.add(item) }
        #expect(printer.count == 4)
        #expect(printer.counts == ["done": 2, "failed": 1, "skipped": 1])
    }

    @Test func exitStatusOfABatch() throws {
        // Mixed: 1, whatever the failing item's own code.
        let mixed = try Batch(["-o", "ndjson"])
        let printer = mixed.printer()
        for item in items { printer.add(item) }
        #expect(printer.finish(summary: "batch: mixed") == .failure)
        #expect(mixed.err.text.hasSuffix("batch: mixed\n"))

        // One item: its own code.
        let single = try Batch(["-o", "ndjson"])
        let one = single.printer()
        one.add(items[1])
        #expect(one.finish(summary: "batch: one") == ExitCode(3))

        // All fine: 0.
        let fine = try Batch(["-o", "ndjson"])
        let all = fine.printer()
        all.add(items[0])
        all.add(items[3])
        #expect(all.exitCode == .success)
        #expect(all.finish(summary: "batch: fine") == .success)
    }

    @Test func quietKeepsOnlyTheSummaryOfAFailure() throws {
        let failing = try Batch(["-o", "ndjson", "-q"])
        let printer = failing.printer()
        for item in items { printer.add(item) }
        _ = printer.finish(summary: "batch: 4 items")
        #expect(failing.err.text == "error: item 2: no such thing\nbatch: 4 items (exit 1)\n")

        let fine = try Batch(["-q"])
        let quiet = fine.printer()
        quiet.add(items[0])
        _ = quiet.finish(summary: "batch: 1 item")
        #expect(fine.err.text.isEmpty)
    }

    @Test func diagnosticsGoToStderrUnlessATableShowsThem() throws {
        let item = Item(id: 7, status: "failed", code: .failure, note: "bad \u{1B}[31m")
        let csv = try Batch(["-o", "csv"])
        let printer = csv.printer()
        printer.add(item)
        #expect(csv.err.text == "error: item 7: bad \\u{1b}[31m\n", "escaped, said as it happens")
        let table = try Batch([])
        table.printer().add(item)
        #expect(table.err.text.isEmpty)
    }

    @Test func ndjsonStreamsBeforeTheEnd() throws {
        let batch = try Batch(["-o", "ndjson"])
        let printer = batch.printer()
        printer.add(items[0])
        #expect(batch.out.text == "{\"id\":1,\"status\":\"done\"}\n")
        printer.add(items[2])
        #expect(batch.out.text.split(separator: "\n").count == 2)
        // The other formats wait for the end (a table needs every row's width).
        let json = try Batch(["-o", "json"])
        let waiting = json.printer()
        waiting.add(items[0])
        #expect(json.out.text.isEmpty)
        _ = waiting.finish(summary: "s")
        #expect(!json.out.text.isEmpty)
    }

    @Test(arguments: [OutputFormat.table, .json, .csv])
    func aBatchLargerThanTheSpoolsMemory(format: OutputFormat) throws {
        // 8,000 rows through a 1 KB spool: the rows spill to a temporary file and come back in order,
        // and the output is written in pieces (over 64 KB) with the same bytes.
        let many = (1...8_000).map { Item(id: $0, status: $0 % 7 == 0 ? "odd" : "done", note: String(repeating: "n", count: $0 % 13)) }
        let batch = try Batch(["-o", format.rawValue])
        let printer = batch.printer(spoolMemoryLimit: 1024)
        for item in many { printer.add(item) }
        #expect(batch.out.text.isEmpty)
        _ = printer.finish(summary: "batch: 8000 items")
        #expect(batch.out.text.utf8.count > 65_536)
        #expect(batch.out.text == rendered(many, format))
        #expect(printer.counts == ["done": 6_858, "odd": 1_142])
    }

    @Test func maskingAppliesToEveryFormat() throws {
        final class Upper: RecordMasking {
            func record(_ record: Record) -> Record {
                Record(record.fields.map { ($0.key, $0.value.stringValue.map { .string($0.uppercased()) } ?? $0.value) })
            }
            func detail(_ view: DetailView) -> DetailView { view }
            func json(_ document: JSONValue) -> JSONValue { document }
        }
        for format in OutputFormat.allCases {
            let plain = try Batch(["-o", format.rawValue])
            let invocation = Invocation(
                parsed: plain.invocation.parsed, settings: plain.invocation.settings, environment: [:],
                stdin: InputReader(string: ""), stdout: plain.out, stderr: plain.err, isStdoutTTY: false, root: Batch.root,
                masking: Upper())
            let printer = BatchPrinter(invocation, columns: Batch.columns)
            printer.add(Item(id: 1, status: "done"))
            _ = printer.finish(summary: "s")
            #expect(plain.out.text.contains("DONE") && !plain.out.text.contains("done"), "\(format)")
        }
    }
}
