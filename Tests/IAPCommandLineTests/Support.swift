import Foundation

@testable import IAPCommandLine

/// The result of one in-process run.
struct RunResult {
    var code: Int32
    var out: String
    var err: String
}

/// Runs iapctl in-process with injected streams; `handlers` replace the handlers of the commands
/// at those paths (`"orders list"`) in the standard tree.
func iapctl(
    _ arguments: [String], environment: [String: String] = [:], stdin: String = "", tty: Bool = false,
    handlers: [String: CommandHandler] = [:]
) -> RunResult {
    let out = BufferSink()
    let err = BufferSink()
    var root = CommandTree.root
    for (path, handler) in handlers {
        root = root.replacingHandler(at: path.split(separator: " ").map(String.init), with: handler)
    }
    let code = runIAPCtl(
        arguments: arguments, environment: environment, stdin: InputReader(string: stdin), stdout: out, stderr: err,
        isStdoutTTY: tty, root: root)
    return RunResult(code: code, out: out.text, err: err.text)
}

/// `orders list`, `notify`, `orders update` and `restore` replaced by a probe that prints settings and arguments.
func probeHandlers() -> [String: CommandHandler] {
    var handlers: [String: CommandHandler] = [:]
    let probe: CommandHandler = { invocation in
        // Generic over the four commands: each option by name, when the probed command has it.
        let option = { (long: String) in invocation.parsed.options.first { $0.long == long } }
        for long in ["db", "output", "actor", "bundle-id", "app-apple-id", "at", "status", "limit", "user", "config"] {
            if let option = option(long), let value = invocation.value(option) {
                invocation.print("\(long)=\(value) [\(invocation.source(of: option))]")
            }
        }
        for long in ["environment", "root-ca"] {
            if let option = option(long), !invocation.values(option).isEmpty {
                invocation.print("\(long)=\(invocation.values(option).joined(separator: ","))")
            }
        }
        for long in ["quiet", "verbose", "no-color", "dry-run", "apply"] {
            if let option = option(long), invocation.flag(option) { invocation.print("\(long)") }
        }
        invocation.print("args=\(invocation.arguments.joined(separator: "|"))")
        invocation.print("color=\(invocation.colorEnabled)")
        return .success
    }
    for key in ["orders list", "notify", "orders update", "restore"] { handlers[key] = probe }
    return handlers
}

/// The package's root folder (from this file's path).
let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A fresh temporary folder.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("iapctl-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
