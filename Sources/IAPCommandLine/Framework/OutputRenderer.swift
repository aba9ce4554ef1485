import AppStoreJWS

/// Renders records in the four output formats.
///
/// `columns` choose and order what table and CSV show (default: every key, in order of first
/// appearance); JSON and NDJSON always carry every field. Every rendering ends with a newline
/// unless it is empty (a table or NDJSON of no records is empty; JSON gives `[]`, CSV its header).
public enum OutputRenderer {
    static let bold = "\u{1B}[1m"
    static let reset = "\u{1B}[0m"

    /// A list of items: table, JSON array, NDJSON lines or CSV.
    public static func render(
        records: [Record], columns: [Column]? = nil, format: OutputFormat, color: Bool = false
    ) -> String {
        switch format {
        case .json:
            return JSONValue.array(records.map { $0.jsonObject() }).prettySerialized() + "\n"
        case .ndjson:
            return records.map { $0.jsonObject().serialized() + "\n" }.joined()
        case .csv:
            let columns = columns ?? defaultColumns(records)
            var lines = [columns.map { csvField($0.key) }.joined(separator: ",")]
            for record in records {
                lines.append(columns.map { csvField(cellText(record[$0.key], key: $0.key)) }.joined(separator: ","))
            }
            return lines.joined(separator: "\n") + "\n"
        case .table:
            return table(records: records, columns: columns ?? defaultColumns(records), color: color, indent: "")
        }
    }

    /// A single item: a JSON object (not an array), one NDJSON line, a one-row CSV, or a
    /// key–value listing in table mode.
    public static func render(document: Record, format: OutputFormat, color: Bool = false) -> String {
        switch format {
        case .json: return document.jsonObject().prettySerialized() + "\n"
        case .ndjson: return document.jsonObject().serialized() + "\n"
        case .csv: return render(records: [document], format: .csv)
        case .table: return keyValues(document, color: color, indent: "")
        }
    }

    /// A `show` view: titled sections; JSON is one object with a member per section.
    ///
    /// CSV has four columns `section,item,field,value` (item is the 1-based row of a table
    /// section, empty for a field section).
    public static func render(detail: DetailView, format: OutputFormat, color: Bool = false) -> String {
        switch format {
        case .json: return detail.jsonObject().prettySerialized() + "\n"
        case .ndjson: return detail.jsonObject().serialized() + "\n"
        case .csv:
            var lines = ["section,item,field,value"]
            for section in detail.sections {
                switch section.content {
                case .fields(let record):
                    for (key, value) in record.fields {
                        lines.append(
                            [section.key, "", key, cellText(value, key: key)].map(csvField).joined(separator: ","))
                    }
                case .table(let records, _):
                    for (index, record) in records.enumerated() {
                        for (key, value) in record.fields {
                            lines.append(
                                [section.key, String(index + 1), key, cellText(value, key: key)].map(csvField)
                                    .joined(separator: ","))
                        }
                    }
                }
            }
            return lines.joined(separator: "\n") + "\n"
        case .table:
            var blocks: [String] = []
            for section in detail.sections {
                var block = (color ? bold + section.title + reset : section.title) + "\n"
                switch section.content {
                case .fields(let record):
                    block += record.fields.isEmpty ? "  (none)\n" : keyValues(record, color: false, indent: "  ")
                case .table(let records, let columns):
                    block +=
                        records.isEmpty
                        ? "  (none)\n"
                        : table(
                            records: records, columns: columns ?? defaultColumns(records), color: color, indent: "  ")
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
        case .int(let number): return DateFields.isDateKey(key) ? ISO8601.format(milliseconds: number) : String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .double, .array, .object: return value.serialized()
        }
    }

    /// A cell for a terminal: control characters made visible so rows stay on one line.
    static func tableText(_ value: JSONValue?, key: String) -> String {
        if value == nil || value == .null { return "-" }
        var text = ""
        for scalar in cellText(value, key: key).unicodeScalars {
            switch scalar {
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    text += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text
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

    static func table(records: [Record], columns: [Column], color: Bool, indent: String) -> String {
        guard !records.isEmpty, !columns.isEmpty else { return "" }
        let cells: [[String]] = records.map { record in
            columns.map { column in
                let text = tableText(record[column.key], key: column.key)
                return column.maxWidth.map { TextWidth.truncate(text, to: $0) } ?? text
            }
        }
        let headers = columns.map { column in
            column.maxWidth.map { TextWidth.truncate(column.header, to: $0) } ?? column.header
        }
        var widths = headers.map(TextWidth.of)
        for row in cells {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], TextWidth.of(cell)) }
        }
        let rightAligned: [Bool] = columns.map { column in
            switch column.alignment {
            case .left: return false
            case .right: return true
            case .automatic:
                guard !DateFields.isDateKey(column.key) else { return false }
                var sawNumber = false
                for record in records {
                    switch record[column.key] {
                    case .int?, .double?: sawNumber = true
                    case .null?, nil: continue
                    default: return false
                    }
                }
                return sawNumber
            }
        }
        func line(_ row: [String], header: Bool) -> String {
            var parts: [String] = []
            for (index, cell) in row.enumerated() {
                let isLast = index == row.count - 1
                let padded =
                    isLast && !rightAligned[index]
                    ? cell : TextWidth.pad(cell, to: widths[index], leading: rightAligned[index])
                parts.append(header && color ? bold + padded + reset : padded)
            }
            return indent + parts.joined(separator: "  ")
        }
        var lines = [line(headers, header: true)]
        lines += cells.map { line($0, header: false) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func keyValues(_ record: Record, color: Bool, indent: String) -> String {
        let width = record.keys.map(TextWidth.of).max() ?? 0
        return record.fields.map { key, value in
            let label = TextWidth.pad(key, to: width)
            return indent + (color ? bold + label + reset : label) + "  " + tableText(value, key: key) + "\n"
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
