import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

extension BatchRow {
    /// `line 3: ` — the prefix of every error about this row.
    var prefix: String { Self.prefix(line) }

    /// `line 3: ` — the prefix of every error about input line `line`.
    static func prefix(_ line: Int) -> String { "line \(line): " }
}

/// Reads `--from FILE|-` batches (``BatchRows`` parses them).
enum BatchInput {
    /// Every row of the input, or a `.dataError` naming the first bad line; `.noInput` when empty.
    static func read(_ invocation: Invocation, from path: String) throws(CLIError) -> [BatchRow] {
        let input = try invocation.openInput(path)
        let text = try input.readAllText()
        if let header = BatchInput.semicolonHeader(text) {
            throw CLIError(
                .dataError, "line 1: the header has one column '\(TerminalText.escape(header))': use commas",
                hint: "CSV separates columns with commas: \(TerminalText.escape(header.replacing(";", with: ",")))")
        }
        let rows: [BatchRow]
        do { rows = try BatchRows.parse(text, path: path) } catch { throw error.cliError }
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

    /// The first line of CSV `text` when it is a header separated by semicolons (a spreadsheet's
    /// "CSV" in some locales), read as one column: `trade_no;status`.
    static func semicolonHeader(_ text: String) -> String? {
        guard let first = text.split(maxSplits: 1, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first else {
            return nil
        }
        let header = String(first.trimmed(.spacesAndNewlines))
        guard !header.hasPrefix("{"), header.contains(";"), !header.contains(","), !header.contains("\"") else { return nil }
        return header
    }
}

extension BatchRowsError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .notJSON(let line, let column, let reason):
            return CLIError(
                .dataError, "line \(line): not JSON (column \(column): \(reason))",
                hint: "each line must be one JSON object, e.g. {\"no\": \"…\", \"status\": \"paid\"}; "
                    + "or give CSV with a header line")
        case .notAnObject(let line, let found):
            return CLIError(.dataError, "line \(line): expected a JSON object, found \(found.typeNameWithArticle)")
        case .emptyHeaderName(let line, let column):
            return CLIError(.dataError, "line \(line): the CSV header has an empty name in column \(column)")
        case .duplicateHeaderName(let line, let name):
            return CLIError(.dataError, "line \(line): the CSV header names '\(name)' twice")
        case .wrongFieldCount(let line, let header, let found):
            return CLIError(
                .dataError,
                "line \(line): expected \(header.count) fields (\(header.joined(separator: ","))), found \(found)",
                hint: "quote cells that contain commas: \"a,b\"")
        case .quoteInUnquotedCell(let line):
            return CLIError(
                .dataError, "line \(line): a quote inside an unquoted CSV cell",
                hint: "quote the whole cell and double inner quotes: \"a \"\"b\"\"\"")
        case .unterminatedQuote(let line):
            return CLIError(.dataError, "line \(line): unterminated quoted CSV cell")
        }
    }
}

extension BatchFieldError: CLIErrorConvertible {
    public var cliError: CLIError {
        func quoted(_ value: JSONValue) -> String {
            if case .string(let s) = value { return "'\(s)'" }
            return value.serialized()
        }
        switch self {
        case .notText(let field, let found):
            let what: String
            switch found {
            case .string(let text): what = text.isEmpty ? "an empty string" : "a blank string"
            default: what = found.typeNameWithArticle
            }
            return CLIError(.dataError, "\(field) must be a non-empty string, found \(what)")
        case .tooLong(let field, let length, let limit):
            return CLIError(.dataError, "\(field) is \(length) characters long; the limit is \(limit)")
        case .notTime(let field, let value):
            return CLIError(
                .dataError,
                "\(field) \(quoted(value)) is not a time (use milliseconds since 1970 or ISO-8601 like "
                    + "2025-12-31T00:00:00Z)")
        case .notFlag(let field, let value):
            return CLIError(.dataError, "\(field) \(quoted(value)) is not on/off (use on, off, true or false)")
        case .unknownChoice(let field, let value, let allowed):
            let closest = value.stringValue.flatMap { Suggestion.closest(to: $0, among: allowed) }
            return CLIError(
                .dataError, "unknown \(field) \(quoted(value)) (allowed: \(allowed.joined(separator: ", ")))",
                hint: closest.map { "did you mean '\($0)'?" })
        }
    }
}
