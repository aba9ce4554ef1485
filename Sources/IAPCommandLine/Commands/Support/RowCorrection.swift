import AppStoreJWS
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// An option of `orders update` or `contracts update` that sets a field of the row (`--status` →
/// `status`); "" clears a nullable field.
struct FieldOption: Sendable {
    /// The option, for messages that list them.
    let option: OptionSpec
    /// The row's field.
    let field: String
    /// The option's value as the field's text, nil when not given.
    let value: @Sendable (Invocation) -> String?

    /// A text option.
    init(_ option: Option<String?>, _ field: String) {
        self.option = option.spec
        self.field = field
        value = { $0[option] }
    }

    /// An option of enumerated choices, set as its raw value.
    init<Choice: OptionValue & RawRepresentable>(_ option: Option<Choice?>, _ field: String)
    where Choice.RawValue == String {
        self.option = option.spec
        self.field = field
        value = { $0[option]?.rawValue }
    }
}

/// Hand correction of one row or of a `--from` batch, audited, all or nothing.
enum RowCorrection {
    /// The body of `orders update` and `contracts update`: `key` is the command's KEY argument
    /// (named `keyName`), `fields` its options that set a field, `from` its `--from` and the file it
    /// names (nil: the command takes no batches), `clearOverride` its `--clear-override`.
    static func run<Row: CorrectableRow>(
        _ invocation: Invocation, as type: Row.Type, command: String, key: String?, keyName: String,
        fields: [FieldOption], from: (option: OptionSpec, file: String?)?, clearOverride: Option<[String]>
    ) throws -> ExitCode {
        let example = "refund approved by support"
        let (reason, ticket) = try Corrections.optionalReasonAndTicket(invocation, example: example)
        let dryRun = invocation.flag(CommandTree.dryRun)
        let values = fields.compactMap { field in field.value(invocation).map { (key: field.field, value: JSONValue.string($0)) } }
        let options = fields.map { "--\($0.option.long)" }.joined(separator: ", ")
        let cleared = invocation[clearOverride]
        if !cleared.isEmpty {
            guard values.isEmpty, from?.file == nil else {
                throw CLIError.usage(
                    "--\(clearOverride.spec.long) cannot be combined with \(options)\(from.map { " or --\($0.option.long)" } ?? "")",
                    hint: "clear the override first, then correct the row in a second command")
            }
            guard let key else { throw CLIError.usage("missing argument <\(keyName)>") }
            guard let reason else { throw Corrections.missingReason(example: example) }
            return try Corrections.clearOverrides(
                Row.self, key: key, fields: cleared, reason: reason, ticket: ticket, command: command, invocation: invocation,
                dryRun: dryRun)
        }
        let requests: [CorrectionRequest<Row>]
        if let from = from?.file {
            if key != nil {
                throw CLIError.usage("give either <\(keyName)> or --from, not both")
            }
            if !values.isEmpty {
                throw CLIError.usage("with --from, put the fields in the file's rows, not in \(options)")
            }
            let rows = try BatchInput.read(invocation, from: from)
            let checked = CorrectionRows.check(rows, for: Row.self, reason: reason, ticket: ticket)
            requests = checked.requests
            // Every bad row at once (not one per run): the rows' shape, then their values and keys.
            var problems = checked.problems.map { CorrectionFileReport.Problem(line: $0.line, error: $0.cliError) }
            let lookUp = {
                try DbOpen.read(invocation) { session in
                    try CorrectionFileReport.problems(requests, as: Row.self, in: session)
                }
            }
            // Rows already refused: the batch stops whatever the look-ups say, so a database that
            // cannot be read only leaves their problems out.
            problems += checked.problems.isEmpty ? try lookUp() : (try? lookUp()) ?? []
            try CorrectionFileReport.check(problems, file: from == "-" ? "stdin" : from, rows: rows.count)
        } else {
            guard let key else {
                throw CLIError.usage("missing argument <\(keyName)>", hint: "or give --from FILE for a batch")
            }
            guard !values.isEmpty else {
                throw CLIError.usage("nothing to change", hint: "give at least one of \(options)")
            }
            guard let reason else { throw Corrections.missingReason(example: example) }
            requests = [
                CorrectionRequest(line: nil, key: key, keyField: "", fields: values, reason: reason, ticket: ticket)
            ]
        }
        let store = try DbOpen.existing(invocation)
        let results = try Corrections.apply(
            requests, as: Row.self, store: store, invocation: invocation, command: command, dryRun: dryRun)
        Corrections.report(results, invocation: invocation, dryRun: dryRun)
        return .success
    }
}
