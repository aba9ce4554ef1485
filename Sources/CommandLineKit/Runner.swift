#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the program described by `root` in this process with the real stdin, stdout, stderr and
/// environment. `arguments` are argv without the program name. Returns the exit status.
public func runCommandLine(root: CommandSpec, arguments: [String]) -> Int32 {
    let environment = processEnvironment()
    let stdout = FileDescriptorSink(fileDescriptor: 1, name: "stdout")
    let stderr = FileDescriptorSink(fileDescriptor: 2, name: "stderr")
    let ascii = AsciiFallback.isNeeded(environment)
    stdout.asciiOnTerminal = ascii
    stderr.asciiOnTerminal = ascii
    return runCommandLine(
        root: root,
        arguments: arguments,
        environment: environment,
        stdin: InputReader(fileDescriptor: 0, name: "stdin"),
        stdout: stdout,
        // The completion scripts' look-up prints names or nothing: its errors never reach the shell's line.
        stderr: arguments.first == CompletionScripts.lookupCommand ? DiscardingSink() : stderr,
        isStdoutTTY: isatty(1) == 1)
}

/// Runs the program described by `root` in this process with injected streams (in-process tests,
/// embedding). Both sinks are flushed before returning.
/// Never throws and never exits: every failure becomes a message on `stderr` and an exit status.
public func runCommandLine(
    root: CommandSpec,
    arguments: [String],
    environment: [String: String],
    stdin: InputReader,
    stdout: OutputSink,
    stderr: OutputSink,
    isStdoutTTY: Bool = false
) -> Int32 {
    let runner = CommandLineRunner(
        root: root, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr,
        isStdoutTTY: isStdoutTTY)
    var code = runner.run(arguments)
    do {
        try stdout.flush()
    } catch {
        if code == .success {
            stderr.writeLine("error: \(error.message)")
            code = .ioError
        }
    }
    try? stderr.flush()
    return code.rawValue
}

/// Ends the process with `code` (after the runner has flushed its output).
public func exitProcess(with code: Int32) -> Never {
    exit(code)
}

/// The process environment as a dictionary.
public func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        pointer += 1
    }
    return result
}

/// The one path from argv to an exit status: parse, resolve settings, run the handler, report.
public struct CommandLineRunner {
    public let root: CommandSpec
    public let environment: [String: String]
    public let stdin: InputReader
    public let stdout: OutputSink
    public let stderr: OutputSink
    public let isStdoutTTY: Bool

    /// A runner over the tree under `root` with these streams.
    public init(
        root: CommandSpec, environment: [String: String], stdin: InputReader, stdout: OutputSink,
        stderr: OutputSink, isStdoutTTY: Bool
    ) {
        self.root = root
        self.environment = environment
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.isStdoutTTY = isStdoutTTY
    }

    /// Parses `arguments`, resolves the settings, runs the command's handler and reports any error.
    public func run(_ arguments: [String]) -> ExitCode {
        let parser = CommandLineParser(root: root)
        var help = HelpRenderer(root: root)
        // Wrapped at the terminal's width; 80 when not a terminal.
        if isStdoutTTY, let columns = stdout.terminalColumns { help.width = columns }
        if parser.wantsHelp(arguments) || arguments.isEmpty {
            // The program alone: the overview, as a person trying it first expects.
            stdout.write(help.help(for: parser.bestEffortPath(arguments)))
            return .success
        }
        var path = parser.bestEffortPath(arguments)
        do {
            let parsed = try parser.parse(arguments)
            path = parsed.path
            if parsed.path.isEmpty, parsed.flag(StandardOptions.version.long) {
                stdout.writeLine("\(root.name) \(root.program.version)")
                return .success
            }
            guard let handler = parsed.spec.handler else {
                let names = parsed.spec.visibleSubcommands.map(\.name).joined(separator: ", ")
                throw CLIError.usage(
                    parsed.path.isEmpty ? "missing command" : "missing subcommand",
                    hint: "commands: \(names)", path: parsed.path)
            }
            let settings = try Settings.resolve(parsed, environment: environment, root: root)
            let invocation = Invocation(
                parsed: parsed, settings: settings, environment: environment, stdin: stdin, stdout: stdout,
                stderr: stderr, isStdoutTTY: isStdoutTTY, root: root)
            for warning in settings.overridden { invocation.warn(warning) }
            if invocation.verbose { describeSettings(invocation) }
            return try handler(invocation)
        } catch let error as CLIError {
            report(error, path: error.usagePath ?? path)
            return error.code
        } catch let error as CLIErrorConvertible {
            let converted = error.cliError
            report(converted, path: converted.usagePath ?? path)
            return converted.code
        } catch {
            report(CLIError(.software, "internal error: \(error)"), path: path)
            return .software
        }
    }

    /// Prints an error: `error:`, `hint:`, and for usage errors the usage line and where to get help.
    /// Control characters in either are made visible (they may quote input).
    func report(_ error: CLIError, path: [String]) {
        // On a terminal, long lines break between words under their text, not mid-word at the edge.
        let width = stderr.terminalColumns
        for line in TextWrap.hanging(TerminalText.escape(error.message, keepNewlines: true), prefix: "error: ", width: width) {
            stderr.writeLine(line)
        }
        if let hint = error.hint {
            for line in TextWrap.hanging(TerminalText.escape(hint, keepNewlines: true), prefix: "hint: ", width: width) {
                stderr.writeLine(line)
            }
        }
        if error.code == .usage {
            let help = HelpRenderer(root: root)
            stderr.writeLine("Usage: \(help.usage(for: path))")
            stderr.writeLine("See '\(help.commandName(path)) --help'.")
        }
    }

    /// With `-v`: where each setting that has a source came from.
    func describeSettings(_ invocation: Invocation) {
        for option in invocation.parsed.options where option.takesValue {
            let source: String
            switch invocation.settings.source(of: option.long) {
            case .commandLine: source = "command line"
            case .environment(let name): source = "environment \(name)"
            case .configFile(let path): source = "config file \(path)"
            case .defaultValue: source = "default"
            case .unset: continue
            }
            var value = invocation.settings.values(option.long).joined(separator: ",")
            // A password in a URL (any setting, from any source) is refused later, but must not be printed first.
            value = root.program.displaySetting(value)
            invocation.debug("setting \(option.long) = \(value) (\(source))")
        }
    }
}

/// A sink that keeps nothing (the stderr of the completion scripts' look-up).
final class DiscardingSink: OutputSink {
    func write(_ text: String) {}
    func flush() throws(CLIError) {}
}
