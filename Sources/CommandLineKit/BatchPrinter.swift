import IAPFoundation

/// One result of a batch as `BatchPrinter` prints it: its rows (built only for the format in use),
/// the word it is counted under, and its exit status.
public protocol BatchResult {
    /// The word this result is counted under (the summary, the progress line).
    var status: String { get }
    /// This result's exit status (a one-item batch exits with it).
    var code: ExitCode { get }
    /// The row in `format`: the table's short row for `.table`, the machine record otherwise.
    func record(for format: OutputFormat) -> Record
    /// A message said on stderr as `error: …` when the output is not a table (a table shows the
    /// error in its row, once); nil for none.
    var diagnostic: String? { get }
}

/// Prints a batch's results as they come: NDJSON streams one line per result; a table, JSON and
/// CSV are written at the end from rows kept in a `RowSpool` (memory stays flat however long the
/// batch), laid out with `TableLayout`. On a terminal's stderr a progress line is redrawn at most
/// once a second (reading a pipe, which may stay open: as items are applied, at most 10 times a
/// second). Keeps the counts for the summary line and decides the batch's exit status.
public final class BatchPrinter {
    public let invocation: Invocation
    public let columns: [Column]
    /// Table: the layout so far (widths, alignment); rows wait in `spool`.
    private var table: TableLayout
    /// CSV: every key in order of first appearance (the header).
    private var csvKeys: [String] = []
    private var csvKeySet: Set<String> = []
    /// The rows waiting for the end: table cells, CSV key–cell pairs, or one pretty JSON object.
    private let spool: RowSpool
    /// Results counted by their `status`.
    public private(set) var counts: [String: Int] = [:]
    /// Results added so far.
    public private(set) var count = 0
    private var failed = false
    private var firstCode: ExitCode?
    /// Progress on a terminal for long batches: a line redrawn at most once a second.
    private let showsProgress: Bool
    private var lastProgress: Int64 = 0
    private var progressShown = false
    /// Input from a pipe that may stay open (`tail -f log | iapctl notify`): the progress line is
    /// drawn from the first item, redrawn at most 10 times a second, and with the true count
    /// whenever the input waits, so a person at the terminal sees each item counted as it is applied.
    private let live: Bool
    /// The count the progress line shows.
    private var drawnCount = -1

    /// A printer of rows in `invocation`'s format; a table shows `columns` (none: no table rows).
    /// Rows kept for the end move to a temporary file past `spoolMemoryLimit` bytes.
    public init(_ invocation: Invocation, columns: [Column], spoolMemoryLimit: Int = 4 << 20) {
        self.invocation = invocation
        self.columns = columns
        spool = RowSpool(memoryLimit: spoolMemoryLimit)
        table = TableLayout(columns: columns, style: invocation.outputStyle)
        showsProgress = invocation.isStderrTTY && !invocation.quiet && !invocation.dumbTerminal
        live = showsProgress && invocation.readsPipe
        lastProgress = Timestamp.now()
        if live { invocation.whenInputWaits = { [weak self] in self?.inputWaits() } }
    }

    /// Redraws `N items… 3 a, 1 b` on stderr when a second has passed since the last time (every
    /// 256 items); reading a pipe, when a tenth of a second has (every item).
    private func progress() {
        guard showsProgress, live || count % 256 == 0 else { return }
        let now = Timestamp.now()
        guard now - lastProgress >= (live ? 100 : 1000) else { return }
        progressShown = true
        refreshProgress()
    }

    /// The input is about to wait: the progress line shows the true count now (not that of the last
    /// redraw), once per change.
    private func inputWaits() {
        guard live, count > 0, drawnCount != count else { return }
        progressShown = true
        refreshProgress()
    }

    /// Whether each table row is printed as it is decided: the input is being pasted at a
    /// terminal and the table goes to one.
    private var showsEachRow: Bool { invocation.pastesAtTerminal && invocation.isStdoutTTY }

    /// Redraws the progress line now with the true count (once one is shown): a batch whose
    /// input stays open waits with the count of what it has done, not that of the last redraw.
    public func refreshProgress() {
        guard progressShown else { return }
        lastProgress = Timestamp.now()
        drawnCount = count
        let parts = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        invocation.stderr.write("\r\u{1B}[K\(count) item\(count == 1 ? "" : "s")… \(parts)")
        try? invocation.stderr.flush()
    }

    /// Whether every result so far was counted under `status` (a Ctrl-C after only duplicates
    /// changed nothing).
    public func onlyCounted(_ status: String) -> Bool { count > 0 && counts.keys.allSatisfy { $0 == status } }

    /// Prints (NDJSON) or keeps (the other formats) one result, and counts it.
    public func add(_ row: some BatchResult) {
        count += 1
        let code = row.code
        if firstCode == nil { firstCode = code }
        counts[row.status, default: 0] += 1
        if code != .success { failed = true }
        let format = invocation.output
        switch format {
        case .ndjson: invocation.emitLine(row.record(for: format))
        case .table where columns.isEmpty: break
        case .table where showsEachRow:
            // Pasting at a terminal: the row now, as the item is decided (on its Enter), not at Ctrl-D.
            var single = TableLayout(columns: columns, style: invocation.outputStyle)
            let cells = single.add(masked(row.record(for: format)))
            let plan = single.plan()
            if progressShown { invocation.stderr.write("\r\u{1B}[K") }
            invocation.emitRendered(plan.header + "\n" + plan.line(cells) + "\n")
            try? invocation.stdout.flush()
        case .table: spool.append(table.add(masked(row.record(for: format))))
        case .json:
            // An object of the array, indented one level (strings hold no raw newline).
            spool.append([masked(row.record(for: format)).jsonObject().prettySerialized().replacing("\n", with: "\n  ")])
        case .csv:
            var pairs: [String] = []
            var seen = Set<String>()
            for (key, value) in masked(row.record(for: format)).fields where seen.insert(key).inserted {
                if csvKeySet.insert(key).inserted { csvKeys.append(key) }
                pairs += [key, OutputRenderer.csvCell(value, key: key, style: invocation.outputStyle)]
            }
            spool.append(pairs)
        }
        progress()
        if format != .table, let diagnostic = row.diagnostic {
            if progressShown { invocation.stderr.write("\r\u{1B}[K") }
            // Machine formats: the person reads stderr. A table shows the error itself (once, whole).
            invocation.stderr.writeLine("error: " + TerminalText.escape(diagnostic, keepNewlines: true))
        }
    }

    /// The batch's exit status: a single result's own code; for a longer batch 1 if any result
    /// failed, else 0.
    public var exitCode: ExitCode {
        count == 1 && firstCode != nil ? firstCode! : (failed ? .failure : .success)
    }

    /// Writes what was kept (clearing the progress line first), then `summary` on stderr (with
    /// `-q` only when the batch failed, then followed by ` (exit N)`); returns `status`, or `exitCode`
    /// when nil (a program whose batch has exit rules of its own passes them).
    public func finish(summary: String, status: ExitCode? = nil) -> ExitCode {
        if progressShown { invocation.stderr.write("\r\u{1B}[K") }
        writeCollected()
        // The rows reach the reader before anything said on stderr after them (a Ctrl-C's
        // "interrupted after …" comes after the table, not inside it).
        try? invocation.stdout.flush()
        let code = status ?? exitCode
        if invocation.quiet, code != .success {
            // -q keeps errors: a run that exits non-zero still says why, in one line.
            invocation.stderr.writeLine(summary + " (exit \(code.rawValue))")
        } else {
            invocation.note(summary)
        }
        return code
    }

    private func masked(_ record: Record) -> Record {
        invocation.masking?.record(record) ?? record
    }

    /// Writes the rows kept for the end, as `Invocation.emit` of them all would (same bytes).
    private func writeCollected() {
        var text = ""
        func flushIfLarge() {
            if text.utf8.count >= 65_536 {
                invocation.emitRendered(text)
                text = ""
            }
        }
        switch invocation.output {
        case .ndjson: return
        case .table:
            guard spool.count > 0, !showsEachRow else { return }
            let plan = table.plan()
            text = plan.header + "\n"
            spool.forEach { cells in
                text += plan.line(cells) + "\n"
                flushIfLarge()
            }
        case .json:
            guard spool.count > 0 else {
                invocation.emitRendered("[]\n")
                return
            }
            text = "["
            var first = true
            spool.forEach { cells in
                text += (first ? "\n  " : ",\n  ") + cells[0]
                first = false
                flushIfLarge()
            }
            text += "\n]\n"
        case .csv:
            let style = invocation.outputStyle
            text = csvKeys.map { OutputRenderer.csvField($0, style: style) }.joined(separator: ",") + "\n"
            spool.forEach { pairs in
                var cells: [String: String] = [:]
                for index in stride(from: 0, to: pairs.count - 1, by: 2) { cells[pairs[index]] = pairs[index + 1] }
                text += csvKeys.map { cells[$0] ?? "" }.joined(separator: ",") + "\n"
                flushIfLarge()
            }
        }
        invocation.emitRendered(text)
    }
}
