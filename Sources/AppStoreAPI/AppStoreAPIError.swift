/// Why a call to the App Store Server API failed, with Apple's own code and message when it sent one.
///
/// Messages name the endpoint and the input, never the key or a token.
public struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// The class of failure (the command line maps each to an exit code).
    public enum Kind: String, Sendable {
        /// Missing or unusable key, key id, issuer id or bundle id; a bad base URL.
        case configuration
        /// 401: Apple refused the token.
        case unauthorized
        /// 404: the transaction, order or other id is unknown to Apple (in that environment).
        case notFound
        /// 400 and other 4xx: Apple refused the request as invalid.
        case invalidRequest
        /// 429 whose Retry-After lies beyond the allowed wait, or retries ran out.
        case rateLimited
        /// 5xx after retries, or the network/TLS failed.
        case unavailable
        /// Apple's answer was not the documented JSON.
        case malformedResponse
        /// A bug or an OpenSSL/libcurl failure that should not happen.
        case `internal`
    }

    public var kind: Kind
    public var message: String
    public var hint: String?
    /// The HTTP status, when Apple answered.
    public var httpStatus: Int?
    /// Apple's `errorCode`, when the body had one.
    public var appleCode: Int64?
    /// Apple's `errorMessage`, when the body had one.
    public var appleMessage: String?
    /// For `rateLimited`: when Apple said to try again (ms since the epoch).
    public var retryAt: Int64?
    /// Whether trying again may help (false for an untrusted certificate).
    public var isRetryable = true
    /// Set when the command's total deadline (ms) stopped the call (see `AppStoreServerAPI.Policy.deadline`).
    public var deadline: Int64?

    public init(_ kind: Kind, _ message: String, hint: String? = nil) {
        self.kind = kind
        self.message = message
        self.hint = hint
    }

    public var description: String { message }
}
