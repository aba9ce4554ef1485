import IAPFoundation

/// How human-readable output is laid out and how CSV is protected.
public struct OutputStyle: Sendable {
    /// Bold headers (a terminal, no `NO_COLOR`, no `TERM=dumb`).
    public var color: Bool
    /// The terminal's width that tables are fitted to; nil (not a terminal, or `--wide`): never cut.
    public var width: Int?
    /// `--csv-raw`: CSV cells that a spreadsheet would run as a formula are left as they are.
    public var csvRaw: Bool
    /// CSV written to a terminal: control characters are made visible like in tables.
    public var csvEscapesControls: Bool
    /// The terminal's width also under `--wide` (nil off a terminal): a `wraps` column is wrapped
    /// to it rather than giving lines of hundreds of columns.
    public var wrapWidth: Int?
    /// A terminal whose locale is not UTF-8 (`LC_ALL=C`): table cells are laid out in their ASCII form
    /// (``AsciiFallback``), so `→` as `->` and a cut marked `...` keep the columns aligned.
    public var ascii: Bool

    /// A style; the default is plain text for a file or a pipe.
    public init(
        color: Bool = false, width: Int? = nil, csvRaw: Bool = false, csvEscapesControls: Bool = false,
        wrapWidth: Int? = nil, ascii: Bool = false
    ) {
        self.ascii = ascii
        self.color = color
        self.width = width
        self.csvRaw = csvRaw
        self.csvEscapesControls = csvEscapesControls
        self.wrapWidth = wrapWidth ?? width
    }
}

/// Renders records in the four output formats.
///
/// `columns` choose and order what table and CSV show (default: every key, in order of first
/// appearance); JSON and NDJSON always carry every field. Every rendering ends with a newline
/// unless it is empty (a table or NDJSON of no records is empty; JSON gives `[]`, CSV its header).
///
/// Tables are cut only to fit a terminal (`style.width`); in a file or a pipe every cell is whole.
/// CSV cells starting with `=`, `+`, `-`, `@`, tab or CR are prefixed with `'` (OWASP's rule
/// against formula injection) unless `style.csvRaw`; numbers (JSON integers and decimals, so
/// negative amounts too) and dates are never prefixed.
public enum OutputRenderer {
    static let bold = "\u{1B}[1m"
    static let reset = "\u{1B}[0m"

    /// A list of items: table, JSON array, NDJSON lines or CSV.
    public static func render(
        records: [Record], columns: [Column]? = nil, format: OutputFormat, style: OutputStyle = OutputStyle()
    ) -> String {
        switch format {
        case .json:
            return JSONValue.array(records.map { $0.jsonObject() }).prettySerialized() + "\n"
        case .ndjson:
            return records.map { $0.jsonObject().serialized() + "\n" }.joined()
        case .csv:
            let columns = columns ?? defaultColumns(records)
            var lines = [columns.map { csvField($0.key, style: style) }.joined(separator: ",")]
            for record in records {
                lines.append(
                    columns.map { csvCell(record[$0.key], key: $0.key, style: style) }.joined(separator: ","))
            }
            return lines.joined(separator: "\n") + "\n"
        case .table:
            return table(records: records, columns: columns ?? defaultColumns(records), style: style, indent: "")
        }
    }

    /// A single item: a JSON object (not an array), one NDJSON line, a one-row CSV, or a
    /// key–value listing in table mode.
    public static func render(document: Record, format: OutputFormat, style: OutputStyle = OutputStyle()) -> String {
        switch format {
        case .json: return document.jsonObject().prettySerialized() + "\n"
        case .ndjson: return document.jsonObject().serialized() + "\n"
        case .csv: return render(records: [document], format: .csv, style: style)
        case .table: return keyValues(document, style: style, indent: "")
        }
    }

    /// A `show` view: titled sections; JSON is one object with a member per section.
    ///
    /// CSV has four columns `section,item,field,value` (item is the 1-based row of a table
    /// section, empty for a field section).
    public static func render(detail: DetailView, format: OutputFormat, style: OutputStyle = OutputStyle()) -> String {
        switch format {
        case .json: return detail.jsonObject().prettySerialized() + "\n"
        case .ndjson: return detail.jsonObject().serialized() + "\n"
        case .csv:
            var lines = ["section,item,field,value"]
            for section in detail.sections {
                switch section.content {
                case .fields(let record):
                    for (key, value) in record.fields {
                        let cells = [section.key, "", key].map { csvField($0, style: style) }
                        lines.append((cells + [csvCell(value, key: key, style: style)]).joined(separator: ","))
                    }
                case .table(let records, _):
                    for (index, record) in records.enumerated() {
                        for (key, value) in record.fields {
                            let cells = [section.key, String(index + 1), key].map { csvField($0, style: style) }
                            lines.append((cells + [csvCell(value, key: key, style: style)]).joined(separator: ","))
                        }
                    }
                }
            }
            return lines.joined(separator: "\n") + "\n"
        case .table:
            var blocks: [String] = []
            for section in detail.sections {
                // On a terminal a long title wraps at its edge.
                let title =
                    style.wrapWidth.map { TextWrap.fill(section.title, width: $0, indent: "").joined(separator: "\n") }
                    ?? section.title
                var block = (style.color ? bold + title + reset : title) + "\n"
                var plain = style
                plain.color = false
                switch section.content {
                case .fields(let record):
                    block += record.fields.isEmpty ? "  (none)\n" : keyValues(record, style: plain, indent: "  ")
                case .table(let records, let columns):
                    block +=
                        records.isEmpty
                        ? "  (none)\n"
                        : table(
                            records: records, columns: columns ?? defaultColumns(records), style: style, indent: "  ")
                }
                blocks.append(block)
            }
            return blocks.joined(separator: "\n")
        }
    }

    /// Every key of `records`, in order of first appearance.
    static func defaultColumns(_ records: [Record]) -> [Column] {
        var seen = Set<String>()
        var columns: [Column] = []
        for record in records {
            for key in record.keys where seen.insert(key).inserted { columns.append(Column(key)) }
        }
        return columns
    }

    /// The text of a value in a table or CSV cell (dates as ISO-8601, null empty).
    static func cellText(_ value: JSONValue?, key: String) -> String {
        guard let value else { return "" }
        switch value {
        case .null: return ""
        case .string(let text): return text
        case .int(let number): return DateFields.isDateKey(key) ? Timestamp.iso8601(number) : String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .double, .array, .object: return value.serialized()
        }
    }

    /// A cell for a terminal: control characters made visible so rows stay on one line.
    public static func tableText(_ value: JSONValue?, key: String) -> String {
        if value == nil || value == .null { return "-" }
        return TerminalText.escape(cellText(value, key: key))
    }

    /// The first characters that make a spreadsheet treat a cell as a formula (OWASP).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// One CSV cell of a value: strings that look like formulas are neutralised (not numbers or dates).
    public static func csvCell(_ value: JSONValue?, key: String, style: OutputStyle) -> String {
        var text = cellText(value, key: key)
        if !style.csvRaw, case .string? = value, let first = text.unicodeScalars.first, formulaStarts.contains(first) {
            text = "'" + text
        }
        return csvField(text, style: style)
    }

    /// RFC 4180: quoted when it holds a comma, quote, CR or LF (quotes doubled); on a terminal,
    /// control characters are made visible first.
    public static func csvField(_ text: String, style: OutputStyle) -> String {
        csvField(style.csvEscapesControls ? TerminalText.escape(text) : text)
    }

    /// RFC 4180: quoted when it holds a comma, quote, CR or LF (quotes doubled).
    static func csvField(_ text: String) -> String {
        let needsQuotes = text.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        guard needsQuotes else { return text }
        var quoted = "\""
        for character in text.unicodeScalars {
            if character == "\"" { quoted += "\"\"" } else { quoted.unicodeScalars.append(character) }
        }
        return quoted + "\""
    }

    static func table(records: [Record], columns: [Column], style: OutputStyle, indent: String) -> String {
        guard !records.isEmpty, !columns.isEmpty else { return "" }
        var layout = TableLayout(columns: columns, style: style, indent: indent)
        let rows = records.map { layout.add($0) }
        let plan = layout.plan()
        var lines = [plan.header]
        lines += rows.map(plan.line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether a cell holds a command to run (in backticks) or an error (`error: …`): such a
    /// cell is never cut.
    static func isInstruction(_ cell: String) -> Bool {
        cell.contains("`") || cell.hasPrefix("error: ")
    }

    /// Column widths narrowed so the table fits `available` terminal columns: free-text columns
    /// (those with a `maxWidth`) first, down to their `maxWidth` or 12 (a wrapping one to 40),
    /// then the others down to 16 (ids and verdicts are never cut shorter); never below the
    /// header, never a date, a `keepWhole` column or the first column (the row's key: an order
    /// number or contract id is copied from here into a ticket) unless `firstFloor` lets it
    /// give way. With a `folds` column, the `important` columns are narrowed only after it, and it
    /// only down to `partFloors` (its longest part). What still does not fit: `table` leaves out columns.
    static func fitted(
        _ natural: [Int], columns: [Column], headers: [String], available: Int, firstFloor: Int? = nil,
        partFloors: [Int] = []
    ) -> [Int] {
        var widths = natural
        var excess = widths.reduce(2 * (widths.count - 1), +) - available
        let passes: [(Column) -> Int?] = [
            { column in
                column.keepWhole || column.maxWidth == nil
                    ? nil : column.wraps ? TableLayout.wrapFloor : min(12, column.maxWidth!)
            },
            { column in
                column.keepWhole || DateFields.isDateKey(column.key)
                    ? nil : column.wraps ? TableLayout.wrapFloor : TableLayout.idFloor
            },
        ]
        // With a folding column: after the free text, the columns that are not `important` are
        // narrowed, then the folding one (never below its longest part), then the important ones.
        enum Pass { case freeText, others, folding, all }
        let order: [Pass] = columns.contains(where: \.folds) ? [.freeText, .others, .folding, .all] : [.freeText, .all]
        for pass in order where excess > 0 {
            let floors = columns.enumerated().map { index, column -> Int? in
                if column.folds, index > 0 {
                    guard pass == .folding else { return nil }
                    return max(partFloors.indices.contains(index) ? partFloors[index] : 0, TextWidth.of(headers[index]))
                }
                if pass == .folding || (pass == .others && column.important) { return nil }
                let rule = passes[pass == .freeText ? 0 : 1]
                return (index > 0 ? rule(column) : pass == .freeText ? nil : firstFloor).map {
                    max($0, TextWidth.of(headers[index]))
                }
            }
            while excess > 0 {
                let candidates = widths.indices.filter { index in floors[index].map { widths[index] > $0 } ?? false }
                guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
                let second = candidates.filter { $0 != widest }.map { widths[$0] }.max() ?? 0
                var target = max(floors[widest]!, second, widths[widest] - excess)
                if target >= widths[widest] { target = widths[widest] - 1 }
                excess -= widths[widest] - target
                widths[widest] = target
            }
        }
        return widths
    }

    static func keyValues(_ record: Record, style: OutputStyle, indent: String) -> String {
        let width = record.keys.map(TextWidth.of).max() ?? 0
        return record.fields.map { key, value in
            let label = TextWidth.pad(key, to: width)
            var text = tableText(value, key: key)
            // On a terminal a long value wraps under itself rather than running hundreds of
            // columns; a command to run (`fix`, an instruction) is kept whole for copying.
            let start = TextWidth.of(indent) + width + 2
            if let wrapWidth = style.wrapWidth, start + TextWidth.of(text) > wrapWidth, key != "fix",
                !isInstruction(text)
            {
                let lines = TextWrap.fill(text, width: max(TableLayout.wrapFloor, wrapWidth - start), indent: "")
                text = lines.joined(separator: "\n" + String(repeating: " ", count: start))
            }
            return indent + (style.color ? bold + label + reset : label) + "  " + text + "\n"
        }.joined()
    }
}

/// A key–value "detail" view for `show` commands: titled sections of fields or small tables.
public struct DetailView: Sendable {
    /// What a section holds.
    public enum Content: Sendable {
        /// One item's fields, shown as `key  value` lines.
        case fields(Record)
        /// Several items, shown as a table (the columns apply to table mode).
        case table([Record], columns: [Column]?)
    }

    /// One titled part of the view.
    public struct Section: Sendable {
        /// The member name in JSON (`order`, `history`).
        public var key: String
        /// The heading in table mode (`Order`, `History`).
        public var title: String
        public var content: Content

        /// A section; see the properties.
        public init(key: String, title: String, content: Content) {
            self.key = key
            self.title = title
            self.content = content
        }
    }

    /// The sections, in order.
    public var sections: [Section]

    /// A view of these sections.
    public init(sections: [Section]) {
        self.sections = sections
    }

    /// One JSON object with a member per section (an object, or an array for tables).
    public func jsonObject() -> JSONValue {
        .object(
            sections.map { section in
                switch section.content {
                case .fields(let record): return (section.key, record.jsonObject())
                case .table(let records, _): return (section.key, .array(records.map { $0.jsonObject() }))
                }
            })
    }
}
