public import AppStoreJWS

/// Which of Apple's servers to ask.
public enum APIEnvironment: String, CaseIterable, Sendable {
    case production, sandbox
    /// Production first; Sandbox when Production does not know the id (Apple's own guidance), or refuses
    /// the token as for an app never released.
    case auto
}

/// One of Apple's two servers.
public enum APIServer: String, Sendable {
    case production = "Production"
    case sandbox = "Sandbox"
}

/// Where the servers are: Apple's hosts, or (tests only) a loopback server.
public struct APIEndpoints: Sendable {
    public var production: String
    public var sandbox: String

    public static let apple = APIEndpoints(
        production: "https://api.storekit.apple.com", sandbox: "https://api.storekit-sandbox.apple.com")

    public init(production: String, sandbox: String) {
        self.production = production
        self.sandbox = sandbox
    }

    /// A test override: both URLs must be https on a loopback address, so a token can never be sent
    /// anywhere else by a stray environment variable.
    public static func testOverride(production: String, sandbox: String?) throws(AppStoreAPIError) -> APIEndpoints {
        for url in [production, sandbox ?? production] {
            let host = CurlTransport.host(url)
            let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }.dropFirst()) : String(host.prefix { $0 != ":" })
            guard url.hasPrefix("https://"), ["127.0.0.1", "localhost", "::1"].contains(name) else {
                throw AppStoreAPIError(
                    .configuration, "the test base URL \(url) is not https on a loopback address",
                    hint: "IAPCTL_APPLE_API_BASE_URL is for tests against a local server only")
            }
        }
        return APIEndpoints(production: production, sandbox: sandbox ?? production)
    }

    func base(_ server: APIServer) -> String { server == .production ? production : sandbox }
}

/// One request to the API: method, Apple's path, query and JSON body.
public struct APICall: Sendable {
    public var method: String
    public var path: String
    public var query: [(String, String)]
    public var body: JSONValue?

    public init(_ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
    }

    /// Path and query as sent (values percent-encoded).
    public var target: String {
        guard !query.isEmpty else { return path }
        return path + "?" + query.map { "\($0.0)=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// The body as sent.
    public var bodyText: String? { body?.serialized() }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return out
    }

    /// A path segment from user input, percent-encoded so it cannot change the path.
    public static func segment(_ text: String) -> String { percentEncoded(text) }
}

/// Apple's answer to a successful call.
public struct APIAnswer: Sendable {
    /// The server that answered.
    public var server: APIServer
    public var status: Int
    /// The JSON body (nil for Apple's empty 200/202 answers).
    public var json: JSONValue?
}

/// The App Store Server API client: signs each request with a (reused) JWT, retries what Apple calls
/// retryable with backoff, waits out a 429 until its Retry-After within a bound, and falls back to
/// Sandbox in `auto` when Production does not know the id.
public final class AppStoreServerAPI {
    /// Retry and wait limits.
    public struct Policy: Sendable {
        /// Retries of a retryable error (5xx, Apple's retryable codes, a network failure).
        public var maxRetries = 3
        /// The first backoff; doubled each retry (ms).
        public var backoff: Int64 = 500
        /// The longest a 429's Retry-After may make us wait (ms); beyond it the call fails and says when.
        public var maxRateLimitWait: Int64 = 60_000
        /// How many 429s in a row one call waits out.
        public var maxRateLimitWaits = 5
        /// The longest iapctl waits for an answer from Apple (ms), from the first request: every attempt,
        /// retry, backoff and rate-limit wait included (so a frozen server costs this, not every retry's
        /// timeout). An answer restarts it for the next request, so a long walk or job is not cut while
        /// Apple answers; a call it stopped leaves it spent, so the next call stops at once. nil: no limit.
        public var deadline: Int64? = 60_000
        /// The bounds of a paginated walk: its page cap and its total deadline.
        public var walk = WalkLimits()

        public init() {}
    }

    /// The longest iapctl waits for an answer (ms; ``Policy/deadline``), nil: no limit.
    public var deadlineMs: Int64? { policy.deadline }

    /// The bounds of a paginated walk this client was made with.
    public var walkLimits: WalkLimits { policy.walk }

    /// Apple's error codes that mean "try again".
    public static let retryableCodes: Set<Int64> = [4040002, 4040004, 4040006, 5000001]

    let tokens: TokenIssuer
    let transport: HTTPTransport
    let endpoints: APIEndpoints
    let policy: Policy
    let nowMs: () -> Int64
    let sleepMs: (Int64) -> Void
    /// Notes for stderr (retries, waits, fallbacks); never secrets.
    public var log: (String) -> Void = { _ in }
    /// Told, while a server has sent no byte of its answer yet, which server and how long it has waited
    /// (ms), about once a second; told nil when that exchange ends (``CurlTransport/whileSilent``).
    public var whileSilent: ((_ server: APIServer, _ waitedMs: Int64?) -> Void)?
    /// Requests sent (tests and `-v`).
    public private(set) var requestCount = 0
    /// When the first request since Apple's last answer was sent (ms): the ``Policy/deadline`` counts from it.
    private var startedAt: Int64?
    /// The walk the call in flight belongs to: its total deadline also bounds the call.
    private var walk: PageWalk?

    public init(
        tokens: TokenIssuer, transport: HTTPTransport, endpoints: APIEndpoints = .apple, policy: Policy = Policy(),
        nowMs: @escaping () -> Int64, sleepMs: @escaping (Int64) -> Void
    ) {
        self.tokens = tokens
        self.transport = transport
        self.endpoints = endpoints
        self.policy = policy
        self.nowMs = nowMs
        self.sleepMs = sleepMs
    }

    /// Throws when no request could be sent at all (libcurl missing: exit 69), before anything is
    /// recorded as sent.
    public func prepare() throws(AppStoreAPIError) { try transport.prepare() }

    /// Sends `call` to the server(s) `environment` names.
    ///
    /// With `auto`, Production first; Sandbox when Production answers "not found" (if `sandboxOnNotFound`)
    /// or 401 (an app never released exists only in Sandbox). `storedIn`: the server the database has the
    /// id from (a contract stored as Sandbox): with `auto` that server is asked first, and the other only
    /// when it answers "not found" (Apple's guidance, 4040010 and the other 404s), as Production first would.
    /// `walk`: the walk the call belongs to (its total deadline bounds the call too).
    public func send(
        _ call: APICall, _ environment: APIEnvironment, sandboxOnNotFound: Bool = true, storedIn: APIServer? = nil,
        within walk: PageWalk? = nil
    ) throws(AppStoreAPIError) -> APIAnswer {
        switch environment {
        case .production: return try send(call, to: .production, within: walk)
        case .sandbox: return try send(call, to: .sandbox, within: walk)
        case .auto where storedIn == .sandbox && sandboxOnNotFound:
            do {
                return try send(call, to: .sandbox, within: walk)
            } catch let error where error.kind == .notFound {
                log(
                    "Sandbox does not know it (\(error.appleCode.map { "Apple error \($0)" } ?? "404")), "
                        + "though the database has it from Sandbox; trying Production")
                return try send(call, to: .production, within: walk)
            }
        case .auto:
            do {
                return try send(call, to: .production, within: walk)
            } catch let error where error.kind == .notFound && sandboxOnNotFound {
                log("Production does not know it (\(error.appleCode.map { "Apple error \($0)" } ?? "404")); trying Sandbox")
                return try send(call, to: .sandbox, within: walk)
            } catch let error where error.kind == .unauthorized {
                log("Production refused the token; trying Sandbox (an app never released exists only there)")
                do {
                    let answer = try send(call, to: .sandbox, within: walk)
                    log("Sandbox accepted the token: the app is likely not released yet (use --environment Sandbox)")
                    return answer
                } catch let sandboxError where sandboxError.kind == .unauthorized {
                    throw error
                }
            }
        }
    }

    /// Sends `call` to one server, retrying and waiting as the policy allows, within the deadline (and
    /// within the total deadline of `walk`, the walk it belongs to).
    public func send(_ call: APICall, to server: APIServer, within walk: PageWalk? = nil) throws(AppStoreAPIError) -> APIAnswer {
        self.walk = walk
        defer { self.walk = nil }
        if let walk { try walk.checkDeadline(now: nowMs()) }
        var retries = 0
        var waits = 0
        var attempts = 0
        var last = "no request sent yet"
        while true {
            if let left = timeLeft(), left <= 0 { throw deadlinePassed(call, server, attempts: attempts, last: last) }
            attempts += 1
            let response: HTTPResponse
            do {
                response = try exchange(call, server)
            } catch let error where error.kind == .unavailable && error.isRetryable {
                last = error.message
                if let left = timeLeft(), left <= 0 { throw deadlinePassed(call, server, attempts: attempts, last: last) }
                guard retries < policy.maxRetries else { throw error }
                retries += 1
                try backOff(retries, because: error.message, call, server, attempts: attempts)
                continue
            }
            if (200..<300).contains(response.status) {
                startedAt = nil
                return APIAnswer(server: server, status: response.status, json: try Self.json(response, call))
            }
            var error = Self.error(response, call: call, server: server)
            last = error.message
            if response.status == 401 { tokens.discard() }
            if response.status == 429 {
                let wait = RateLimitWait(
                    header: response.headers["retry-after"], now: nowMs(), backoff: policy.backoff << Int64(min(waits, 10)))
                let fits = timeLeft().map { wait.ms < $0 } ?? true
                if waits < policy.maxRateLimitWaits, wait.ms <= policy.maxRateLimitWait, fits {
                    waits += 1
                    log(
                        "Apple's rate limit (429) on \(call.path): waiting \(Self.seconds(wait.ms)), \(wait.why) "
                            + "(wait \(waits) of \(policy.maxRateLimitWaits))")
                    if wait.ms > 0 { sleepMs(wait.ms) }
                    continue
                }
                error.kind = .rateLimited
                error.retryAt = wait.retryAt
                if let retryAt = wait.retryAt {
                    error.message += "; Apple says to try again at \(Timestamp.iso8601Millis(retryAt))"
                    if wait.ms > policy.maxRateLimitWait {
                        error.hint = "that is more than the \(Self.seconds(policy.maxRateLimitWait)) iapctl waits; run it again then"
                    } else if !fits, let deadline = policy.deadline {
                        error.hint = "that is beyond the \(Self.seconds(deadline)) deadline; run it again then"
                        error.deadline = deadline
                    } else {
                        error.hint = "still limited after \(waits) waits; run it again later"
                    }
                } else {
                    error.message += " (no Retry-After)"
                    error.hint = "still limited after \(waits) waits of iapctl's own backoff; run it again later"
                }
                throw error
            }
            let retryable =
                response.status >= 500 || error.appleCode.map { Self.retryableCodes.contains($0) } ?? false
            if retryable && retries < policy.maxRetries {
                retries += 1
                try backOff(retries, because: error.message, call, server, attempts: attempts)
                continue
            }
            if retryable {
                error.message += " (after \(retries) retries)"
            }
            throw error
        }
    }

    /// How long a 429 is waited out: until its Retry-After (Apple's ms since the epoch), or, without a
    /// readable one, iapctl's own backoff; `why` says which, for the log line.
    struct RateLimitWait {
        var ms: Int64
        var retryAt: Int64?
        var why: String

        init(header: String?, now: Int64, backoff: Int64) {
            if let header, let at = Int64(header.trimmed(.spacesAndNewlines)) {
                retryAt = at
                ms = max(at - now, 0)
                why = "until \(Timestamp.iso8601Millis(at)) as its Retry-After says"
            } else {
                retryAt = nil
                ms = backoff
                why =
                    header == nil
                    ? "iapctl's own backoff: Apple sent no Retry-After"
                    : "iapctl's own backoff: its Retry-After '\(header ?? "")' is not a time in ms"
            }
        }
    }

    /// The full URL `call` goes to on `server` (for dry runs).
    public func url(_ call: APICall, _ server: APIServer) -> String { endpoints.base(server) + call.target }

    /// Milliseconds left before the deadline (nil: no deadline); the full deadline before the first request.
    func timeLeft() -> Int64? {
        let walkLeft = walk?.endsAt.map { $0 - nowMs() }
        guard let deadline = policy.deadline else { return walkLeft }
        let left = startedAt.map { deadline - (nowMs() - $0) } ?? deadline
        return walkLeft.map { min($0, left) } ?? left
    }

    /// The error of a call the deadline stopped: how long, how many attempts, the last failure.
    func deadlinePassed(_ call: APICall, _ server: APIServer, attempts: Int, last: String) -> AppStoreAPIError {
        if let walk, let endsAt = walk.endsAt, nowMs() >= endsAt {
            var error = PageWalk.deadlinePassed(walk.what, pages: walk.pages, deadline: walk.limits.deadline ?? 0)
            error.message += " (the last: \(last))"
            return error
        }
        let deadline = policy.deadline ?? 0
        var error = AppStoreAPIError(
            .unavailable,
            "\(server.rawValue) \(call.method) \(call.path): no answer from Apple within the "
                + "\(Self.seconds(deadline)) deadline, after \(attempts) attempt\(attempts == 1 ? "" : "s") "
                + "(the last: \(last))")
        error.deadline = deadline
        return error
    }

    private func backOff(
        _ attempt: Int, because reason: String, _ call: APICall, _ server: APIServer, attempts: Int
    ) throws(AppStoreAPIError) {
        let delay = policy.backoff << Int64(attempt - 1)
        if let left = timeLeft(), delay >= left {
            throw deadlinePassed(call, server, attempts: attempts, last: reason)
        }
        log("\(reason); retry \(attempt) of \(policy.maxRetries) in \(Self.seconds(delay)) (backoff)")
        sleepMs(delay)
    }

    private func exchange(_ call: APICall, _ server: APIServer) throws(AppStoreAPIError) -> HTTPResponse {
        var headers = [("Authorization", "Bearer " + (try tokens.token())), ("Accept", "application/json")]
        var body: [UInt8]?
        if let text = call.bodyText {
            headers.append(("Content-Type", "application/json"))
            body = Array(text.utf8)
        } else if call.method != "GET" {
            body = []
        }
        if startedAt == nil { startedAt = nowMs() }
        requestCount += 1
        var request = HTTPRequest(method: call.method, url: endpoints.base(server) + call.target, headers: headers, body: body)
        request.timeoutMs = timeLeft()
        if let curl = transport as? CurlTransport {
            curl.whileSilent = whileSilent.map { tell in { tell(server, $0) } }
        }
        return try transport.send(request)
    }

    static func json(_ response: HTTPResponse, _ call: APICall) throws(AppStoreAPIError) -> JSONValue? {
        guard !response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) else { return nil }
        do {
            return try JSONParser.parse(response.body, limits: .init(maxBytes: CurlTransport.maxBody, maxDepth: 32))
        } catch {
            throw AppStoreAPIError(
                .malformedResponse, "\(call.method) \(call.path): Apple's answer is not JSON (\(error))")
        }
    }

    /// Apple's error body (if any) as an error of the right kind.
    static func error(_ response: HTTPResponse, call: APICall, server: APIServer) -> AppStoreAPIError {
        let body = try? JSONParser.parse(response.body)
        let code = body?["errorCode"]?.int64Value
        let message = body?["errorMessage"]?.stringValue
        let kind: AppStoreAPIError.Kind
        switch response.status {
        case 401: kind = .unauthorized
        case 404: kind = .notFound
        case 429: kind = .rateLimited
        case 500...: kind = .unavailable
        default: kind = .invalidRequest
        }
        var text = "\(server.rawValue) \(call.method) \(call.path): HTTP \(response.status)"
        if let code { text += ", Apple error \(code)" }
        if let message { text += ": \(message)" }
        if response.status == 401 {
            text = "\(server.rawValue) \(call.method) \(call.path): HTTP 401 Unauthorized (Apple refused the token)"
        }
        if let named = AppStoreAPIError.named(code) { text += " (\(named.name): \(named.meaning))" }
        var error = AppStoreAPIError(kind, text, hint: AppStoreAPIError.named(code)?.fix)
        error.httpStatus = response.status
        error.appleCode = code
        error.appleMessage = message
        return error
    }

    static func seconds(_ ms: Int64) -> String {
        ms < 1000 ? "\(ms) ms" : "\(ms / 1000).\((ms % 1000) / 100) s"
    }
}
