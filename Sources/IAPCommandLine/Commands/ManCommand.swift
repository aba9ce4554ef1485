/// `iapctl __man DIR` (hidden): writes the man pages into DIR (used by scripts/generate).
enum ManCommand {
    static func run(_ invocation: Invocation) throws -> ExitCode {
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
