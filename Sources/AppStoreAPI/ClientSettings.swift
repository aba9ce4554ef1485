import AppStoreJWS

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the `apple` commands' client is made: the key and ids, timeouts, the rate-limit wait, and
/// (tests only) a loopback server standing in for Apple.
public struct APIClientSettings: Sendable {
    /// A test server in place of Apple's (its base URLs and the CA its certificate is signed by).
    public struct TestServer: Sendable {
        public var production: String
        public var sandbox: String?
        public var caFile: String?

        public init(production: String, sandbox: String? = nil, caFile: String? = nil) {
            self.production = production
            self.sandbox = sandbox
            self.caFile = caFile
        }
    }

    public var key: APIKey
    public var issuerId: String
    public var bundleId: String
    public var connectTimeout = 10
    public var totalTimeout = 60
    /// The longest a rate limit is waited out (seconds); nil: the policy's.
    public var maxRateLimitWait: Int64?
    public var testServer: TestServer?
    /// Tests: the first backoff of a retry (ms) instead of the policy's.
    public var backoff: Int64?

    public init(key: APIKey, issuerId: String, bundleId: String) {
        self.key = key
        self.issuerId = issuerId
        self.bundleId = bundleId
    }
}

extension AppStoreServerAPI {
    /// The client over libcurl with the real clock, signing with `settings.key`.
    public static func make(_ settings: APIClientSettings) throws(AppStoreAPIError) -> AppStoreServerAPI {
        let tokens = TokenIssuer(key: settings.key, issuerId: settings.issuerId, bundleId: settings.bundleId) {
            Timestamp.now() / 1000
        }
        let transport = CurlTransport(connectTimeout: settings.connectTimeout, totalTimeout: settings.totalTimeout)
        var endpoints = APIEndpoints.apple
        if let test = settings.testServer {
            endpoints = try APIEndpoints.testOverride(production: test.production, sandbox: test.sandbox)
            transport.caFile = test.caFile
        }
        var policy = Policy()
        if let wait = settings.maxRateLimitWait { policy.maxRateLimitWait = wait * 1000 }
        if let ms = settings.backoff { policy.backoff = ms }
        return AppStoreServerAPI(
            tokens: tokens, transport: transport, endpoints: endpoints, policy: policy, nowMs: Timestamp.now,
            sleepMs: { ms in
                var time = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
                var left = timespec()
                while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
            })
    }
}
