/// A process exit status. The framework names the statuses it reports itself (the BSD sysexits
/// ones, plus 130 for Ctrl-C); a program adds its own (`static let notFound = ExitCode(3)` in an
/// extension) and lists its whole table, with meanings, in `ProgramInfo.exitStatuses`.
public struct ExitCode: RawRepresentable, Hashable, Sendable {
    /// The status the process exits with.
    public var rawValue: Int32

    /// The status `rawValue`.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The status `rawValue`.
    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Success.
    public static let success = ExitCode(0)
    /// A general failure.
    public static let failure = ExitCode(1)
    /// The command line is wrong (EX_USAGE).
    public static let usage = ExitCode(64)
    /// Malformed input (EX_DATAERR).
    public static let dataError = ExitCode(65)
    /// No input, or an input file does not exist (EX_NOINPUT).
    public static let noInput = ExitCode(66)
    /// A service is unavailable (EX_UNAVAILABLE).
    public static let unavailable = ExitCode(69)
    /// Internal error (EX_SOFTWARE).
    public static let software = ExitCode(70)
    /// I/O error (EX_IOERR).
    public static let ioError = ExitCode(74)
    /// A temporary failure: retry (EX_TEMPFAIL).
    public static let tempFail = ExitCode(75)
    /// Configuration error (EX_CONFIG).
    public static let config = ExitCode(78)
    /// Interrupted (Ctrl-C, 128 + SIGINT).
    public static let interrupted = ExitCode(130)
}
