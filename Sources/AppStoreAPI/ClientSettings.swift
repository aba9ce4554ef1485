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
    /// The longest iapctl waits for an answer from Apple (seconds), retries and waits included.
    public var deadline = 60
    /// The most pages one paginated walk reads.
    public var maxPages = WalkLimits().maxPages
    /// The longest one paginated walk may take in all (seconds), every page included.
    public var walkDeadline = Int(WalkLimits().deadline! / 1000)
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
        policy.deadline = Int64(settings.deadline) * 1000
        policy.walk = WalkLimits(maxPages: settings.maxPages, deadline: Int64(settings.walkDeadline) * 1000)
        return AppStoreServerAPI(
            tokens: tokens, transport: transport, endpoints: endpoints, policy: policy, nowMs: Timestamp.now,
            sleepMs: { ms in
                var time = timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000)
                var left = timespec()
                while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
            })
    }
}

/// The client settings of the `apple` commands, made from the values of their options and the process
/// environment: the key file read and checked, the ids checked, the timeouts, and (tests only) the
/// loopback server the environment names. What the caller warns about comes back as values.
public struct APIClientSetup: Sendable {
    /// Why no client settings could be made; the key file and the ids are checked in this order.
    public enum Refusal: Error, Sendable {
        /// Settings not given (or given empty), every one of them, in ``Setting``'s order.
        case missing([Setting])
        /// The key id or the issuer id is malformed.
        case credentials(APICredentials.Refusal)
        /// The key file was refused (missing, not a file, readable by its group or others, …).
        case keyFile(APIKeyFile.Refusal)
        /// The file holds no usable EC P-256 key.
        case key(AppStoreAPIError)
    }

    /// A setting every request needs.
    public enum Setting: String, Sendable, Equatable, CaseIterable {
        case keyFile = "key-file"
        case keyId = "key-id"
        case issuerId = "issuer-id"
        case bundleId = "bundle-id"
    }

    /// The key id differs from the `KEYID` of the key file's name `AuthKey_KEYID.p8` (Apple refuses a mismatch).
    public struct KeyIdMismatch: Sendable, Equatable {
        public var keyId: String
        /// The key file's name (its last path component).
        public var fileName: String
    }

    /// Test-only: where the loopback test server is (docs/apple-setup.md).
    public static let baseURLVariable = "IAPCTL_APPLE_API_BASE_URL"
    public static let sandboxBaseURLVariable = "IAPCTL_APPLE_API_SANDBOX_BASE_URL"
    public static let caFileVariable = "IAPCTL_APPLE_API_CA_FILE"
    /// Test-only: the first backoff of a retry (ms); read whenever ``baseURLVariable`` is set.
    public static let backoffVariable = "IAPCTL_APPLE_API_BACKOFF_MS"

    public var settings: APIClientSettings
    /// The key file read (a 401's likely causes name it).
    public var keyFile: String
    /// The production base URL of the test server in use instead of Apple's; nil: Apple's servers.
    public var testServer: String?
    /// Set when the key id and the key file's name disagree.
    public var keyIdMismatch: KeyIdMismatch?

    /// Checks that a key file, a key id (else the file name's `KEYID`), an issuer id and a bundle id are
    /// given (non-empty; every missing one is named at once), the ids' formats, then reads the key; a nil
    /// timeout, deadline, wait or walk bound keeps ``APIClientSettings``'s default.
    public init(
        keyFile: String?, keyId: String?, issuerId: String?, bundleId: String?, connectTimeout: Int? = nil,
        totalTimeout: Int? = nil, deadline: Int? = nil, maxRateLimitWait: Int64? = nil, maxPages: Int? = nil,
        walkDeadline: Int? = nil, environment: [String: String]
    ) throws(Refusal) {
        let keyFile = keyFile.flatMap { $0.isEmpty ? nil : $0 }
        // Without --key-id, the KEYID of the file name Apple gives the key (`AuthKey_KEYID.p8`).
        let keyId = keyId.flatMap { $0.isEmpty ? nil : $0 } ?? keyFile.flatMap(APIKeyFile.keyId(inFileName:))
        let issuerId = issuerId.flatMap { $0.isEmpty ? nil : $0 }
        let bundleId = bundleId.flatMap { $0.isEmpty ? nil : $0 }
        let missing = [(Setting.keyFile, keyFile), (.keyId, keyId), (.issuerId, issuerId), (.bundleId, bundleId)]
            .filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty, let keyFile, let keyId, let issuerId, let bundleId else { throw .missing(missing) }
        do { try APICredentials.check(keyId: keyId, issuerId: issuerId) } catch { throw .credentials(error) }
        let pem: [UInt8]
        do { pem = try APIKeyFile.read(keyFile) } catch { throw .keyFile(error) }
        self.keyFile = keyFile
        let key: APIKey
        do { key = try APIKey(pem: pem, keyId: keyId) } catch { throw .key(error) }
        settings = APIClientSettings(key: key, issuerId: issuerId, bundleId: bundleId)
        if let connectTimeout { settings.connectTimeout = connectTimeout }
        if let totalTimeout { settings.totalTimeout = totalTimeout }
        if let deadline { settings.deadline = deadline }
        if let maxPages { settings.maxPages = maxPages }
        if let walkDeadline { settings.walkDeadline = walkDeadline }
        settings.maxRateLimitWait = maxRateLimitWait
        let base = environment[Self.baseURLVariable]
        if let base, !base.isEmpty {
            settings.testServer = APIClientSettings.TestServer(
                production: base, sandbox: environment[Self.sandboxBaseURLVariable],
                caFile: environment[Self.caFileVariable])
            testServer = base
        }
        if base != nil { settings.backoff = environment[Self.backoffVariable].flatMap(Int64.init) }
        if let named = APIKeyFile.keyId(inFileName: keyFile), named != keyId {
            keyIdMismatch = KeyIdMismatch(keyId: keyId, fileName: APIKeyFile.baseName(keyFile))
        }
    }
}
