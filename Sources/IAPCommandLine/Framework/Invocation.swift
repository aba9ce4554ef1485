#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// Whether stderr is a terminal (progress lines are drawn only then).
    public var isStderrTTY: Bool { (stderr as? FileDescriptorSink)?.isTerminal ?? false }

    /// Creates an invocation (the runner does this; tests may too).
    public init(
        parsed: ParsedInvocation, settings: Settings, environment: [String: String], stdin: InputReader,
        stdout: OutputSink, stderr: OutputSink, isStdoutTTY: Bool, root: CommandSpec
    ) {
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

    /// The resolved value of an option (command line > environment > config > default).
    public func value(_ long: String) -> String? { settings.value(long) }
    /// The resolved values of a repeatable option.
    public func values(_ long: String) -> [String] { settings.values(long) }
    /// Whether a flag is on (from any source).
    public func flag(_ long: String) -> Bool { settings.flag(long) }

    /// The output format (`-o`); table when the command has no such option.
    public var output: OutputFormat { settings.value("output").flatMap(OutputFormat.init(rawValue:)) ?? .table }
    /// `-q`: only data and errors.
    public var quiet: Bool { settings.flag("quiet") }
    /// `-v`: extra diagnostics on stderr.
    public var verbose: Bool { settings.flag("verbose") && !quiet }
    /// Colour on stdout: a terminal, `NO_COLOR` unset and no `--no-color`.
    public var colorEnabled: Bool {
        isStdoutTTY && (environment["NO_COLOR"] ?? "").isEmpty && !settings.flag("no-color")
    }

    /// Who the audit records: `--actor` (or its env/config), else the OS user, else `uid:N`.
    public var actor: String {
        if let actor = settings.value("actor"), !actor.isEmpty { return actor }
        for name in ["USER", "LOGNAME"] {
            if let user = environment[name], !user.isEmpty { return user }
        }
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid:\(uid)"
    }

    /// Writes a line of data to stdout.
    public func print(_ line: String) { stdout.writeLine(line) }

    /// Renders a list in the chosen output format to stdout.
    public func emit(_ records: [Record], columns: [Column]? = nil) {
        stdout.write(OutputRenderer.render(records: records, columns: columns, format: output, color: colorEnabled))
    }

    /// Renders one item in the chosen output format to stdout.
    public func emit(document: Record) {
        stdout.write(OutputRenderer.render(document: document, format: output, color: colorEnabled))
    }

    /// Renders a `show` view in the chosen output format to stdout.
    public func emit(detail: DetailView) {
        stdout.write(OutputRenderer.render(detail: detail, format: output, color: colorEnabled))
    }

    /// A progress or summary note on stderr (not with `-q`).
    public func note(_ message: String) {
        if !quiet { stderr.writeLine(message) }
    }

    /// `warning: …` on stderr (not with `-q`).
    public func warn(_ message: String) {
        if !quiet { stderr.writeLine("warning: \(message)") }
    }

    /// A diagnostic on stderr, only with `-v`.
    public func debug(_ message: String) {
        if verbose { stderr.writeLine(message) }
    }

    /// The input named by a FILE argument: stdin for nil or `-`, else the opened file (66 if missing).
    public func openInput(_ path: String?) throws(CLIError) -> InputReader {
        guard let path, path != "-" else { return stdin }
        return try InputReader(path: path)
    }
}
