/// iapctl's exit statuses: the framework's sysexits ones plus three of its own, and the table of
/// the command-line contract (cli.md) that `--help` and iapctl(1) show.
extension ExitCode {
    /// Verification failed: signature, chain, certificate, bundle id, app id or environment.
    public static let verificationFailed = ExitCode(2)
    /// Not found or unmatched.
    public static let notFound = ExitCode(3)
    /// Conflict: owned by another user, refused by policy.
    public static let conflict = ExitCode(4)

    /// Every status of the contract, in the order shown.
    public static let allCases: [ExitCode] = [
        .success, .failure, .verificationFailed, .notFound, .conflict, .usage, .dataError, .noInput, .unavailable,
        .software, .ioError, .tempFail, .config, .interrupted,
    ]

    /// One line saying what the code means (used by help and man pages).
    public var meaning: String {
        switch self {
        case .success: return "success (duplicates, stale and ignored items are success)"
        case .failure: return "a batch in which some items failed; other failures"
        case .verificationFailed:
            return "verification failed: signature, chain, certificate, bundle id, app id or environment"
        case .notFound: return "not found / unmatched"
        case .conflict: return "conflict: owned by another user, refused by policy"
        case .usage: return "usage error"
        case .dataError: return "malformed input (not JWS, not JSON, wrong shape)"
        case .noInput: return "no input, or the database does not exist"
        case .unavailable: return "database unavailable; Apple's API or the network unavailable; a C library iapctl needs not installed"
        case .software: return "internal error"
        case .ioError: return "I/O error"
        case .tempFail: return "database busy or locked, or Apple's rate limit: retry"
        case .config: return "configuration error"
        case .interrupted: return "interrupted (Ctrl-C): what was committed is reported; re-running the same input is safe"
        default: return "exit status \(rawValue)"
        }
    }
}
