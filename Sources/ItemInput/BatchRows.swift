import IAPFoundation

/// One row of a `--from` batch: its 1-based input line and its fields in input order.
public struct BatchRow: Sendable {
    public var line: Int
    public var fields: [(key: String, value: JSONValue)]

    public init(line: Int, fields: [(key: String, value: JSONValue)]) {
        self.line = line
        self.fields = fields
    }

    /// The value of `key`, if the row has it.
    public func value(_ key: String) -> JSONValue? { fields.first { $0.key == key }?.value }
}

/// Why a batch is not rows: the line it was found on and what was there.
public enum BatchRowsError: Error, Sendable, Equatable {
    /// An NDJSON line that is not JSON (at `column`, for `reason`; a duplicate key is one).
    case notJSON(line: Int, column: Int, reason: String)
    /// An NDJSON line holding JSON other than an object.
    case notAnObject(line: Int, found: JSONValue)
    /// A CSV header whose `column` (1-based) has no name.
    case emptyHeaderName(line: Int, column: Int)
    /// A CSV header naming a column twice (names are trimmed and lowercased).
    case duplicateHeaderName(line: Int, name: String)
    /// A CSV record with another number of cells than the header has names.
    case wrongFieldCount(line: Int, header: [String], found: Int)
    /// A `"` inside a cell that does not start with one.
    case quoteInUnquotedCell(line: Int)
    /// A quoted cell still open at the end of the input (`line`: where its record starts).
    case unterminatedQuote(line: Int)
}

/// `--from FILE|-` batches: NDJSON (one JSON object per line) or CSV with a header line.
///
/// CSV is chosen for a `.csv` file or when the first non-blank line does not start with `{`.
/// CSV cells are strings; an empty cell means "not given". Blank lines are skipped.
public enum BatchRows {
    /// Every row of `text` (read from `path`, whose extension may say the format).
    public static func parse(_ text: String, path: String) throws(BatchRowsError) -> [BatchRow] {
        isCSV(path: path, text: text) ? try csv(text) : try ndjson(text)
    }

    /// Whether the input is CSV: by its extension, else when its first non-blank line does not start with `{`.
    public static func isCSV(path: String, text: String) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") { return true }
        if lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") || lower.hasSuffix(".json") { return false }
        let first = text.split(separator: "\n").first { !$0.allSatisfy(\.isWhitespace) }
        guard let first else { return false }
        return first.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).first != "{"
    }

    /// One JSON object per non-blank line.
    public static func ndjson(_ text: String) throws(BatchRowsError) -> [BatchRow] {
        var rows: [BatchRow] = []
        var number = 0
        // "\r\n" is one Character in Swift: split on it too, or a CRLF file is one long line.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            if number == 1, line.first == "\u{FEFF}" { line = line.dropFirst() }
            if line.allSatisfy(\.isWhitespace) { continue }
            let value: JSONValue
            do {
                value = try JSONText.parse(String(line))
            } catch {
                throw .notJSON(line: number, column: error.column, reason: error.reason)
            }
            guard let members = value.objectMembers else { throw .notAnObject(line: number, found: value) }
            rows.append(BatchRow(line: number, fields: members))
        }
        return rows
    }

    /// RFC 4180 CSV with a header line; quoted cells may hold commas, quotes ("") and newlines.
    public static func csv(_ text: String) throws(BatchRowsError) -> [BatchRow] {
        let records = try csvRecords(text)
        guard let header = records.first else { return [] }
        let names = header.cells.map { $0.trimmed(.spacesAndTabs).lowercased() }
        if let empty = names.firstIndex(of: "") { throw .emptyHeaderName(line: header.line, column: empty + 1) }
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw .duplicateHeaderName(line: header.line, name: name)
        }
        var rows: [BatchRow] = []
        for record in records.dropFirst() {
            guard record.cells.count == names.count else {
                throw .wrongFieldCount(line: record.line, header: names, found: record.cells.count)
            }
            var fields: [(key: String, value: JSONValue)] = []
            for (name, cell) in zip(names, record.cells) where !cell.isEmpty {
                fields.append((name, .string(cell)))
            }
            rows.append(BatchRow(line: record.line, fields: fields))
        }
        return rows
    }

    /// Records (cells and the line each starts on), blank lines skipped.
    public static func csvRecords(_ text: String) throws(BatchRowsError) -> [(line: Int, cells: [String])] {
        var records: [(line: Int, cells: [String])] = []
        var cells: [String] = []
        var cell = ""
        var line = 1
        var recordLine = 1
        var inQuotes = false
        var quotedCell = false
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var index = 0
        func endRecord() {
            cells.append(cell)
            if !(cells.count == 1 && cells[0].isEmpty && !quotedCell) { records.append((recordLine, cells)) }
            cells = []
            cell = ""
            quotedCell = false
        }
        while index < scalars.count {
            let c = scalars[index]
            index += 1
            if inQuotes {
                if c == "\"" {
                    if index < scalars.count, scalars[index] == "\"" {
                        cell.unicodeScalars.append("\"")
                        index += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if c == "\n" { line += 1 }
                    cell.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case "\"":
                guard cell.isEmpty else { throw .quoteInUnquotedCell(line: line) }
                inQuotes = true
                quotedCell = true
            case ",":
                cells.append(cell)
                cell = ""
                quotedCell = false
            case "\r":
                continue
            case "\n":
                endRecord()
                line += 1
                recordLine = line
            default:
                cell.unicodeScalars.append(c)
            }
        }
        if inQuotes { throw .unterminatedQuote(line: recordLine) }
        if !cell.isEmpty || !cells.isEmpty || quotedCell { endRecord() }
        return records
    }
}
