/// `iapctl help [COMMAND…]`: the help of a command, like `iapctl COMMAND… --help`.
enum HelpCommand {
    static func run(_ invocation: Invocation) throws -> ExitCode {
        var spec = invocation.root
        var path: [String] = []
        for word in invocation.arguments {
            guard let next = spec.subcommand(named: word), !next.isHidden else {
                let names = spec.visibleSubcommands.map(\.name)
                let hint =
                    Suggestion.closest(to: word, among: names).map { "did you mean '\($0)'?" }
                    ?? (names.isEmpty ? nil : "commands: " + names.joined(separator: ", "))
                let place = path.isEmpty ? "" : " under 'iapctl \(path.joined(separator: " "))'"
                throw CLIError.usage("no command '\(word)'\(place)", hint: hint)
            }
            path.append(word)
            spec = next
        }
        invocation.stdout.write(HelpRenderer(root: invocation.root).help(for: path))
        return .success
    }
}
