// `iapctl completion|help|version|__man`: the framework's own commands, whose handlers are in
// CommandLineKit, and `__complete`, the completion scripts' look-up; the tree is assembled in
// CommandTree.swift.
import StoreSQL

extension CommandTree {
    static let completion = CommandSpec(
        name: CompletionCommand.name,
        abstract: "Print a shell completion script.",
        discussion: """
            Load it in your shell's startup file:
              bash:  source <(iapctl completion bash)
              zsh:   iapctl completion zsh > "${fpath[1]}/_iapctl"
              fish:  iapctl completion fish > ~/.config/fish/completions/iapctl.fish
            """,
        examples: [
            CommandExample("iapctl completion bash > /etc/bash_completion.d/iapctl", "Install for bash."),
            CommandExample("iapctl completion fish | source", "Try it in the current fish session."),
        ],
        arguments: [ArgumentSpec("shell", help: "The shell.", allowedValues: shells)],
        handler: CompletionCommand.run,
        inheritsOptions: false
    )

    static let help = CommandSpec(
        name: "help",
        abstract: "Show help for a command.",
        examples: [
            CommandExample("iapctl help orders update", "The same as 'iapctl orders update --help'.")
        ],
        arguments: [
            ArgumentSpec(
                "command", help: "The command path, e.g. 'orders list'.", isOptional: true, isRepeating: true,
                completion: .values([
                    "db", "orders", "contracts", "notify", "verify", "restore", "entitled", "audit", "doctor",
                    "apple", "completion",
                ]))
        ],
        handler: HelpCommand.run,
        inheritsOptions: false
    )

    static let versionCommand = CommandSpec(
        name: "version",
        abstract: "Print the version (the same as iapctl --version).",
        examples: [CommandExample("iapctl version", "Prints e.g. 'iapctl 0.1.0'.")],
        handler: VersionCommand.run,
        inheritsOptions: false
    )

    static let man = CommandSpec(
        name: ManCommand.name,
        abstract: "Write the man pages into a folder (used by scripts/generate).",
        arguments: [ArgumentSpec("directory", help: "The folder to write into.", completion: .directory)],
        handler: ManCommand.run,
        inheritsOptions: false,
        isHidden: true
    )
}

/// `iapctl __complete KIND PREFIX` (hidden): what the completion scripts run to complete a user id,
/// contract id or order number: the database's ids that start with PREFIX, one a line, at most
/// ``limit``. It reads the database `--db` (IAPCTL_DB, `--config`) names on a read-only connection,
/// creates and writes nothing, never reads stdin, and prints nothing on error (the runner gives it no
/// stderr; its exit status says what happened).
enum LookupCommand {
    static let limit = 200

    static let kind = Argument<String>(
        "kind", help: "What to look up.", allowedValues: CompletedIds.allCases.map(\.rawValue))
    static let prefix = Argument<String?>("prefix", help: "What the id starts with.")

    static let command = CommandSpec(
        name: CompletionScripts.lookupCommand,
        abstract: "Print the ids of the database that start with PREFIX, one a line (for the completion scripts).",
        arguments: [kind, prefix],
        handler: run,
        isHidden: true
    )

    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let kind = CompletedIds(rawValue: invocation[kind]) else { return .usage }
        let prefix = invocation[prefix] ?? ""
        let ids = try DbOpen.read(invocation) { session in
            try (session as? SQLSession)?.completedIds(kind, prefix: prefix, limit: limit) ?? []
        }
        for id in ids where !id.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) {
            invocation.stdout.writeLine(id)
        }
        return .success
    }
}
