import IAPFoundation

/// Everything a command handler needs: what was asked, the resolved settings, and the streams.
///
/// Data goes to `stdout` (rendered in `output`); notes, warnings and diagnostics to `stderr`.
public final class Invocation {
    /// The parsed command line.
    public let parsed: ParsedInvocation
    /// Option values from the command line, environment, `--config` file and defaults.
    public let settings: Settings
    /// The process environment (or the one a test injected).
    public let environment: [String: String]
    /// Command input (stdin unless a handler opens a file).
    public let stdin: InputReader
    /// Where data goes.
    public let stdout: OutputSink
    /// Where everything else goes.
    public let stderr: OutputSink
    /// Whether stdout is a terminal.
    public let isStdoutTTY: Bool
    /// The root of the command tree (for help and generators).
    public let root: CommandSpec
    /// Masks records before they are laid out (a program's `--redact`); nil: no masking.
    public let masking: (any RecordMasking)?

    /// Whether stderr is a terminal (progress lines are drawn only then).
    public var isStderrTTY: Bool { (stderr as? FileDescriptorSink)?.isTerminal ?? false }

    /// Creates an invocation (the runner does this; tests and wrapping handlers may too).
    public init(
        parsed: ParsedInvocation, settings: Settings, environment: [String: String], stdin: InputReader,
        stdout: OutputSink, stderr: OutputSink, isStdoutTTY: Bool, root: CommandSpec,
        masking: (any RecordMasking)? = nil
    ) {
        self.masking = masking
        self.parsed = parsed
        self.settings = settings
        self.environment = environment
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.isStdoutTTY = isStdoutTTY
        self.root = root
    }

    /// The command path (`["orders", "list"]`).
    public var path: [String] { parsed.path }
    /// Positional arguments.
    public var arguments: [String] { parsed.arguments }

    // Options are read typed by their declaration (`self[option]`, TypedOption.swift), never by a string.

    /// The output format (`-o`); table when the command has no such option.
    public var output: OutputFormat { settings.value(StandardOptions.output.long).flatMap(OutputFormat.init(rawValue:)) ?? .table }
    /// `-q`: only data and errors.
    public var quiet: Bool { settings.flag(StandardOptions.quiet.long) }
    /// `-v`: extra diagnostics on stderr.
    public var verbose: Bool { settings.flag(StandardOptions.verbose.long) && !quiet }
    /// Colour on stdout: a terminal that is not `TERM=dumb`, `NO_COLOR` unset and no `--no-color`.
    public var colorEnabled: Bool {
        isStdoutTTY && (environment["NO_COLOR"] ?? "").isEmpty && !settings.flag(StandardOptions.noColor.long) && !dumbTerminal
    }

    /// `TERM=dumb`: a terminal that understands no escape codes (no colour, no progress line).
    public var dumbTerminal: Bool { environment["TERM"] == "dumb" }

    /// The width tables are fitted to: the terminal's (its window size, else `COLUMNS`, else 80)
    /// when stdout is a terminal and `--wide` is not given; nil (never cut) otherwise.
    public var tableWidth: Int? {
        guard !settings.flag(StandardOptions.wide.long) else { return nil }
        return terminalWidth
    }

    /// The terminal's width (its window size, else `COLUMNS`, else 80) when stdout is a terminal.
    public var terminalWidth: Int? {
        guard isStdoutTTY else { return nil }
        if let columns = stdout.terminalColumns { return columns }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// How this run renders: colour, terminal width, CSV protection.
    public var outputStyle: OutputStyle {
        OutputStyle(
            color: colorEnabled, width: tableWidth, csvRaw: settings.flag(StandardOptions.csvRaw.long), csvEscapesControls: isStdoutTTY,
            wrapWidth: terminalWidth, ascii: isStdoutTTY && AsciiFallback.isNeeded(environment))
    }

    /// Writes a line of data to stdout (control characters made visible on a terminal).
    public func print(_ line: String) { stdout.writeLine(isStdoutTTY ? TerminalText.escape(line) : line) }

    /// Renders a list in the chosen output format to stdout.
    public func emit(_ records: [Record], columns: [Column]? = nil) {
        let records = masking.map { masking in records.map(masking.record) } ?? records
        write(OutputRenderer.render(records: records, columns: columns, format: output, style: outputStyle))
    }

    /// Renders one item in the chosen output format to stdout.
    public func emit(document: Record) {
        let document = masking?.record(document) ?? document
        write(OutputRenderer.render(document: document, format: output, style: outputStyle))
    }

    /// Renders a `show` view in the chosen output format to stdout.
    public func emit(detail: DetailView) {
        let detail = masking?.detail(detail) ?? detail
        write(OutputRenderer.render(detail: detail, format: output, style: outputStyle))
    }

    /// A JSON document (pretty for `-o json`, one line otherwise) to stdout.
    public func emit(json document: JSONValue) {
        let document = masking?.json(document) ?? document
        write((output == .json ? document.prettySerialized() : document.serialized()) + "\n")
    }

    /// One NDJSON line of a record (a batch streaming its results).
    public func emitLine(_ record: Record) {
        let record = masking?.record(record) ?? record
        write(record.jsonObject().serialized() + "\n")
    }

    /// Output already rendered in the chosen format (a batch writing what it kept), to stdout.
    public func emitRendered(_ text: String) {
        write(text)
    }

    /// Rendered output to stdout; JSON on a terminal gets C1 and bidi controls as `\u` escapes.
    private func write(_ text: String) {
        let onTerminal = isStdoutTTY && (output == .json || output == .ndjson)
        stdout.write(onTerminal ? TerminalText.jsonEscaped(text) : text)
    }

    /// A progress or summary note on stderr (not with `-q`); control characters made visible.
    /// On a terminal a long note wraps at words, its continuation lines indented by two, a command
    /// in it kept whole (`TextWrap.hanging`); elsewhere it is one line.
    public func note(_ message: String) {
        guard !quiet else { return }
        let text = TerminalText.escape(message, keepNewlines: true)
        for line in TextWrap.hanging(text, prefix: "", width: stderr.terminalColumns, hang: 2) { stderr.writeLine(line) }
    }

    /// `warning: …` on stderr (not with `-q`); control characters made visible; wrapped like `note`,
    /// under the text after `warning: `.
    public func warn(_ message: String) {
        guard !quiet else { return }
        let text = TerminalText.escape(message, keepNewlines: true)
        for line in TextWrap.hanging(text, prefix: "warning: ", width: stderr.terminalColumns) { stderr.writeLine(line) }
    }

    /// A diagnostic on stderr, only with `-v`; control characters made visible.
    public func debug(_ message: String) {
        if verbose { stderr.writeLine(TerminalText.escape(message, keepNewlines: true)) }
    }

    /// The input named by a FILE argument: stdin for nil or `-`, else the opened file (66 if missing).
    ///
    /// When stdin is a terminal, a one-line prompt on stderr says what to do, and the terminal is
    /// read without its 4 KB line limit (see `InputReader.beginTerminalPaste`).
    public func openInput(_ path: String?) throws(CLIError) -> InputReader {
        guard let path, path != "-" else {
            let pasting = stdin.beginTerminalPaste()
            pastesAtTerminal = pasting
            readsPipe = !pasting && stdin.isPipe
            if pasting || readsPipe {
                // Before waiting for more input: what was printed so far shows now, and a batch
                // redraws its progress with the true count (a pipe that stays open, `tail -f | …`).
                stdin.beforeWaiting = { [stdout, stderr, weak self] in
                    self?.whenInputWaits?()
                    try? stdout.flush()
                    try? stderr.flush()
                }
            }
            if pasting, !quiet {
                let command = ([root.name] + self.path).joined(separator: " ")
                stderr.writeLine(
                    "\(command): paste the input (one item per line), then press Enter and Ctrl-D; "
                        + "or give a file: \(command) FILE")
                try? stderr.flush()
            }
            return stdin
        }
        do {
            return try InputReader(path: path)
        } catch {
            if let pasted = PastedArgument.looksLikeJWS(path) {
                let command = ([root.name] + self.path).joined(separator: " ")
                throw CLIError.usage(
                    "the argument is not a file name: it looks like a JWS (\(pasted))",
                    hint: "pipe it (pbpaste | \(command)) or run \(command) and paste it")
            }
            throw error
        }
    }

    /// Whether the input is a terminal being pasted into (`openInput` of stdin): a batch then
    /// prints each row as it is decided, not at Ctrl-D.
    public private(set) var pastesAtTerminal = false

    /// Whether the input is stdin read from a pipe or socket (`openInput` of stdin), which may stay
    /// open between items: a batch then shows its progress as items are applied.
    public private(set) var readsPipe = false

    /// Called before reading the input (a pipe, a terminal paste) waits for more: a batch redraws
    /// its progress line here.
    public var whenInputWaits: (() -> Void)?
}

/// Masks what a command prints before it is laid out (for example ids replaced by aliases).
public protocol RecordMasking: AnyObject {
    /// A record with its fields masked.
    func record(_ record: Record) -> Record
    /// A `show` view with its fields masked.
    func detail(_ view: DetailView) -> DetailView
    /// A JSON document with its values masked.
    func json(_ document: JSONValue) -> JSONValue
}
