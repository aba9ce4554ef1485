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
    /// On a terminal: each column's first cell, and whether every cell since was the same (a
    /// column a filter fixed, such as USER under `--user alice`: the first to be left out).
    private var firstCell: [String?]
    private var constant: [Bool]
    /// On a terminal: the prefix (in bytes, ending at a separator) that every distinct cell of
    /// the column shares (`com.example.app.`): a cut drops it first, keeping the part that differs.
    private var sharedPrefix: [Int]
    /// On a terminal, for a `folds` column: the width of its longest part (see `parts`, `fine`).
    private var longestPart: [Int]
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
        firstCell = Array(repeating: nil, count: columns.count)
        constant = Array(repeating: true, count: columns.count)
        sharedPrefix = Array(repeating: 0, count: columns.count)
        longestPart = sharedPrefix
    }

    /// The parts a folding cell may be broken into: after each `/` (and at spaces); with `fine`,
    /// also after each `_` (`DID_CHANGE_RENEWAL_` over `STATUS/`, when a terminal is that narrow).
    static func parts(_ cell: String, fine: Bool = false) -> [String] {
        var parts: [String] = []
        var part = ""
        for character in cell {
            if character == " " {
                if !part.isEmpty { parts.append(part) }
                part = ""
                continue
            }
            part.append(character)
            if character == "/" || (fine && character == "_") {
                parts.append(part)
                part = ""
            }
        }
        if !part.isEmpty { parts.append(part) }
        return parts
    }

    /// `cell` in lines of at most `width` columns, broken after a `/` where that is enough, else
    /// also after a `_` (a part longer than the width is cut to it; the column's floor keeps that
    /// from happening).
    static func fold(_ cell: String, width: Int) -> [String] {
        let pieces = parts(cell).flatMap { TextWidth.of($0) > width ? parts($0, fine: true) : [$0] }
        var lines: [String] = []
        var line = ""
        for piece in pieces {
            // A piece after `/` or `_` joins directly; after a space, with one.
            let joiner = line.isEmpty || line.hasSuffix("/") || line.hasSuffix("_") ? "" : " "
            if !line.isEmpty, TextWidth.of(line + joiner + piece) > width {
                lines.append(line)
                line = piece
            } else {
                line += joiner + piece
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { TextWidth.of($0) > width ? TextWidth.truncate($0, to: width) : $0 }
    }

    /// Tracks, for a terminal, whether `cell` keeps column `index` constant and its shared prefix.
    private mutating func note(_ cell: String, at index: Int) {
        guard let first = firstCell[index] else {
            firstCell[index] = cell
            sharedPrefix[index] = Int.max
            return
        }
        guard cell != first else { return }
        constant[index] = false
        let common = zip(first.utf8, cell.utf8).prefix { $0 == $1 }.count
        let separators: Set<UInt8> = [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":")]
        let boundary = first.utf8.prefix(common).lastIndex(where: separators.contains).map {
            first.utf8.distance(from: first.utf8.startIndex, to: $0) + 1
        }
        sharedPrefix[index] = min(sharedPrefix[index], boundary ?? 0)
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
            let text = OutputRenderer.tableText(value, key: column.key)
            let cell = style.ascii ? AsciiFallback.apply(text) : text
            if style.width != nil {
                if OutputRenderer.isInstruction(cell) { hasInstruction[index] = true }
                widths[index] = max(widths[index], TextWidth.of(cell))
                note(cell, at: index)
                if column.folds { longestPart[index] = max(longestPart[index], Self.parts(cell, fine: true).map(TextWidth.of).max() ?? 0) }
            } else if index != last || column.alignment == .right || (column.wraps && style.wrapWidth != nil)
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
        /// A wrapping column written under each row (indented, the terminal's width) rather than
        /// beside it, when beside it would leave out columns the table is read for.
        let below: Int?
        let belowWidth: Int
        let cuts: Bool
        let layout: TableLayout

        /// One row's line (no newline) from the cells `add` returned.
        public func line(_ cells: [String]) -> String {
            layout.line(cells, plan: self, header: false)
        }

        /// The header line (no newline).
        public var header: String {
            layout.line(layout.headers, plan: self, header: true) + hiddenNote
        }
    }

    /// The widths and columns once every row has been added.
    public func plan() -> Plan {
        var widths = self.widths
        var kept = Array(columns.indices)
        var hiddenNote = ""
        var below: Int?
        var belowWidth = 0
        if let available = style.width {
            let room = available - TextWidth.of(indent)
            let natural = widths
            // Narrow the columns kept; still too wide: leave out columns (never the first, never a
            // `keepWhole` one or one holding an instruction), fit the rest again from their natural
            // widths, and say so after the last header ("(+2: --wide)"), rather than wrap every row.
            // Left out first: a column every row shares (fixed by a filter; not an `important` one unless it is the
            // `owner`), then the others from the right; before an `important` or `owner` column goes, the first
            // column gives way (cut to 16).
            var firstFloor: Int?
            while true {
                let hidden = columns.count - kept.count - (below == nil ? 0 : 1)
                let note = hidden > 0 ? "  (+\(hidden): --wide)" : ""
                // The note follows the last header, inside that column's width when the header is shorter.
                let lastHeader = TextWidth.of(headers[kept.last!])
                let noteCost = { (lastWidth: Int) in max(0, lastHeader + TextWidth.of(note) - lastWidth) }
                let trial = OutputRenderer.fitted(
                    kept.map { natural[$0] }, columns: kept.map { columns[$0] }, headers: kept.map { headers[$0] },
                    available: room - noteCost(natural[kept.last!]), firstFloor: firstFloor,
                    partFloors: kept.map { longestPart[$0] })
                for (position, index) in kept.enumerated() { widths[index] = trial[position] }
                hiddenNote = note
                // A folding column (EVENT) keeps its width before a wrapping last column that is not
                // what the table is read for (DETAIL) takes the room beside it: that column goes
                // under each row instead. An `important` one (explain's WHY) stays beside; EVENT folds.
                if below == nil, let last = kept.last, columns[last].wraps, !columns[last].important, kept.count > 2,
                    kept.contains(where: { columns[$0].folds && widths[$0] < natural[$0] })
                {
                    below = last
                    belowWidth = max(Self.wrapFloor, room - 4)
                    kept.removeLast()
                    continue
                }
                if kept.count == 1 || trial.reduce(2 * (kept.count - 1), +) + noteCost(trial.last!) <= room { break }
                let droppable = kept.dropFirst().filter { !columns[$0].keepWhole && !hasInstruction[$0] }
                let stays = { (column: Column) in column.important || column.owner }
                let shared = { (index: Int) in self.constant[index] && self.count > 1 }
                if let drop = droppable.first(where: { shared($0) && columns[$0].owner })
                    ?? droppable.last(where: { shared($0) && !stays(columns[$0]) })
                    ?? droppable.last(where: { !stays(columns[$0]) })
                {
                    kept.removeAll { $0 == drop }
                } else if firstFloor == nil, !columns[0].keepWhole, !DateFields.isDateKey(columns[0].key),
                    natural[0] > Self.idFloor
                {
                    firstFloor = Self.idFloor
                } else if below == nil, let last = kept.last, columns[last].wraps, columns[last].important,
                    kept.count > 2
                {
                    // Rather than leave out what the table is read for, the wrapping column goes under each row.
                    below = last
                    belowWidth = max(Self.wrapFloor, room - 4)
                    kept.removeLast()
                } else if let drop = droppable.last(where: { !columns[$0].wraps }) ?? droppable.last {
                    kept.removeAll { $0 == drop }
                } else {
                    break
                }
            }
            // A wrapping last column takes the rest of the line.
            if let last = kept.last, columns[last].wraps, kept.count > 1 {
                let used = kept.dropLast().reduce(2 * (kept.count - 1)) { $0 + widths[$1] } + TextWidth.of(hiddenNote)
                widths[last] = max(widths[last], min(natural[last], room - used))
            }
        } else if let wrapWidth = style.wrapWidth, let last = columns.indices.last, columns[last].wraps, last > 0 {
            // `--wide` on a terminal: nothing cut, but the last column wraps at the terminal's edge.
            let used = columns.indices.dropLast().reduce(2 * last) { $0 + widths[$1] } + TextWidth.of(indent)
            widths[last] = min(widths[last], max(Self.wrapFloor, wrapWidth - used))
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
            kept: kept, widths: widths, rightAligned: rightAligned, hiddenNote: hiddenNote, below: below,
            belowWidth: belowWidth,
            cuts: style.width != nil || style.wrapWidth != nil, layout: self)
    }

    /// Ids and verdicts are never cut below this many columns (docs/operations.md, Output).
    static let idFloor = 16
    /// A wrapping column is never narrower than this.
    static let wrapFloor = 40

    func line(_ row: [String], plan: Plan, header: Bool) -> String {
        var text = indent
        var continuation: [String] = []
        /// Puts `lines` on the continuation lines, starting at screen column `offset`.
        func place(_ lines: [String], at offset: Int) {
            for (number, piece) in lines.enumerated() {
                if continuation.count <= number { continuation.append("") }
                let gap = max(0, offset - TextWidth.of(continuation[number]))
                continuation[number] += String(repeating: " ", count: gap) + piece
            }
        }
        var column = TextWidth.of(indent)
        for (position, index) in plan.kept.enumerated() {
            var cell = row[index]
            let width = plan.widths[index]
            let isLast = position == plan.kept.count - 1
            if position > 0 {
                text += "  "
                column += 2
            }
            // Off a terminal the widths are the natural ones: nothing is ever cut.
            // A wrapping last column breaks between words under itself, an instruction too (wrapping
            // cuts nothing; left whole it would run on from the screen's left edge).
            let wrapsHere = isLast && columns[index].wraps && position > 0
            if !header, plan.cuts, TextWidth.of(cell) > width, wrapsHere || !OutputRenderer.isInstruction(cell) {
                if wrapsHere {
                    let lines = TextWrap.fill(cell, width: width, indent: "")
                    cell = lines.first ?? ""
                    place(Array(lines.dropFirst()), at: column)
                } else if columns[index].folds {
                    let lines = Self.fold(cell, width: width)
                    cell = lines.first ?? ""
                    place(Array(lines.dropFirst()), at: column)
                } else {
                    cell = TextWidth.shorten(
                        cell, to: width, sharedPrefix: sharedPrefix[index], ellipsis: style.ascii ? "..." : "…")
                }
            }
            let padded =
                isLast && !plan.rightAligned[index]
                ? cell : TextWidth.pad(cell, to: width, leading: plan.rightAligned[index])
            column += width
            text += header && style.color ? OutputRenderer.bold + padded + OutputRenderer.reset : padded
        }
        if !header, let below = plan.below, !row[below].isEmpty {
            continuation += TextWrap.fill(row[below], width: plan.belowWidth, indent: "").map { indent + "    " + $0 }
        }
        return ([text] + continuation).joined(separator: "\n")
    }
}
