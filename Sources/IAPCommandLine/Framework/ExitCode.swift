/// The process exit status of an `iapctl` run: the fixed table of the command-line contract.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success; duplicates, stale and ignored items are success.
    case success = 0
    /// A batch in which some items failed, or another failure.
    case failure = 1
    /// Verification failed: signature, chain, certificate, bundle id, app id or environment.
    case verificationFailed = 2
    /// Not found or unmatched.
    case notFound = 3
    /// Conflict: owned by another user, refused by policy.
    case conflict = 4
    /// The command line is wrong.
    case usage = 64
    /// Malformed input: not JWS, not JSON, wrong shape.
    case dataError = 65
    /// No input, or the database does not exist.
    case noInput = 66
    /// The database (or Apple's API, or the network) is unavailable.
    case unavailable = 69
    /// Internal error.
    case software = 70
    /// I/O error.
    case ioError = 74
    /// The database is busy or locked, or Apple's rate limit is in force: retry.
    case tempFail = 75
    /// Configuration error.
    case config = 78

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
        case .unavailable: return "database unavailable; Apple's API or the network unavailable"
        case .software: return "internal error"
        case .ioError: return "I/O error"
        case .tempFail: return "database busy or locked, or Apple's rate limit: retry"
        case .config: return "configuration error"
        }
    }
}
