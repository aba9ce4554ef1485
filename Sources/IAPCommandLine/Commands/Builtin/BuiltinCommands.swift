// `iapctl completion|help|version|__man`: the framework's own commands, whose handlers are in
// CommandLineKit; the tree is assembled in CommandTree.swift.
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
