/// `PROGRAM completion bash|zsh|fish`: prints the shell's completion script.
public enum CompletionCommand {
    /// The command's name (the generated scripts say how they were made).
    public static let name = "completion"

    /// The handler of a `completion` command (its argument: the shell).
    public static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let name = invocation.arguments.first, let shell = CompletionScripts.Shell(rawValue: name) else {
            throw CLIError.usage(
                "unknown shell", hint: "shells: " + CompletionScripts.Shell.allCases.map(\.rawValue).joined(separator: ", "))
        }
        invocation.stdout.write(CompletionScripts.script(for: shell, root: invocation.root))
        return .success
    }
}
