import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// Every bad row of a `--from` correction file in one report, before anything is written: rows
/// that are not corrections, values a field does not take (with a suggestion for a near miss),
/// rows naming no stored order or contract, and a row named twice. One bad row is reported as
/// before (its own error and exit code); several in one error listing each line with its fix.
enum CorrectionFileReport {
    /// One bad row: its line, and what is wrong and what to do (the error's message and hint).
    struct Problem {
        var line: Int
        var error: CLIError
    }

    /// The problems of `requests` (read in `session`): invalid values, rows not found, and rows
    /// that name a row an earlier line already names.
    static func problems<Row: CorrectableRow>(
        _ requests: [CorrectionRequest<Row>], as _: Row.Type, in session: any StoreSession
    ) throws -> [Problem] {
        var problems: [Problem] = []
        var firstLine: [String: Int] = [:]
        for request in requests {
            let line = request.line ?? 0
            for value in request.values {
                guard case .invalid(let error) = value else { continue }
                problems.append(Problem(line: line, error: CorrectionError.invalidValue(line: line, error).cliError))
            }
            guard let row = try Row.find(request.key, field: request.keyField, in: session) else {
                let error = CorrectionError.notFound(
                    line: line, entity: Row.entity, fields: request.keyField, key: request.key)
                problems.append(Problem(line: line, error: error.cliError))
                continue
            }
            if let earlier = firstLine[row.auditKey] {
                let named = request.key == row.auditKey ? "" : " (\(request.keyField) \(request.key))"
                problems.append(
                    Problem(
                        line: line,
                        error: CLIError(
                            .dataError,
                            "line \(line): \(Row.entity.rawValue) \(row.auditKey)\(named) is also on line \(earlier)",
                            hint: "put every change of one \(Row.entity.rawValue) in one row (merge lines \(earlier) and \(line))"
                        )))
            } else {
                firstLine[row.auditKey] = line
            }
        }
        return problems
    }

    /// Nothing when `problems` is empty; the one error of a single bad row; else one error
    /// listing every bad line (in line order) with its fix. Its exit code is the problems' when
    /// they share one, else 65 (malformed input).
    static func check(_ problems: [Problem], file: String, rows: Int) throws(CLIError) {
        guard problems.count > 1 else {
            if let only = problems.first { throw only.error }
            return
        }
        let sorted = problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(\.element)
        let lines = Set(sorted.map(\.line)).count
        let codes = Set(sorted.map(\.error.code.rawValue))
        let code = codes.count == 1 ? sorted[0].error.code : .dataError
        var text = "\(lines) of \(rows) row\(rows == 1 ? "" : "s") of \(file) \(lines == 1 ? "is" : "are") bad; nothing was changed:"
        for problem in sorted {
            text += "\n  " + problem.error.message
            if let hint = problem.error.hint { text += "\n    fix: " + hint }
        }
        throw CLIError(code, text, hint: "correct every line listed, then run the same command again")
    }
}
