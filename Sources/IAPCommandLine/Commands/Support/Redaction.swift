import IAPFoundation
import IAPOperations

/// `--redact`: replaces user ids, order numbers, transaction and contract ids, notification UUIDs,
/// actors, e-mail addresses and phone numbers by per-run aliases (`user-1`, `order-2`, …), so the
/// output can be pasted into a ticket. What is personal data and how it is aliased are
/// `PersonalDataMasker`'s rules (IAPOperations); this is the plumbing.
///
/// How: records are masked field by field before any layout (so a table never cuts a raw id, and
/// JSON/NDJSON/CSV carry the same aliases); free text (reasons, details, messages on stderr and the
/// error) is masked word by word, by the sink when it is written. One masker per run: the same
/// value gets the same alias everywhere in that run, and another run numbers afresh.
enum Redaction {
    /// `handler`, redacting its output when `--redact` is on.
    static func wrap(_ handler: @escaping CommandHandler) -> CommandHandler {
        { invocation in
            guard invocation.declares(CommandTree.redactOption), invocation.flag(CommandTree.redactOption) else {
                return try handler(invocation)
            }
            return try run(handler, invocation)
        }
    }

    static func run(_ handler: CommandHandler, _ invocation: Invocation) throws -> ExitCode {
        let redactor = Redactor(invocation: invocation)
        let inner = Invocation(
            parsed: invocation.parsed, settings: invocation.settings, environment: invocation.environment,
            stdin: invocation.stdin, stdout: RedactingSink(invocation.stdout, redactor),
            stderr: RedactingSink(invocation.stderr, redactor), isStdoutTTY: invocation.isStdoutTTY,
            root: invocation.root, masking: redactor)
        defer {
            try? inner.stdout.flush()
            try? inner.stderr.flush()
        }
        do {
            return try handler(inner)
        } catch let error as CLIError {
            throw redactor.mask(error)
        } catch let error as CLIErrorConvertible {
            throw redactor.mask(error.cliError)
        }
    }
}

/// A sink that masks each complete line of free text before passing it on (the safety net for
/// text a command writes directly; records are masked by field before they are rendered).
final class RedactingSink: OutputSink {
    private let inner: OutputSink
    private let redactor: Redactor
    private var pending = ""

    init(_ inner: OutputSink, _ redactor: Redactor) {
        self.inner = inner
        self.redactor = redactor
    }

    /// The terminal width of the sink underneath (tables fit the real terminal).
    var terminalColumns: Int? { inner.terminalColumns }

    func write(_ text: String) {
        pending += text
        guard let lastNewline = pending.lastIndex(of: "\n") else { return }
        let complete = pending[...lastNewline]
        inner.write(redactor.text(String(complete)))
        pending = String(pending[pending.index(after: lastNewline)...])
    }

    func flush() throws(CLIError) {
        if !pending.isEmpty {
            inner.write(redactor.text(pending))
            pending = ""
        }
        try inner.flush()
    }
}

/// `--redact`'s masking of what a command prints: one run's `PersonalDataMasker` (the rules, in
/// IAPOperations) adapted to records, detail views and errors. The user the command names and the
/// actor (who runs it) get the first aliases; words of free text are looked up in the run's
/// database, opened read-only on first need.
final class Redactor: RecordMasking {
    let masker: PersonalDataMasker

    init(invocation: Invocation) {
        masker = PersonalDataMasker(store: { try? DbOpen.existing(invocation, readOnly: true) })
        if invocation.declares(CommandTree.userOption.spec), let user = invocation[CommandTree.userOption] {
            _ = masker.alias(user, .user)
        }
        // The actor (who runs this) is masked wherever it appears, like the ids.
        _ = masker.alias(invocation.actor, .actor)
    }

    /// The alias of `value` (made on first sight).
    func alias(_ value: String, _ kind: PersonalDataMasker.Kind) -> String {
        masker.alias(value, kind)
    }

    /// A JSON document with every id member aliased and all other text masked.
    func json(_ document: JSONValue) -> JSONValue {
        masker.json(document)
    }

    /// A record with every id field replaced by its alias and every other text masked as free text.
    func record(_ record: Record) -> Record {
        Record(masker.fields(record.fields))
    }

    /// A detail view with every record masked.
    func detail(_ view: DetailView) -> DetailView {
        masker.collect(view.jsonObject())
        var masked = view
        for index in masked.sections.indices {
            switch masked.sections[index].content {
            case .fields(let record): masked.sections[index].content = .fields(self.record(record))
            case .table(let records, let columns):
                masked.sections[index].content = .table(records.map(self.record), columns: columns)
            }
        }
        return masked
    }

    /// An error with its message and hint masked.
    func mask(_ error: CLIError) -> CLIError {
        var masked = error
        masked.message = text(error.message)
        masked.hint = error.hint.map(text)
        return masked
    }

    /// `text` with every sensitive word replaced by its alias.
    func text(_ text: String) -> String {
        masker.text(text)
    }
}
