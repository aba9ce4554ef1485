/// The default page of `orders list` and `audit list` when a table goes to a terminal and no
/// `--limit` is given (like `gh`): the first ``size`` rows and a note saying how many there are.
/// Pipes, files and the other formats get every row, as before.
enum TerminalPage {
    /// Rows shown at a terminal without `--limit`.
    static let size = 30

    /// Whether `invocation` shows a page: a table on a terminal, without `--limit`.
    static func applies(_ invocation: Invocation) -> Bool {
        invocation.output == .table && invocation.isStdoutTTY && invocation[CommandTree.limitOption] == nil
    }

    /// `rows` cut to the page when it applies, with the note `showing 30 of N ROWS; --limit N to see more`.
    static func cut<Row>(_ rows: [Row], noun: String, invocation: Invocation) -> (rows: [Row], note: String?) {
        guard applies(invocation), rows.count > size else { return (rows, nil) }
        return (Array(rows.prefix(size)), "showing \(size) of \(rows.count) \(noun); --limit N to see more")
    }
}
