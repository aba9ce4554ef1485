#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `iapctl` in this process with the real stdin, stdout, stderr and environment.
///
/// `arguments` are argv without the program name. Returns the exit status (see `ExitCode`).
public func runIAPCtl(arguments: [String]) -> Int32 {
    // `--version`, `verify` and `notify` are parsed by the same runner against a root with only the
    // commands they need: building every command's spec was most of a start's own work.
    let configInEnvironment = getenv(CommandTree.configEnvironmentVariable) != nil
    return runCommandLine(
        root: CommandTree.root(for: arguments, configInEnvironment: configInEnvironment), arguments: arguments)
}

/// Runs `iapctl` in this process with injected streams (in-process tests, embedding).
///
/// `root` replaces the standard command tree (tests replace a handler with
/// `CommandTree.root.replacingHandler(at:with:)`); both sinks are flushed before returning.
/// Never throws and never exits: every failure becomes a message on `stderr` and an exit status.
public func runIAPCtl(
    arguments: [String],
    environment: [String: String],
    stdin: InputReader,
    stdout: OutputSink,
    stderr: OutputSink,
    isStdoutTTY: Bool = false,
    root: CommandSpec = CommandTree.root
) -> Int32 {
    runCommandLine(
        root: root, arguments: arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr,
        isStdoutTTY: isStdoutTTY)
}

extension Invocation {
    /// Who the audit records: `--actor` (or its env/config), else the OS user, else `uid:N`.
    public var actor: String {
        if let actor = self[CommandTree.actorOption], !actor.isEmpty { return actor }
        for name in ["USER", "LOGNAME"] {
            if let user = environment[name], !user.isEmpty { return user }
        }
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid:\(uid)"
    }

    /// `--redact`: the run's aliases (nil: no masking).
    var redactor: Redactor? { masking as? Redactor }
}
