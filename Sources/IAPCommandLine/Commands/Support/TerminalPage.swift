/// `--limit N|all`: at most N rows, or every row.
enum RowLimit: OptionValue, Equatable {
    case rows(Int)
    case all

    init(optionText text: String) throws(OptionValueProblem) {
        if text.lowercased() == "all" {
            self = .all
            return
        }
        let hint = "--limit all shows every row; --limit N at most N rows"
        guard let number = Int(text) else { throw OptionValueProblem("'\(text)' is not a number of rows or 'all'", hint: hint) }
        guard number >= 1 else { throw OptionValueProblem("'\(text)' would show no rows", hint: hint) }
        self = .rows(number)
    }

    /// The most rows to read, nil for every row.
    var count: Int? {
        switch self {
        case .rows(let count): count
        case .all: nil
        }
    }
}

/// The one page rule of the listing commands (`orders list`, `contracts list`, `audit list`,
/// `doctor`): a table on a terminal without `--limit` shows the first ``size`` rows and a note
/// saying how many more there are and how to see them (like `gh`). `--limit N` shows N, `--limit
/// all` every row; pipes, files and the other formats get every row unless `--limit` is given.
enum TerminalPage {
    /// Rows shown at a terminal without `--limit`.
    static let size = 30

    /// The help of `--limit`, the same on every command that pages.
    static let help =
        "Show at most this many rows; 'all' shows every row. Without it a table on a terminal shows "
        + "the first \(size) and says how many more there are; pipes, files and -o json, ndjson and csv "
        + "get every row."

    /// Whether `invocation` shows a page: a table on a terminal, without `--limit`.
    static func applies(_ invocation: Invocation) -> Bool {
        invocation.output == .table && invocation.isStdoutTTY && invocation[CommandTree.limitOption] == nil
    }

    /// `rows` cut to the page when it applies, with the note ``note(shown:of:noun:)``.
    static func cut<Row>(_ rows: [Row], noun: String, invocation: Invocation) -> (rows: [Row], note: String?) {
        guard applies(invocation), rows.count > size else { return (rows, nil) }
        return (Array(rows.prefix(size)), note(shown: size, of: rows.count, noun: noun))
    }

    /// `30 of 34 orders shown; 4 more: --limit all (or --limit N)`.
    static func note(shown: Int, of total: Int, noun: String) -> String {
        "\(shown) of \(total) \(noun) shown; \(total - shown) more: --limit all (or --limit N)"
    }
}
