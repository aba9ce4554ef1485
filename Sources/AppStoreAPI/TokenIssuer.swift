internal import AppStoreJWS
import Synchronization

/// Makes the `Authorization: Bearer` JWT Apple's API wants, and reuses it until it nears expiry.
///
/// Header `{"alg":"ES256","kid":…,"typ":"JWT"}`; claims `iss`, `iat`, `exp` (= iat + 5 minutes, as Apple's
/// own libraries do), `aud` `appstoreconnect-v1`, `bid`. Safe to share between threads: the cached
/// token and the count live behind one lock.
public final class TokenIssuer: Sendable {
    /// How long a token is valid (Apple allows at most 60 minutes).
    public static let lifetime: Int64 = 300
    /// A token this close to its expiry is replaced (seconds).
    public static let renewalMargin: Int64 = 60

    let key: APIKey
    let issuerId: String
    let bundleId: String
    private let now: @Sendable () -> Int64
    /// The cached token with its expiry, and how many tokens were signed.
    private let state = Mutex<(cached: (token: String, expires: Int64)?, signed: Int)>((nil, 0))
    /// How many tokens were signed (tests check reuse).
    public var signedCount: Int { state.withLock { $0.signed } }

    /// `now` returns seconds since the epoch.
    public init(key: APIKey, issuerId: String, bundleId: String, now: @escaping @Sendable () -> Int64) {
        self.key = key
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.now = now
    }

    /// A valid token: the cached one while it has more than `renewalMargin` left, else a new one.
    public func token() throws(AppStoreAPIError) -> String {
        let issuedAt = now()
        if let cached = state.withLock({ $0.cached }), cached.expires - issuedAt > Self.renewalMargin { return cached.token }
        let header = JSONValue.object([("alg", .string("ES256")), ("kid", .string(key.keyId)), ("typ", .string("JWT"))])
        let claims = JSONValue.object([
            ("iss", .string(issuerId)), ("iat", .int(issuedAt)), ("exp", .int(issuedAt + Self.lifetime)),
            ("aud", .string("appstoreconnect-v1")), ("bid", .string(bundleId)),
        ])
        let input = Base64.encodeURL(Array(header.serialized().utf8)) + "." + Base64.encodeURL(Array(claims.serialized().utf8))
        let signature = try key.sign(Array(input.utf8))
        let token = input + "." + Base64.encodeURL(signature)
        state.withLock {
            $0.cached = (token, issuedAt + Self.lifetime)
            $0.signed += 1
        }
        return token
    }

    /// Forget the cached token (after Apple refused it).
    public func discard() { state.withLock { $0.cached = nil } }
}
