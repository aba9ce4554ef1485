/// A table laid out row by row: each row's cells are made (and measured) once when it is added,
/// the column widths, alignments and cut decisions follow from what was added, and rows are
/// written from their stored cells. `OutputRenderer.table` and batch commands (`BatchPrinter`,
/// whose rows wait in a `RowSpool`, not in memory) share it, so both give the same bytes.
///
/// Off a terminal (`style.width == nil`) nothing is cut, so a cell is measured only when its
/// width can matter: every column but the last is padded; the last (left-aligned) one is not,
/// and is measured only while it may still turn out right-aligned (numbers only).
public struct TableLayout {
    let columns: [Column]
    let style: OutputStyle
    let indent: String
    let headers: [String]
    private(set) var widths: [Int]
    private var sawNumber: [Bool]
    private var sawOther: [Bool]
    private var hasInstruction: [Bool]
    /// Rows added so far.
    public private(set) var count = 0

    /// An empty table of `columns`.
    public init(columns: [Column], style: OutputStyle, indent: String = "") {
        self.columns = columns
        self.style = style
        self.indent = indent
        headers = columns.map(\.header)
        widths = headers.map(TextWidth.of)
        sawNumber = Array(repeating: false, count: columns.count)
        sawOther = sawNumber
        hasInstruction = sawNumber
    }

    /// Adds `record`; returns its cells (as the table shows them, before any cut or padding),
    /// which `line` later writes.
    public mutating func add(_ record: Record) -> [String] {
        count += 1
        var cells: [String] = []
        cells.reserveCapacity(columns.count)
        let last = columns.count - 1
        for (index, column) in columns.enumerated() {
            let value = record[column.key]
            switch value {
            case .int?, .double?: sawNumber[index] = true
            case .null?, nil: break
            default: sawOther[index] = true
            }
            let cell = OutputRenderer.tableText(value, key: column.key)
            if style.width != nil {
                if OutputRenderer.isInstruction(cell) { hasInstruction[index] = true }
                widths[index] = max(widths[index], TextWidth.of(cell))
            } else if index != last || column.alignment == .right
                || (column.alignment == .automatic && !sawOther[index])
            {
                widths[index] = max(widths[index], TextWidth.of(cell))
            }
            cells.append(cell)
        }
        return cells
    }

    /// How the rows are written: the columns kept, their widths and alignment, the header.
    public struct Plan {
        let kept: [Int]
        let widths: [Int]
        let rightAligned: [Bool]
        let hiddenNote: String
        let cuts: Bool
        let layout: TableLayout

        /// One row's line (no newline) from the cells `add` returned.
        public func line(_ cells: [String]) -> String {
            layout.line(cells, plan: self, header: false)
        }

        /// The header line (no newline).
        public var header: String { layout.line(layout.headers, plan: self, header: true) + hiddenNote }
    }

    /// The widths and columns once every row has been added.
    public func plan() -> Plan {
        var widths = self.widths
        var kept = Array(columns.indices)
        var hiddenNote = ""
        if let available = style.width {
            let room = available - TextWidth.of(indent)
            let natural = widths
            // Narrow the columns kept; still too wide: leave out columns from the right (never the
            // first, never a `keepWhole` one), fit the rest again from their natural widths, and say
            // so after the last header ("(+2: --wide)"), rather than wrap every row.
            while true {
                let hidden = columns.count - kept.count
                let note = hidden > 0 ? "  (+\(hidden): --wide)" : ""
                let trial = OutputRenderer.fitted(
                    kept.map { natural[$0] }, columns: kept.map { columns[$0] }, headers: kept.map { headers[$0] },
                    available: room - TextWidth.of(note))
                for (position, index) in kept.enumerated() { widths[index] = trial[position] }
                hiddenNote = note
                if kept.count == 1 || trial.reduce(2 * (kept.count - 1), +) + TextWidth.of(note) <= room { break }
                // A column holding an instruction or an error is never left out either.
                let droppable = { (index: Int) in !columns[index].keepWhole && !hasInstruction[index] }
                guard let drop = kept.dropFirst().last(where: droppable) else { break }
                kept.removeAll { $0 == drop }
            }
        }
        let rightAligned: [Bool] = columns.indices.map { index in
            switch columns[index].alignment {
            case .left: return false
            case .right: return true
            case .automatic:
                return !DateFields.isDateKey(columns[index].key) && !sawOther[index] && sawNumber[index]
            }
        }
        return Plan(
            kept: kept, widths: widths, rightAligned: rightAligned, hiddenNote: hiddenNote, cuts: style.width != nil,
            layout: self)
    }

    func line(_ row: [String], plan: Plan, header: Bool) -> String {
        var text = indent
        for (position, index) in plan.kept.enumerated() {
            var cell = row[index]
            let width = plan.widths[index]
            // Off a terminal the widths are the natural ones: nothing is ever cut.
            if !header, plan.cuts, TextWidth.of(cell) > width, !OutputRenderer.isInstruction(cell) {
                cell = TextWidth.truncate(cell, to: width)
            }
            let isLast = position == plan.kept.count - 1
            let padded =
                isLast && !plan.rightAligned[index]
                ? cell : TextWidth.pad(cell, to: width, leading: plan.rightAligned[index])
            if position > 0 { text += "  " }
            text += header && style.color ? OutputRenderer.bold + padded + OutputRenderer.reset : padded
        }
        return text
    }
}
