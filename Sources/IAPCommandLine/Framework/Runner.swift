import IAPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `iapctl` in this process with the real stdin, stdout, stderr and environment.
///
/// `arguments` are argv without the program name. Returns the exit status (see `ExitCode`).
public func runIAPCtl(arguments: [String]) -> Int32 {
    runIAPCtl(
        arguments: arguments,
        environment: processEnvironment(),
        stdin: InputReader(fileDescriptor: 0, name: "stdin"),
        stdout: FileDescriptorSink(fileDescriptor: 1, name: "stdout"),
        stderr: FileDescriptorSink(fileDescriptor: 2, name: "stderr"),
        isStdoutTTY: isatty(1) == 1)
}

/// Runs `iapctl` in this process with injected streams (in-process tests, embedding).
///
/// `handlers` replaces the standard registry (tests); both sinks are flushed before returning.
/// Never throws and never exits: every failure becomes a message on `stderr` and an exit status.
public func runIAPCtl(
    arguments: [String],
    environment: [String: String],
    stdin: InputReader,
    stdout: OutputSink,
    stderr: OutputSink,
    isStdoutTTY: Bool = false,
    handlers: [String: CommandHandler]? = nil
) -> Int32 {
    let runner = Runner(
        root: CommandTree.root, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr,
        isStdoutTTY: isStdoutTTY, handlers: handlers ?? CommandHandlers.standard())
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
func processEnvironment() -> [String: String] {
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
struct Runner {
    let root: CommandSpec
    let environment: [String: String]
    let stdin: InputReader
    let stdout: OutputSink
    let stderr: OutputSink
    let isStdoutTTY: Bool
    let handlers: [String: CommandHandler]

    func run(_ arguments: [String]) -> ExitCode {
        let parser = CommandLineParser(root: root)
        let help = HelpRenderer(root: root)
        if parser.wantsHelp(arguments) || arguments.isEmpty {
            // `iapctl` alone: the overview, as a person trying it first expects.
            stdout.write(help.help(for: parser.bestEffortPath(arguments)))
            return .success
        }
        var path = parser.bestEffortPath(arguments)
        do {
            let parsed = try parser.parse(arguments)
            path = parsed.path
            if parsed.path.isEmpty, parsed.flag("version") {
                stdout.writeLine("\(root.name) \(CommandTree.version)")
                return .success
            }
            guard let key = parsed.spec.handlerKey else {
                let names = parsed.spec.visibleSubcommands.map(\.name).joined(separator: ", ")
                throw CLIError.usage(
                    parsed.path.isEmpty ? "missing command" : "missing subcommand",
                    hint: "commands: \(names)", path: parsed.path)
            }
            let settings = try Settings.resolve(parsed, environment: environment, root: root)
            let invocation = Invocation(
                parsed: parsed, settings: settings, environment: environment, stdin: stdin, stdout: stdout,
                stderr: stderr, isStdoutTTY: isStdoutTTY, root: root)
            if invocation.verbose { describeSettings(invocation) }
            guard let handler = handlers[key] else {
                throw CLIError(.software, "no handler registered for '\(key)'")
            }
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
        stderr.writeLine("error: " + TerminalText.escape(error.message, keepNewlines: true))
        if let hint = error.hint { stderr.writeLine("hint: " + TerminalText.escape(hint, keepNewlines: true)) }
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
            value = URLSecrets.redacted(value)
            invocation.debug("setting \(option.long) = \(value) (\(source))")
        }
    }
}
