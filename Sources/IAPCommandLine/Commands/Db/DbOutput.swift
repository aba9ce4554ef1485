/// How `db init` and `db status` print: lines on a table, one document otherwise.
enum DbOutput {
    /// Table mode: the given lines; other formats: the record.
    /// `report` (what `db init` did) goes to stderr like any note: stdout is for data (plans, status).
    static func emit(
        _ record: Record, invocation: Invocation, report: Bool = false, lines: () -> [String]
    ) -> ExitCode {
        if invocation.output == .table {
            for line in lines() {
                if report { invocation.note(line) } else { invocation.print(line) }
            }
        } else {
            invocation.emit(document: record)
        }
        return .success
    }
}
