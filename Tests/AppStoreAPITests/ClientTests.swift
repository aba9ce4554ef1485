import AppStoreJWS
import COpenSSL
import Testing

@testable import AppStoreAPI

/// A P-256 key made now, as App Store Connect's .p8 (PKCS#8 PEM), and a check of ES256 signatures with it.
final class TestKey {
    let pkey: OpaquePointer
    let pem: [UInt8]

    init() throws {
        pkey = try #require(generateKey("EC") { EVP_PKEY_CTX_set_group_name($0, "P-256") })
        let bio = try #require(BIO_new(BIO_s_mem()))
        defer { BIO_free(bio) }
        #expect(PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        pem = try #require(pointer.map { UnsafeRawBufferPointer(start: $0, count: length).map { $0 } })
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Whether `raw` (R‖S) is a valid ES256 signature of `message` by this key.
    func verifies(_ raw: [UInt8], _ message: [UInt8]) -> Bool {
        guard raw.count == 64, let sig = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else { return false }
        var der = [UInt8](repeating: 0, count: 80)
        let length = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        return EVP_DigestVerify(context, der, Int(length), message, message.count) == 1
    }
}

/// A new key of OpenSSL's algorithm `name` (EVP_EC_gen and EVP_RSA_gen are variadic macros).
func generateKey(_ name: String, _ configure: (OpaquePointer) -> Int32) -> OpaquePointer? {
    guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { return nil }
    defer { EVP_PKEY_CTX_free(context) }
    guard EVP_PKEY_keygen_init(context) == 1, configure(context) == 1 else { return nil }
    var key: OpaquePointer?
    guard EVP_PKEY_generate(context, &key) == 1 else { return nil }
    return key
}

/// A transport that answers from a script and records what it was sent.
final class ScriptedTransport: HTTPTransport {
    var answers: [HTTPResponse]
    var sent: [HTTPRequest] = []

    init(_ answers: [HTTPResponse]) { self.answers = answers }

    func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse {
        sent.append(request)
        return answers.count > 1 ? answers.removeFirst() : answers[0]
    }
}

func apple(_ status: Int, _ code: Int64, headers: [String: String] = [:]) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Array(#"{"errorCode": \#(code), "errorMessage": "m"}"#.utf8))
}

let okBody = HTTPResponse(status: 200, body: Array(#"{"signedTransactionInfo": "x"}"#.utf8))

@Suite("AppStoreAPI: the JWT")
struct TokenTests {
    @Test func theTokenHasApplesHeaderAndClaimsAndVerifiesWithThePublicKey() throws {
        let key = try TestKey()
        let issuer = TokenIssuer(
            key: try APIKey(pem: key.pem, keyId: "2X9R4HXF34"), issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            bundleId: "com.example.app"
        ) { 1_700_000_000 }
        let token = try issuer.token()
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONParser.parse(try #require(Base64.decodeURL(Substring(parts[0]))))
        #expect(header == .object([("alg", .string("ES256")), ("kid", .string("2X9R4HXF34")), ("typ", .string("JWT"))]))
        let claims = try JSONParser.parse(try #require(Base64.decodeURL(Substring(parts[1]))))
        #expect(claims["iss"]?.stringValue == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["iat"]?.int64Value == 1_700_000_000)
        #expect(claims["exp"]?.int64Value == 1_700_000_300)
        #expect(claims["aud"]?.stringValue == "appstoreconnect-v1")
        #expect(claims["bid"]?.stringValue == "com.example.app")
        let signature = try #require(Base64.decodeURL(Substring(parts[2])))
        #expect(signature.count == 64)
        #expect(key.verifies(signature, Array((parts[0] + "." + parts[1]).utf8)))
        #expect(!key.verifies(signature, Array((parts[0] + "." + parts[0]).utf8)))
    }

    @Test func theTokenIsReusedUntilAMinuteBeforeItExpires() throws {
        final class Clock: @unchecked Sendable { var now: Int64 = 1_000 }
        let clock = Clock()
        let issuer = TokenIssuer(
            key: try APIKey(pem: try TestKey().pem, keyId: "K"), issuerId: "i", bundleId: "b"
        ) { clock.now }
        let first = try issuer.token()
        clock.now += 239
        #expect(try issuer.token() == first)
        clock.now += 1
        #expect(try issuer.token() != first)
        #expect(issuer.signedCount == 2)
        issuer.discard()
        _ = try issuer.token()
        #expect(issuer.signedCount == 3)
    }

    @Test func aKeyThatIsNotAP256PrivateKeyIsRefusedWithoutShowingIt() throws {
        #expect(throws: AppStoreAPIError.self) { try APIKey(pem: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8), keyId: "K") }
        let rsa = try #require(generateKey("RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, 2048) })
        defer { EVP_PKEY_free(rsa) }
        let bio = try #require(BIO_new(BIO_s_mem()))
        defer { BIO_free(bio) }
        #expect(PEM_write_bio_PrivateKey(bio, rsa, nil, nil, 0, nil, nil) == 1)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        let pem = try #require(pointer.map { UnsafeRawBufferPointer(start: $0, count: length).map { $0 } })
        do {
            _ = try APIKey(pem: pem, keyId: "K")
            Issue.record("an RSA key was accepted")
        } catch {
            #expect(error.kind == .configuration)
            #expect(error.message.contains("not an EC P-256 key"))
        }
    }

    @Test func aDERSignatureWithShortIntegersIsPaddedToRS() throws {
        // SEQUENCE { INTEGER 0x01, INTEGER 0x00 0x80 }: r = 1, s = 128 (a leading zero keeps it positive).
        let raw = try APIKey.rawSignature([0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80])
        #expect(raw.count == 64)
        #expect(raw[31] == 1 && raw[0..<31].allSatisfy { $0 == 0 })
        #expect(raw[63] == 0x80 && raw[32..<63].allSatisfy { $0 == 0 })
        #expect(throws: AppStoreAPIError.self) { try APIKey.rawSignature([0x30, 0x00]) }
    }
}

@Suite("AppStoreAPI: retries, rate limits, environments")
struct ClientPolicyTests {
    final class Recorder: @unchecked Sendable {
        var sleeps: [Int64] = []
        var now: Int64 = 1_700_000_000_000
    }

    func client(_ transport: ScriptedTransport, _ recorder: Recorder) throws -> AppStoreServerAPI {
        let tokens = TokenIssuer(key: try APIKey(pem: try TestKey().pem, keyId: "K"), issuerId: "i", bundleId: "b") {
            recorder.now / 1000
        }
        return AppStoreServerAPI(
            tokens: tokens, transport: transport, nowMs: { recorder.now },
            sleepMs: {
                recorder.sleeps.append($0); recorder.now += $0
            })
    }

    @Test func retryableErrorsBackOffAndRetry() throws {
        let transport = ScriptedTransport([apple(500, 5000000), apple(404, 4040002), okBody])
        let recorder = Recorder()
        let answer = try client(transport, recorder).send(Endpoint.transaction("1"), to: .production)
        #expect(answer.json?["signedTransactionInfo"]?.stringValue == "x")
        #expect(recorder.sleeps == [500, 1000])
        #expect(transport.sent.count == 3)
        #expect(transport.sent[0].url == "https://api.storekit.apple.com/inApps/v1/transactions/1")
        #expect(transport.sent[0].headers.contains { $0.0 == "Authorization" && $0.1.hasPrefix("Bearer ") })
    }

    @Test func aNonRetryableErrorIsNotRetriedAndRetriesEnd() throws {
        let recorder = Recorder()
        let invalid = ScriptedTransport([apple(400, 4000006)])
        #expect(throws: AppStoreAPIError.self) { try client(invalid, recorder).send(Endpoint.transaction("1"), to: .sandbox) }
        #expect(invalid.sent.count == 1)
        let down = ScriptedTransport([apple(503, 5000001)])
        let downClient = try client(down, recorder)
        do {
            _ = try downClient.send(Endpoint.transaction("1"), to: .sandbox)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .unavailable)
            #expect(error.appleCode == 5000001)
        }
        #expect(down.sent.count == 4)
    }

    @Test func a429WaitsUntilRetryAfterWithinTheBound() throws {
        let recorder = Recorder()
        let retryAt = recorder.now + 1_500
        let transport = ScriptedTransport([apple(429, 4290000, headers: ["retry-after": String(retryAt)]), okBody])
        _ = try client(transport, recorder).send(Endpoint.transaction("1"), to: .production)
        #expect(recorder.sleeps == [1_500])
        #expect(transport.sent.count == 2)
    }

    @Test func a429BeyondTheBoundFailsAndSaysWhen() throws {
        let recorder = Recorder()
        let retryAt = recorder.now + 3_600_000
        let transport = ScriptedTransport([apple(429, 4290000, headers: ["retry-after": String(retryAt)])])
        let limited = try client(transport, recorder)
        do {
            _ = try limited.send(Endpoint.transaction("1"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .rateLimited)
            #expect(error.retryAt == retryAt)
            #expect(error.message.contains(Timestamp.iso8601Millis(retryAt)))
        }
        #expect(recorder.sleeps.isEmpty)
    }

    @Test func autoTriesSandboxOnlyWhenProductionDoesNotKnowTheId() throws {
        let recorder = Recorder()
        let notFound = ScriptedTransport([apple(404, 4040010), okBody])
        let answer = try client(notFound, recorder).send(Endpoint.transaction("1"), .auto)
        #expect(answer.server == .sandbox)
        #expect(notFound.sent.map(\.url).last == "https://api.storekit-sandbox.apple.com/inApps/v1/transactions/1")
        let invalid = ScriptedTransport([apple(400, 4000006), okBody])
        #expect(throws: AppStoreAPIError.self) { try client(invalid, recorder).send(Endpoint.transaction("1"), .auto) }
        #expect(invalid.sent.count == 1)
    }

    @Test func pathsAreEncodedAndTheTestOverrideIsLoopbackOnly() throws {
        #expect(Endpoint.transaction("a/../b").path == "/inApps/v1/transactions/a%2F..%2Fb")
        #expect(Endpoint.subscriptionStatuses("1", statuses: [1, 2]).target == "/inApps/v1/subscriptions/1?status=1&status=2")
        #expect(throws: AppStoreAPIError.self) { try APIEndpoints.testOverride(production: "https://example.com", sandbox: nil) }
        #expect(throws: AppStoreAPIError.self) { try APIEndpoints.testOverride(production: "http://127.0.0.1:1", sandbox: nil) }
        #expect(throws: AppStoreAPIError.self) {
            try APIEndpoints.testOverride(production: "https://127.0.0.1:1", sandbox: "https://127.0.0.1.evil.com")
        }
        let local = try APIEndpoints.testOverride(production: "https://127.0.0.1:8443/p", sandbox: "https://localhost:8443/s")
        #expect(local.sandbox == "https://localhost:8443/s")
    }

    @Test func aRequestIdentifierIsANewVersion4UUIDEachTime() {
        let a = RequestIdentifier.random()
        #expect(RequestIdentifier.isUUID(a) && a == a.lowercased())
        #expect(Array(a)[14] == "4" && "89ab".contains(Array(a)[19]))
        #expect(Set((0..<100).map { _ in RequestIdentifier.random() }).count == 100)
    }

    @Test func aRetryResendsTheSameBodySoTheSameRequestIdentifier() throws {
        let transport = ScriptedTransport([apple(500, 5000000), okBody])
        let call = Endpoint.extend(original: "1", days: 3, reasonCode: 3, requestIdentifier: RequestIdentifier.random())
        _ = try client(transport, Recorder()).send(call, to: .production)
        #expect(transport.sent.count == 2)
        #expect(transport.sent[0].body == transport.sent[1].body)
    }
}

@Suite("AppStoreAPI: one deadline per command, and what the waits say")
struct ClientDeadlineTests {
    final class Clock: @unchecked Sendable {
        var now: Int64 = 1_700_000_000_000
        var sleeps: [Int64] = []
    }

    /// A server that takes `latency` ms per answer: past the request's timeout it is a timeout, as curl's.
    final class SlowTransport: HTTPTransport {
        let clock: Clock
        let latency: Int64
        let answer: HTTPResponse
        var sent: [HTTPRequest] = []

        init(_ clock: Clock, latency: Int64, answer: HTTPResponse) {
            self.clock = clock
            self.latency = latency
            self.answer = answer
        }

        func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse {
            sent.append(request)
            let limit = request.timeoutMs ?? Int64.max
            clock.now += min(latency, limit)
            guard latency <= limit else { throw AppStoreAPIError(.unavailable, "api did not answer in time") }
            return answer
        }
    }

    func client(_ transport: HTTPTransport, _ clock: Clock, deadline: Int64? = 60_000, maxWait: Int64 = 60_000)
        throws -> (AppStoreServerAPI, Log)
    {
        var policy = AppStoreServerAPI.Policy()
        policy.deadline = deadline
        policy.maxRateLimitWait = maxWait
        let tokens = TokenIssuer(key: try APIKey(pem: try TestKey().pem, keyId: "K"), issuerId: "i", bundleId: "b") {
            clock.now / 1000
        }
        let api = AppStoreServerAPI(
            tokens: tokens, transport: transport, policy: policy, nowMs: { clock.now },
            sleepMs: {
                clock.sleeps.append($0)
                clock.now += $0
            })
        let log = Log()
        api.log = { log.lines.append($0) }
        return (api, log)
    }

    final class Log: @unchecked Sendable { var lines: [String] = [] }

    @Test func aFrozenServerStopsTheCommandAtItsDeadlineNotAfterEveryRetry() throws {
        let clock = Clock()
        let started = clock.now
        let frozen = SlowTransport(clock, latency: 3_600_000, answer: okBody)
        let (api, _) = try client(frozen, clock)
        do {
            _ = try api.send(Endpoint.transaction("1"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .unavailable)
            #expect(error.deadline == 60_000)
            #expect(error.message.contains("no answer from Apple within the 60.0 s deadline, after 1 attempt"))
            #expect(error.message.contains("did not answer in time"))
        }
        #expect(frozen.sent.map(\.timeoutMs) == [60_000])
        #expect(clock.now - started == 60_000)
    }

    @Test func retriesShareTheDeadlineAndTheLastAttemptGetsWhatIsLeft() throws {
        let clock = Clock()
        let started = clock.now
        let slow = SlowTransport(clock, latency: 25_000, answer: apple(500, 5000000))
        let (api, log) = try client(slow, clock)
        #expect(throws: AppStoreAPIError.self) { try api.send(Endpoint.transaction("1"), to: .production) }
        #expect(slow.sent.map(\.timeoutMs) == [60_000, 34_500, 8_500])
        #expect(clock.sleeps == [500, 1000])
        #expect(clock.now - started == 60_000)
        #expect(log.lines.first?.hasSuffix("retry 1 of 3 in 500 ms (backoff)") == true)
        do {
            _ = try api.send(Endpoint.transaction("2"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.message.contains("deadline, after 0 attempts"), "no answer came: the deadline stays spent")
        }
        #expect(slow.sent.count == 3)
    }

    @Test func aBackoffThatWouldEndAfterTheDeadlineIsNotSlept() throws {
        let clock = Clock()
        let slow = SlowTransport(clock, latency: 59_800, answer: apple(503, 5000001))
        let (api, _) = try client(slow, clock)
        do {
            _ = try api.send(Endpoint.transaction("1"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.deadline == 60_000)
            #expect(error.message.contains("after 1 attempt (the last: Production GET /inApps/v1/transactions/1: HTTP 503"))
        }
        #expect(clock.sleeps.isEmpty)
    }

    @Test func eachAnswerStartsTheDeadlineAfreshSoALongWalkIsNotCut() throws {
        let clock = Clock()
        let started = clock.now
        let slow = SlowTransport(clock, latency: 40_000, answer: okBody)
        let (api, _) = try client(slow, clock)
        for id in ["1", "2", "3"] { #expect(try api.send(Endpoint.transaction(id), to: .production).status == 200) }
        #expect(slow.sent.map(\.timeoutMs) == [60_000, 60_000, 60_000])
        #expect(clock.now - started == 120_000)
    }

    @Test func noDeadlineKeepsThePerRequestTimeoutsOnly() throws {
        let clock = Clock()
        let (api, _) = try client(ScriptedTransport([okBody]), clock, deadline: nil)
        #expect(try api.send(Endpoint.transaction("1"), to: .production).status == 200)
    }

    @Test func a429WithoutRetryAfterSaysItBacksOffOnItsOwn() throws {
        let clock = Clock()
        let transport = ScriptedTransport([apple(429, 4290000), apple(429, 4290000, headers: ["retry-after": "soon"]), okBody])
        let (api, log) = try client(transport, clock)
        _ = try api.send(Endpoint.transaction("1"), to: .production)
        #expect(clock.sleeps == [500, 1000])
        #expect(
            log.lines == [
                "Apple's rate limit (429) on /inApps/v1/transactions/1: waiting 500 ms, iapctl's own backoff: "
                    + "Apple sent no Retry-After (wait 1 of 5)",
                "Apple's rate limit (429) on /inApps/v1/transactions/1: waiting 1.0 s, iapctl's own backoff: "
                    + "its Retry-After 'soon' is not a time in ms (wait 2 of 5)",
            ])
        #expect(!log.lines.joined().contains("as its Retry-After says"))
    }

    @Test func a429WithRetryAfterSaysUntilWhen() throws {
        let clock = Clock()
        let retryAt = clock.now + 1_500
        let transport = ScriptedTransport([apple(429, 4290000, headers: ["retry-after": String(retryAt)]), okBody])
        let (api, log) = try client(transport, clock)
        _ = try api.send(Endpoint.transaction("1"), to: .production)
        #expect(
            log.lines == [
                "Apple's rate limit (429) on /inApps/v1/transactions/1: waiting 1.5 s, until "
                    + "\(Timestamp.iso8601Millis(retryAt)) as its Retry-After says (wait 1 of 5)"
            ])
    }

    @Test func aRateLimitPastTheDeadlineIsNotWaitedOut() throws {
        let clock = Clock()
        let retryAt = clock.now + 61_000
        let transport = ScriptedTransport([apple(429, 4290000, headers: ["retry-after": String(retryAt)])])
        let (api, _) = try client(transport, clock, maxWait: 120_000)
        do {
            _ = try api.send(Endpoint.transaction("1"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.kind == .rateLimited && error.retryAt == retryAt)
            #expect(error.hint == "that is beyond the 60.0 s deadline; run it again then")
        }
        #expect(clock.sleeps.isEmpty)
        let (limited, _) = try client(ScriptedTransport([apple(429, 4290000)]), Clock())
        do {
            _ = try limited.send(Endpoint.transaction("1"), to: .production)
            Issue.record("no error")
        } catch {
            #expect(error.message.hasSuffix("(no Retry-After)"))
            #expect(error.hint == "still limited after 5 waits of iapctl's own backoff; run it again later")
        }
    }
}

@Suite("AppStoreAPI: pagination")
struct PaginationTests {
    func client(_ transport: ScriptedTransport) throws -> AppStoreServerAPI {
        let tokens = TokenIssuer(key: try APIKey(pem: try TestKey().pem, keyId: "K"), issuerId: "i", bundleId: "b") {
            1_700_000_000
        }
        return AppStoreServerAPI(tokens: tokens, transport: transport, nowMs: { 0 }, sleepMs: { _ in })
    }

    func page(_ json: String) -> HTTPResponse { HTTPResponse(status: 200, body: Array(json.utf8)) }

    @Test func historyResendsTheQueryWithEachRevision() throws {
        let transport = ScriptedTransport([
            page(#"{"revision": "r1", "hasMore": true, "signedTransactions": ["a"]}"#),
            page(#"{"revision": "r2", "hasMore": false, "signedTransactions": ["b"]}"#),
        ])
        let (server, pages) = try client(transport).walkRevisions(
            Endpoint.transactionHistory("1", query: [("sort", "ASCENDING")]), .sandbox)
        #expect(server == .sandbox)
        #expect(pages.count == 2)
        #expect(transport.sent.map(\.url).last == "https://api.storekit-sandbox.apple.com/inApps/v2/history/1?sort=ASCENDING&revision=r1")
    }

    @Test func anExpiredPaginationTokenRestartsTheWalkOnce() throws {
        let transport = ScriptedTransport([
            page(#"{"hasMore": true, "paginationToken": "t1", "notificationHistory": [{"signedPayload": "a"}]}"#),
            apple(400, 4000014),
            page(#"{"hasMore": true, "paginationToken": "t2", "notificationHistory": [{"signedPayload": "a"}]}"#),
            page(#"{"hasMore": false, "notificationHistory": [{"signedPayload": "b"}]}"#),
        ])
        let pages = try client(transport).walkNotificationHistory(body: .object([("startDate", .int(1))]), .production)
        #expect(pages.count == 2)
        #expect(transport.sent.count == 4)
        #expect(transport.sent[2].url.hasSuffix("/inApps/v1/notifications/history"))
        #expect(transport.sent[3].url.hasSuffix("?paginationToken=t2"))
        #expect(transport.sent[0].body.map { String(decoding: $0, as: UTF8.self) } == #"{"startDate":1}"#)
    }

    /// A client whose clock moves `stepMs` each time it is read.
    func client(_ transport: ScriptedTransport, stepMs: Int64, policy: AppStoreServerAPI.Policy = .init()) throws
        -> AppStoreServerAPI
    {
        let tokens = TokenIssuer(key: try APIKey(pem: try TestKey().pem, keyId: "K"), issuerId: "i", bundleId: "b") {
            1_700_000_000
        }
        var clock: Int64 = 0
        return AppStoreServerAPI(
            tokens: tokens, transport: transport, policy: policy,
            nowMs: {
                clock += stepMs
                return clock
            }, sleepMs: { _ in })
    }

    @Test func eachPageIsHandedOnBeforeTheNextIsAskedFor() throws {
        let transport = ScriptedTransport([
            page(#"{"revision": "r1", "hasMore": true, "signedTransactions": ["a"]}"#),
            page(#"{"revision": "r2", "hasMore": true, "signedTransactions": ["b"]}"#),
            page(#"{"revision": "r3", "hasMore": false, "signedTransactions": ["c"]}"#),
        ])
        var heard: [(number: Int, sent: Int)] = []
        try client(transport).forEachRevisionPage(Endpoint.transactionHistory("1", query: []), .production) { _, _, number in
            heard.append((number, transport.sent.count))
        }
        // Page n is handled while only n requests were sent: no page is collected ahead.
        #expect(heard.map(\.number) == [1, 2, 3])
        #expect(heard.map(\.sent) == [1, 2, 3])
    }

    @Test func aRepeatedRevisionStopsTheWalkNamingItAndThePage() throws {
        let transport = ScriptedTransport([
            page(#"{"revision": "r1", "hasMore": true, "signedTransactions": ["a"]}"#),
            page(#"{"revision": "r2", "hasMore": true, "signedTransactions": ["b"]}"#),
            page(#"{"revision": "r1", "hasMore": true, "signedTransactions": ["a"]}"#),
        ])
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport).walkRevisions(Endpoint.transactionHistory("1", query: []), .production)
        }
        #expect(error?.kind == .malformedResponse)
        #expect(error?.message.contains("page 3 repeats the revision 'r1' of page 1") == true, "\(String(describing: error))")
        #expect(transport.sent.count == 3)
    }

    @Test func aRepeatedPaginationTokenStopsTheNotificationHistoryWalk() throws {
        let transport = ScriptedTransport([
            page(#"{"hasMore": true, "paginationToken": "t1", "notificationHistory": []}"#)
        ])
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport).walkNotificationHistory(body: .object([]), .production)
        }
        #expect(error?.message.contains("page 2 repeats the paginationToken 't1' of page 1") == true, "\(String(describing: error))")
        #expect(transport.sent.count == 2)
    }

    @Test func hasMoreForEverStopsAtThePageCap() throws {
        var transportPages: [HTTPResponse] = (1...50).map {
            page(#"{"revision": "r\#($0)", "hasMore": true, "signedTransactions": []}"#)
        }
        transportPages.append(page(#"{"revision": "last", "hasMore": true, "signedTransactions": []}"#))
        let transport = ScriptedTransport(transportPages)
        var policy = AppStoreServerAPI.Policy()
        policy.walk.maxPages = 7
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport, stepMs: 0, policy: policy).walkRevisions(Endpoint.transactionHistory("1", query: []), .production)
        }
        #expect(error?.message.contains("more than 7 pages (the page cap); stopped after page 7") == true)
        #expect(transport.sent.count == 7)
    }

    @Test func theTotalDeadlineCountsFromTheWalksStartNotFromEachAnswer() throws {
        let transport = ScriptedTransport(
            (1...100).map {
                page(#"{"revision": "r\#($0)", "hasMore": true, "signedTransactions": []}"#)
            })
        // Each read of the clock is 1 s later: every answer comes well inside the 60 s per-answer deadline.
        var policy = AppStoreServerAPI.Policy()
        policy.walk.deadline = 20_000
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport, stepMs: 1000, policy: policy).walkRevisions(
                Endpoint.transactionHistory("1", query: []), .production)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("total deadline of 20.0 s") == true, "\(String(describing: error))")
        #expect(transport.sent.count < 20)
    }

    @Test func aHistoryWhoseItemsPassTheBoundStopsNamingThePage() throws {
        let item = String(repeating: "x", count: 3 << 20)
        let transport = ScriptedTransport(
            (1...30).map { page(#"{"revision": "r\#($0)", "hasMore": true, "signedTransactions": ["\#(item)"]}"#) })
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport).signedTransactionHistory(Endpoint.transactionHistory("1", query: []), .production)
        }
        // 3 MiB a page: the 22nd passes 64 MiB.
        #expect(error?.message.contains("page 22 brings the signed transactions past 64 MiB") == true, "\(String(describing: error))")
        #expect(transport.sent.count == 22)
    }

    @Test func aPaginationMarkerLongerThanApplesIsRefused() throws {
        let long = String(repeating: "x", count: WalkLimits.maxMarkerBytes + 1)
        let transport = ScriptedTransport([page(#"{"revision": "\#(long)", "hasMore": true, "signedTransactions": []}"#)])
        let error = #expect(throws: AppStoreAPIError.self) {
            try client(transport).walkRevisions(Endpoint.transactionHistory("1", query: []), .production)
        }
        #expect(error?.message.contains("gives a revision of 1025 bytes") == true)
    }
}
