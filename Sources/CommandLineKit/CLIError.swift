/// The command line's one error type: a stable exit code, a readable message and an optional hint.
///
/// Handlers throw it; the runner prints `error: <message>` (and `hint: <hint>`) on stderr and exits
/// with `code`. Usage errors (`.usage`) also print the command's usage line and where to get help.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// The exit status this error ends the run with.
    public var code: ExitCode
    /// What went wrong, with its context (which input line, which file); never secrets.
    public var message: String
    /// What the user can do about it.
    public var hint: String?
    /// For usage errors: the command path whose usage line is shown (nil: the invoked command).
    var usagePath: [String]?

    /// An error with an exit code, a message and an optional hint.
    public init(_ code: ExitCode, _ message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    /// A usage error (exit 64), reported with the command's usage line.
    public static func usage(_ message: String, hint: String? = nil) -> CLIError {
        CLIError(.usage, message, hint: hint)
    }

    static func usage(_ message: String, hint: String? = nil, path: [String]) -> CLIError {
        var error = CLIError(.usage, message, hint: hint)
        error.usagePath = path
        return error
    }

    public var description: String { "\(message) (exit \(code.rawValue))" }
}

/// An error of another module that knows which `CLIError` it is (conform other modules' errors in
/// this module, next to the command that meets them).
public protocol CLIErrorConvertible: Error {
    /// The command-line error to report for this error.
    var cliError: CLIError { get }
}
