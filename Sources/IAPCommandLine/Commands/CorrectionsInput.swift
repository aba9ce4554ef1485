import AppStoreJWS
import IAPFoundation

/// One row of a `--from` batch: its 1-based input line and its fields in input order.
struct InputRow {
    var line: Int
    var fields: [(key: String, value: JSONValue)]

    /// The value of `key`, if the row has it.
    func value(_ key: String) -> JSONValue? { fields.first { $0.key == key }?.value }

    /// `line 3: ` — the prefix of every error about this row.
    var prefix: String { "line \(line): " }
}

/// Reads `--from FILE|-` batches: NDJSON (one JSON object per line) or CSV with a header line.
///
/// CSV is chosen for a `.csv` file or when the first non-blank line does not start with `{`.
/// CSV cells are strings; an empty cell means "not given". Blank lines are skipped.
enum BatchInput {
    /// Every row of the input, or a `.dataError` naming the first bad line; `.noInput` when empty.
    static func read(_ invocation: Invocation, from path: String) throws(CLIError) -> [InputRow] {
        let input = try invocation.openInput(path)
        let text = try input.readAllText()
        let rows: [InputRow]
        if isCSV(path: path, text: text) {
            rows = try csvRows(text)
        } else {
            rows = try ndjsonRows(text)
        }
        guard !rows.isEmpty else { throw CLIError(.noInput, "no rows in \(input.name)") }
        // Ids and audit texts are shown to people later: no control or bidi characters in them.
        for row in rows {
            for (key, value) in row.fields {
                guard case .string(let text) = value, let control = TerminalText.firstControl(text) else { continue }
                throw CLIError(
                    .dataError,
                    "\(row.prefix)'\(TerminalText.escape(key))' holds a control character (\(control))",
                    hint: "remove control and bidi characters from the input; nothing was changed")
            }
        }
        return rows
    }

    static func isCSV(path: String, text: String) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") { return true }
        if lower.hasSuffix(".ndjson") || lower.hasSuffix(".jsonl") || lower.hasSuffix(".json") { return false }
        let first = text.split(separator: "\n").first { !$0.allSatisfy(\.isWhitespace) }
        guard let first else { return false }
        return first.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).first != "{"
    }

    /// One JSON object per non-blank line.
    static func ndjsonRows(_ text: String) throws(CLIError) -> [InputRow] {
        var rows: [InputRow] = []
        var number = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            if number == 1, line.first == "\u{FEFF}" { line = line.dropFirst() }
            if line.allSatisfy(\.isWhitespace) { continue }
            let value: JSONValue
            do {
                value = try JSONText.parse(String(line))
            } catch {
                throw CLIError(
                    .dataError, "line \(number): not JSON (column \(error.column): \(error.reason))",
                    hint: "each line must be one JSON object, e.g. {\"no\": \"…\", \"status\": \"paid\"}; "
                        + "or give CSV with a header line")
            }
            guard let members = value.objectMembers else {
                throw CLIError(.dataError, "line \(number): expected a JSON object, found \(kind(value))")
            }
            rows.append(InputRow(line: number, fields: members))
        }
        return rows
    }

    /// RFC 4180 CSV with a header line; quoted cells may hold commas, quotes ("") and newlines.
    static func csvRows(_ text: String) throws(CLIError) -> [InputRow] {
        let records = try csvRecords(text)
        guard let header = records.first else { return [] }
        let names = header.cells.map { $0.trimmed(.spacesAndTabs).lowercased() }
        if let empty = names.firstIndex(of: "") {
            throw CLIError(.dataError, "line \(header.line): the CSV header has an empty name in column \(empty + 1)")
        }
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw CLIError(.dataError, "line \(header.line): the CSV header names '\(name)' twice")
        }
        var rows: [InputRow] = []
        for record in records.dropFirst() {
            guard record.cells.count == names.count else {
                throw CLIError(
                    .dataError,
                    "line \(record.line): expected \(names.count) fields (\(names.joined(separator: ","))), "
                        + "found \(record.cells.count)",
                    hint: "quote cells that contain commas: \"a,b\"")
            }
            var fields: [(key: String, value: JSONValue)] = []
            for (name, cell) in zip(names, record.cells) where !cell.isEmpty {
                fields.append((name, .string(cell)))
            }
            rows.append(InputRow(line: record.line, fields: fields))
        }
        return rows
    }

    /// Records (cells and the line each starts on), blank lines skipped.
    static func csvRecords(_ text: String) throws(CLIError) -> [(line: Int, cells: [String])] {
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
                guard cell.isEmpty else {
                    throw CLIError(
                        .dataError, "line \(line): a quote inside an unquoted CSV cell",
                        hint: "quote the whole cell and double inner quotes: \"a \"\"b\"\"\"")
                }
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
        if inQuotes { throw CLIError(.dataError, "line \(recordLine): unterminated quoted CSV cell") }
        if !cell.isEmpty || !cells.isEmpty || quotedCell { endRecord() }
        return records
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Conversions of batch cells and option values to column values; errors are messages for a line.
enum FieldValue {
    /// A non-empty string (numbers accepted as their digits, for Apple ids).
    /// The longest id or text value a row may hold: both backends' columns take 255 characters.
    static let maxLength = 255

    static func text(_ value: JSONValue, field: String) throws(CLIError) -> String {
        switch value {
        case .string(let s) where !s.isEmpty && !s.allSatisfy(\.isWhitespace):
            try checkLength(s, field: field)
            return s
        case .int(let n): return String(n)
        default: throw CLIError(.dataError, "\(field) must be a non-empty string, found \(BatchInput.kind(value))")
        }
    }

    /// Refuses a value longer than ``maxLength`` characters (MySQL's columns would refuse it later).
    static func checkLength(_ text: String, field: String) throws(CLIError) {
        if text.count > maxLength {
            throw CLIError(.dataError, "\(field) is \(text.count) characters long; the limit is \(maxLength)")
        }
    }

    /// A string, or nil for JSON null or "".
    static func optionalText(_ value: JSONValue, field: String) throws(CLIError) -> String? {
        if value.isNull || value == .string("") { return nil }
        return try text(value, field: field)
    }

    /// A time: integer milliseconds (number or digits) or ISO-8601; nil for null or "".
    static func optionalTime(_ value: JSONValue, field: String) throws(CLIError) -> Int64? {
        switch value {
        case .null, .string(""): return nil
        case .int(let ms): return ms
        case .string(let s):
            if let ms = Int64(s) { return ms }
            if let ms = Timestamp.parse(s, now: Timestamp.now()) { return ms }
            fallthrough
        default:
            throw CLIError(
                .dataError,
                "\(field) \(quoted(value)) is not a time (use milliseconds since 1970 or ISO-8601 like "
                    + "2025-12-31T00:00:00Z)")
        }
    }

    /// true/false, on/off, yes/no, 1/0.
    static func flag(_ value: JSONValue, field: String) throws(CLIError) -> Bool {
        switch value {
        case .bool(let b): return b
        case .int(1): return true
        case .int(0): return false
        case .string(let s):
            switch s.lowercased() {
            case "true", "on", "yes", "1": return true
            case "false", "off", "no", "0": return false
            default: break
            }
        default: break
        }
        throw CLIError(.dataError, "\(field) \(quoted(value)) is not on/off (use on, off, true or false)")
    }

    /// One of `allowed`, matched without regard to case.
    static func choice<Choice: CaseIterable & RawRepresentable<String>>(
        _ value: JSONValue, field: String, of type: Choice.Type = Choice.self
    ) throws(CLIError) -> Choice {
        let text = value.stringValue ?? ""
        if let match = Choice.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) { return match }
        throw CLIError(
            .dataError,
            "unknown \(field) \(quoted(value)) (allowed: \(Choice.allCases.map(\.rawValue).joined(separator: ", ")))")
    }

    static func quoted(_ value: JSONValue) -> String {
        if case .string(let s) = value { return "'\(s)'" }
        return value.serialized()
    }
}
