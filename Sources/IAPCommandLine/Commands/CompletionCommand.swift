/// `iapctl completion bash|zsh|fish`: prints the shell's completion script.
enum CompletionCommand {
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let name = invocation.arguments.first, let shell = CompletionScripts.Shell(rawValue: name) else {
            throw CLIError.usage("unknown shell", hint: "shells: " + CommandTree.shells.joined(separator: ", "))
        }
        invocation.stdout.write(CompletionScripts.script(for: shell, root: invocation.root))
        return .success
    }
}
