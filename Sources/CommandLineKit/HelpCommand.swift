/// `PROGRAM help [COMMAND…]`: the help of a command, like `PROGRAM COMMAND… --help`.
public enum HelpCommand {
    /// The handler of a `help` command (its argument: the command path).
    public static func run(_ invocation: Invocation) throws -> ExitCode {
        var spec = invocation.root
        var path: [String] = []
        var help = HelpRenderer(root: invocation.root)
        help.width = invocation.terminalWidth ?? 80
        if invocation.arguments == ["options"], invocation.root.subcommand(named: "options") == nil {
            invocation.stdout.write(help.globalOptionsHelp())
            return .success
        }
        for word in invocation.arguments {
            guard let next = spec.subcommand(named: word), !next.isHidden else {
                let names = spec.visibleSubcommands.map(\.name)
                let hint =
                    Suggestion.closest(to: word, among: names).map { "did you mean '\($0)'?" }
                    ?? (names.isEmpty ? nil : "commands: " + names.joined(separator: ", "))
                let place = path.isEmpty ? "" : " under '\(invocation.root.name) \(path.joined(separator: " "))'"
                throw CLIError.usage("no command '\(word)'\(place)", hint: hint)
            }
            path.append(word)
            spec = next
        }
        invocation.stdout.write(help.help(for: path))
        return .success
    }
}

/// `PROGRAM version`: prints the program's name and version, like `--version`.
public enum VersionCommand {
    /// The handler of a `version` command.
    public static func run(_ invocation: Invocation) throws -> ExitCode {
        invocation.print("\(invocation.root.name) \(invocation.root.program.version)")
        return .success
    }
}
