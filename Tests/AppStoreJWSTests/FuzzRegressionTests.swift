import AppStoreJWS
import JWSForge
import Testing

/// Findings of the fuzzing and hostile-input work (docs/testing.md), pinned as regressions, and
/// the invariants the libFuzzer target (Fuzz/FuzzTarget.swift) checks on every input, run on
/// hand-picked inputs so they hold in CI too.
@Suite("Fuzz regressions and invariants")
struct FuzzRegressionTests {
    static let clock = ms("2026-06-01T00:00:00Z")
    static let payload =
        #"{"notificationType":"TEST","notificationUUID":"u-1","data":{"bundleId":"com.example.app","environment":"Sandbox","appAppleId":42},"version":"2.0","signedDate":\#(ms("2026-03-01T10:00:00Z"))}"#

    static func verifier(_ pki: TestPKI, environments: Set<String> = ["Sandbox"]) throws -> AppStoreVerifier {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [pki.rootDER], bundleId: "com.example.app", appAppleId: 42, environments: environments, clock: { clock }))
    }

    // MARK: - Findings

    /// Finding R1 (hostile-input review): a `crit` header was ignored, so a JWS declaring an
    /// extension the verifier must understand (RFC 7515 §4.1.11) was accepted. Now refused.
    @Test(arguments: [#"["exp"]"#, "[]", #""b64""#, "null"])
    func critHeaderIsRefused(crit: String) throws {
        let pki = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let jws = try pki.sign(payload: Self.payload, header: ["crit": JSONRaw(crit), "exp": 1])
        let report = verifier.verify(jws)
        #expect(report.failure?.code == .invalidJWTFormat)
        #expect(report.failure?.message.contains("crit") == true)
        // Also when the signature would be skipped (Xcode data).
        let xcode = try Self.verifier(pki, environments: ["Xcode"])
        let unsigned = try pki.sign(
            payload: Self.payload.replacingOccurrences(of: "Sandbox", with: "Xcode"), header: ["crit": JSONRaw(crit)])
        #expect(xcode.verify(unsigned).failure?.code == .invalidJWTFormat)
    }

    /// The pointers an attacker controls (`jku`, `x5u`, `kid`, `jwk`) are ignored: the same
    /// verdict with and without them, for a trusted and for an untrusted signer.
    @Test func keyPointersChangeNoVerdict() throws {
        let pki = try TestPKI.make()
        let stranger = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let pointers: [String: Any] = [
            "kid": "k", "jku": "https://attacker.example/jwks", "x5u": "https://attacker.example/x5u",
            "jwk": ["kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"], "x5t#S256": "AAAA",
        ]
        #expect(verifier.verify(try pki.sign(payload: Self.payload, header: pointers)).isValid)
        #expect(verifier.verify(try stranger.sign(payload: Self.payload)).failure?.code == .untrustedChain)
        #expect(verifier.verify(try stranger.sign(payload: Self.payload, header: pointers)).failure?.code == .untrustedChain)
    }

    // MARK: - Invariants of the fuzz target, on fixed inputs

    /// A header with a duplicate key is refused before any certificate is looked at.
    @Test func duplicateHeaderKeyIsRefused() throws {
        let header = Base64.encodeURL(Array(#"{"alg":"ES256","alg":"none","x5c":[]}"#.utf8))
        let jws = header + "." + Base64.encodeURL(Array(Self.payload.utf8)) + "." + Base64.encodeURL([UInt8](repeating: 1, count: 64))
        let report = try Self.verifier(TestPKI.make()).verify(jws)
        #expect(report.failure?.code == .invalidJSON)
        #expect(report.failure?.message.contains("duplicate") == true)
    }

    /// The chain cache never changes a verdict: the same token, or the same (cached) header
    /// with another payload or signature, gets the verdict a fresh verifier gives.
    @Test func cacheNeverChangesAVerdict() throws {
        let pki = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let good = try pki.sign(payload: Self.payload)
        #expect(verifier.verify(good).isValid)
        #expect(verifier.verify(good).isValid)
        let parts = good.split(separator: ".").map(String.init)
        let otherPayload = Base64.encodeURL(Array(Self.payload.replacingOccurrences(of: "u-1", with: "u-2").utf8))
        let swapped = [parts[0], otherPayload, parts[2]].joined(separator: ".")
        let zeroSignature = [parts[0], parts[1], Base64.encodeURL([UInt8](repeating: 0, count: 64))].joined(separator: ".")
        for token in [swapped, zeroSignature] {
            let cached = verifier.verify(token)
            let fresh = try Self.verifier(pki).verify(token)
            #expect(cached.failure == fresh.failure)
            #expect(cached.failure?.code == .invalidSignature)
        }
    }

    /// Base64 decoders accept exactly one spelling per byte string.
    @Test(arguments: ["AB", "AB==", "AR", "AQ", "AQ=", "A", "-_8", "+/8=", "QUJD", "QUJDRA", "QUJDRA==", "QUJDRB==", " QQ"])
    func base64IsCanonical(text: String) {
        if let bytes = Base64.decodeURL(Array(text.utf8)) { #expect(Base64.encodeURL(bytes) == text) }
        if let bytes = Base64.decodeStandard(Array(text.utf8)) { #expect(Base64.encodeStandard(bytes) == text) }
    }

    /// Serializing parsed JSON and parsing it again is stable (the CLI's JSON output relies on it).
    @Test(arguments: [
        #"{"a":"\u2028\u2029\u0000\"\\/"}"#, "[-0,0.0,1e-7,1E+300,-1.5e-300,9223372036854775807,-9223372036854775808]",
        "9223372036854775808", #"{"😀":"\ud83d\ude00"}"#, "[[],{},[{}],\"\"]", "1e15", "123456789012345.5",
    ])
    func serializationIsStable(text: String) throws {
        let value = try JSONParser.parse(text)
        let once = value.serialized()
        let again = try JSONParser.parse(once)
        #expect(again.serialized() == once)
        #expect(try JSONParser.parse(value.prettySerialized()).serialized() == once)
    }

    /// Resource limits hold at their edges, without crashing (stack depth, size).
    @Test func limitsAtTheirEdges() throws {
        let deep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(deep) }
        #expect(throws: JSONError.self) { try JSONParser.parse("[" + deep + "]") }
        #expect(throws: JSONError.self) { try JSONParser.parse(String(repeating: "[", count: 1_000_000)) }
        #expect(throws: JSONError.self) { try JSONParser.parse("\"" + String(repeating: "a", count: 1 << 20) + "\"") }
        // A JWS over the 1 MiB limit is refused by size, not parsed.
        let huge = String(repeating: "A", count: AppStoreVerifier.maxInputBytes) + ".A.A"
        #expect(try Self.verifier(TestPKI.make()).verify(huge).failure?.code == .invalidJWTFormat)
    }

    /// Extreme dates in a payload are refused or formatted, never trapped on.
    @Test(arguments: ["9223372036854775807", "-9223372036854775808", "8.9e18", "-8.9e18", "0", "-1"])
    func extremeSignedDates(date: String) throws {
        let pki = try TestPKI.make()
        let payload = Self.payload.replacingOccurrences(
            of: #""signedDate":\#(ms("2026-03-01T10:00:00Z"))"#, with: #""signedDate":\#(date)"#)
        #expect(payload != Self.payload)
        let report = try Self.verifier(pki).verify(try pki.sign(payload: payload))
        #expect(report.failure != nil)  // in the future, or before the chain was valid
    }

    /// Framing never loses or invents a line: each non-blank line gives at least one item,
    /// numbered by its line, whatever it holds.
    @Test func framingNumbersEveryLine() {
        let lines = ["a.b.c", "", "{", #"{"signedPayload":1}"#, "\"x.y.z\"", #"{"signedTransactions":["a.b.c","d.e.f"]}"#, "\u{0}", "{}"]
        let items = WebhookBody.items(in: lines.joined(separator: "\n"))
        #expect(Set(items.map(\.line)) == [1, 3, 4, 5, 6, 7, 8])
        #expect(items.filter { $0.line == 6 }.count == 2)
    }
}
