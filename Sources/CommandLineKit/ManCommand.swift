/// `PROGRAM __man DIR` (hidden): writes the man pages into DIR (used by a generate script).
public enum ManCommand {
    /// The command's name (the generated pages say how they were made).
    public static let name = "__man"

    /// The handler of a `__man` command (its argument: the folder).
    public static func run(_ invocation: Invocation) throws -> ExitCode {
        let directory = invocation.arguments[0]
        guard FileSystem.isDirectory(directory) else {
            throw CLIError(.noInput, "\(directory) is not a folder")
        }
        for page in ManPages.pages(root: invocation.root) {
            try FileSystem.write(page.contents, toPath: directory + "/" + page.fileName)
            invocation.debug("wrote \(directory)/\(page.fileName)")
        }
        return .success
    }
}
