// libFuzzer entry point over every decoder of input from outside iapctl: the command input's item
// framing (`ItemReader` over `InputReader`, as `iapctl` reads stdin and files), the strict JSON
// parser, base64, time words and ISO-8601 times, JWS parsing with the X.509/ES256 chain checks and
// payload decoding, X.509 certificates, StoreKit 1 receipts (PKCS#7 container and the strict DER
// payload decoder), the ledger's packed raw form, `--from` correction rows, and the App Store
// Server API's answers.
//
// The package's executable target `IAPFuzz` (this folder) links the package's own modules.
// `scripts/fuzz` builds it with `swift build --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address
// -Xswiftc -DIAPCTL_LIBFUZZER` (libFuzzer's `main` drives `LLVMFuzzerTestOneInput`); a plain
// `swift build` makes a replay driver (`IAPFuzz FILE…` runs each input once), so every build
// compiles this file and it cannot fall behind the modules' API.
//
// The first input byte picks what the rest of the input is (see `FuzzMode`); seeds in
// Fuzz/corpus carry that byte. Besides "no crash, no hang, no sanitizer report", every input
// is checked against invariants that would mean a wrong verdict (see `check`).

import AppStoreAPI
import AppStoreJWS
import AppStoreReceipt
import COpenSSL
import CommandLineKit
import IAPCommandLine
import IAPFoundation
import ItemInput
import StoreSQL
import SubscriptionEngine
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// What the bytes after the selector byte are.
enum FuzzMode: UInt8, CaseIterable {
    /// Command input text: lines of raw JWS / webhook bodies / API responses.
    case framing = 0
    /// One JSON text: parser, serializer round trip, payload models.
    case json = 1
    /// A JWS payload (JSON), wrapped into a compact JWS and verified (Xcode data skips the
    /// signature, so payload decoding, app checks and nested JWS are reached).
    case payload = 2
    /// A JWS header (JSON, e.g. x5c with mutated certificates), with a fixed payload and signature.
    case header = 3
    /// Base64 and ISO-8601 text, PEM/DER roots.
    case encodings = 4
    /// A StoreKit 1 receipt: DER given both to the payload decoder and to the receipt verifier.
    case receipt = 5
    /// The ledger's packed raw form (`LedgerPacking`): the bytes unpacked as a stored raw, and
    /// packed as a raw text then unpacked again.
    case ledger = 6
    /// One DER X.509 certificate.
    case certificate = 7
    /// `--from` rows (NDJSON or CSV) as hand corrections of orders and contracts.
    case corrections = 8
    /// An answer of the App Store Server API: one byte picks the HTTP status, the rest is the body.
    case apiAnswer = 9
}

/// Shared, built once: verifiers with a fixed clock.
struct FuzzWorld: Sendable {
    /// 2025-01-01T00:00:00Z.
    static let clock: Int64 = 1_735_689_600_000

    let strict: AppStoreVerifier
    let xcode: AppStoreVerifier
    /// Apple Inc. Root only, any environment, checked at the creation date.
    let receipts: ReceiptVerifier
    let payloadB64 = Base64.encodeURL(
        Array(
            #"{"transactionId":"1","originalTransactionId":"1","bundleId":"com.example","environment":"Sandbox","signedDate":1700000000000}"#
                .utf8))

    static let shared = FuzzWorld()

    init() {
        let clock: @Sendable () -> Int64 = { FuzzWorld.clock }
        // Apple's root and the conformance fixtures' test CA (so their seeds reach the signature).
        var roots = [AppleRootCAG3.der]
        if let path = getenv("IAPCTL_FUZZ_EXTRA_ROOT"), let der = FuzzWorld.read(String(cString: path)) { roots.append(der) }
        strict = try! AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: roots, bundleId: "com.example", appAppleId: 1234,
                environments: ["Production", "Sandbox"], clock: clock))
        receipts = try! ReceiptVerifier(trust: ReceiptTrust(environments: [], clock: clock))
        xcode = try! AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: roots, bundleId: "com.example", appAppleId: 1234,
                environments: ["Xcode", "LocalTesting", "Sandbox", "Production"], clock: clock))
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }
}

/// Writes a line to stderr.
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Stops the run: libFuzzer records the input as a crash.
func invariant(_ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String) {
    if !condition() {
        printError("INVARIANT VIOLATED: \(what())")
        abort()
    }
}

/// Verifies `token` with `verifier` and checks the verdict's invariants.
func check(_ token: String, _ verifier: AppStoreVerifier) {
    let first = verifier.verify(token)
    // The chain cache must never change a verdict: a second run (cache warm) agrees.
    let second = verifier.verify(token)
    invariant(
        first.failure == second.failure,
        "cache changed the verdict: \(String(describing: first.failure)) vs \(String(describing: second.failure))")
    if first.failure == nil {
        // Accepted ⇒ the signature was verified, or explicitly skipped for Xcode/LocalTesting data
        // that the configuration accepts.
        let signature = first.check("signature")
        if signature?.status == .skipped {
            invariant(
                first.environment == "Xcode" || first.environment == "LocalTesting", "signature skipped for \(first.environment ?? "nil")")
            invariant(
                verifier.configuration.environments.contains(first.environment ?? ""),
                "unsigned data accepted by a verifier not configured for it")
        } else {
            invariant(signature?.status == .passed, "accepted without a signature check")
        }
        for (member, nested) in first.nested {
            invariant(nested.failure == nil, "accepted with a failing nested \(member.rawValue)")
        }
    } else {
        invariant(!first.failure!.message.isEmpty, "failure without a message")
    }
    // Kind-constrained verification never accepts another kind.
    for kind in [PayloadKind.notification, .transaction, .renewalInfo] {
        let report = verifier.verify(token, as: kind)
        if report.failure == nil { invariant(report.kind == kind, "verify(as: \(kind)) accepted \(report.kind)") }
    }
}

func fuzzFraming(_ bytes: [UInt8]) {
    let world = FuzzWorld.shared
    // As `iapctl verify`/`notify` read stdin: lines, pasted JWS, webhook bodies, API answers, and
    // (with receipts accepted) a binary receipt.
    for acceptsReceipts in [false, true] {
        var reader = ItemReader(InputReader(bytes: bytes), acceptsReceipts: acceptsReceipts)
        var verified = 0
        var items = 0
        while let item = try? reader.next(), items < 64 {
            items += 1
            guard case .success(let token) = item.result, verified < 8 else { continue }
            verified += 1
            check(token, world.strict)
            check(token, world.xcode)
        }
    }
}

func fuzzJSON(_ bytes: [UInt8]) {
    guard let value = try? JSONParser.parse(bytes) else { return }
    // Serializing and re-parsing is stable.
    let text = value.serialized()
    guard let again = try? JSONParser.parse(text) else {
        invariant(false, "serialized JSON does not parse: \(text.prefix(200))")
        return
    }
    invariant(again.serialized() == text, "serialization is not stable")
    invariant((try? JSONParser.parse(value.prettySerialized()))?.serialized() == text, "pretty serialization differs")
    _ = AppStoreVerifier.detectKind(value)
    _ = try? NotificationPayload(json: value)
    _ = try? TransactionPayload(json: value)
    _ = try? RenewalInfoPayload(json: value)
    _ = try? AppTransactionPayload(json: value)
    _ = try? WebhookBody.tokens(in: value)
}

func fuzzPayload(_ bytes: [UInt8]) {
    let world = FuzzWorld.shared
    let header = Base64.encodeURL(Array(#"{"alg":"ES256","x5c":["AA==","AA==","AA=="]}"#.utf8))
    let token = header + "." + Base64.encodeURL(bytes) + "." + Base64.encodeURL([UInt8](repeating: 1, count: 64))
    check(token, world.xcode)
    check(token, world.strict)
}

func fuzzHeader(_ bytes: [UInt8]) {
    let world = FuzzWorld.shared
    let token = Base64.encodeURL(bytes) + "." + world.payloadB64 + "." + Base64.encodeURL([UInt8](repeating: 1, count: 64))
    let report = world.strict.verify(token)
    invariant(report.failure != nil, "a fixed, unsigned payload was accepted")
}

func fuzzEncodings(_ bytes: [UInt8]) {
    if let decoded = Base64.decodeURL(bytes) {
        invariant(Array(Base64.encodeURL(decoded).utf8) == bytes, "base64url is not canonical")
    }
    if let decoded = Base64.decodeStandard(bytes) {
        invariant(Array(Base64.encodeStandard(decoded).utf8) == bytes, "base64 is not canonical")
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let ms = Timestamp.parseISO8601(text) {
        invariant(Timestamp.parseISO8601(Timestamp.iso8601Millis(ms)) == ms, "ISO-8601 round trip of \(ms)")
    }
    // Time words (`--since 3d`, `now`, milliseconds, an ISO-8601 time): an accepted word from 1970
    // to year 9999 is a time that formats and parses back. (Milliseconds beyond year 9999 are
    // accepted too and do not round-trip: a known limit, docs/testing.md.)
    if let ms = Timestamp.parse(text, now: FuzzWorld.clock), (0...253_402_300_799_999).contains(ms) {
        invariant(Timestamp.parse(Timestamp.iso8601Millis(ms), now: FuzzWorld.clock) == ms, "time word round trip of \(ms)")
    }
    _ = try? TrustConfiguration.roots(fromDERorPEM: bytes)
}

func fuzzReceipt(_ bytes: [UInt8]) {
    // The payload decoder: deterministic, and what it decodes renders as JSON that parses back.
    if let receipt = try? AppReceipt(der: bytes) {
        invariant((try? AppReceipt(der: bytes)) == receipt, "decoding is not deterministic")
        let text = receipt.json.serialized()
        invariant((try? JSONParser.parse(text))?.serialized() == text, "receipt JSON does not parse back")
        invariant(receipt.inApp.count <= AppReceipt.maxInAppEntries, "more in-app entries than the limit")
    }
    // The verifier: only the built-in Apple root is trusted, so an accepted receipt passed the
    // signature, an Apple chain and Apple's OIDs, and one flipped byte makes it refused.
    let world = FuzzWorld.shared
    let report = world.receipts.verify(der: bytes)
    if report.isValid {
        for name in ["signature", "chain", "leaf OID", "intermediate OID", "validity"] {
            invariant(report.check(name)?.status == .passed, "receipt accepted without a passing \(name) check")
        }
        invariant(!report.isSelfSigned, "self-signed receipt accepted with only Apple's root")
        var flipped = bytes
        flipped[bytes.count / 2] ^= 0x01
        invariant(!world.receipts.verify(der: flipped).isValid, "a flipped byte was accepted")
    } else {
        invariant(!(report.failure?.message.isEmpty ?? true), "receipt failure without a message")
    }
    if bytes.count < 4096, let der = ReceiptInput.der(fromBase64: Base64.encodeStandard(bytes)) {
        invariant(der == bytes, "base64 receipt round trip")
    }
}

func fuzzLedger(_ bytes: [UInt8]) {
    // A stored raw that is not what iapctl wrote: refused, or some text (never a crash).
    _ = try? LedgerPacking.unpack(bytes) { _ in nil }
    _ = try? LedgerPacking.unpack(bytes) { $0 }
    // Any raw text packs (or is stored as it is) and unpacks to itself.
    let text = String(decoding: bytes, as: UTF8.self)
    guard let packed = LedgerPacking.pack(text) else { return }
    let chains = Dictionary(packed.chains.map { ($0.digest, $0.text) }, uniquingKeysWith: { first, _ in first })
    invariant((try? LedgerPacking.unpack(packed.bytes) { chains[$0] }) == text, "a packed raw does not unpack to its text")
}

func fuzzCertificate(_ bytes: [UInt8]) {
    guard let certificate = X509Certificate.parse(der: bytes) else { return }
    // What the chain checks and error messages read of it.
    _ = (certificate.subjectName, certificate.issuerName, certificate.notBefore, certificate.notAfter)
    _ = certificate.sha256Fingerprint
    invariant(X509Certificate.parse(der: certificate.der) != nil, "a parsed certificate's DER does not parse again")
    _ = try? TrustConfiguration.roots(fromDERorPEM: bytes)
}

func fuzzCorrections(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    for path in ["rows.csv", "rows.ndjson", "rows"] {
        guard let rows = try? BatchRows.parse(text, path: path) else { continue }
        // Each row's key, per-row reason and ticket, and every value typed for its field.
        _ = try? CorrectionRows.requests(rows, for: Order.self, reason: "fuzz", ticket: nil)
        _ = try? CorrectionRows.requests(rows, for: Contract.self, reason: "fuzz", ticket: nil)
    }
}

/// Answers every request with the fuzzed answer, then with an empty page (so pagination ends).
final class FuzzTransport: HTTPTransport {
    let first: HTTPResponse
    var sent = 0

    init(_ first: HTTPResponse) { self.first = first }

    func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse {
        sent += 1
        return sent <= 2 ? first : HTTPResponse(status: 200, body: Array(#"{"signedTransactions":[],"notificationHistory":[]}"#.utf8))
    }
}

/// A P-256 key made once (the API client signs each request's token; Apple never sees it here).
let fuzzAPIKey: APIKey = {
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { fatalError("EVP_PKEY_CTX_new_from_name") }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
        EVP_PKEY_generate(context, &key) == 1, let key, let bio = BIO_new(BIO_s_mem())
    else { fatalError("P-256 key generation") }
    defer { BIO_free(bio); EVP_PKEY_free(key) }
    guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { fatalError("PEM_write_bio_PrivateKey") }
    var pointer: UnsafeMutablePointer<CChar>?
    let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
    let pem = UnsafeRawBufferPointer(start: pointer, count: length).map { $0 }
    return try! APIKey(pem: pem, keyId: "FUZZ")
}()

func fuzzAPIAnswer(_ bytes: [UInt8]) {
    guard let selector = bytes.first else { return }
    let statuses = [200, 200, 200, 202, 400, 401, 404, 429, 500, 503]
    let response = HTTPResponse(
        status: statuses[Int(selector) % statuses.count], headers: ["retry-after": "1"], body: Array(bytes.dropFirst()))
    let api = AppStoreServerAPI(
        tokens: TokenIssuer(key: fuzzAPIKey, issuerId: "fuzz", bundleId: "com.example") { FuzzWorld.clock / 1000 },
        transport: FuzzTransport(response), nowMs: { FuzzWorld.clock }, sleepMs: { _ in })
    let call = Endpoint.transactionHistory("1", query: [])
    switch selector / 16 % 4 {
    case 0:
        if let answer = try? api.send(Endpoint.lookup(orderId: "A1"), .auto) {
            _ = try? OrderLookup(answer, call: call)
        }
    case 1:
        if let answer = try? api.send(Endpoint.subscriptionStatuses("1", statuses: []), .production) {
            _ = try? SubscriptionStatusItem.items(answer, call: call)
        }
    case 2:
        if let (_, pages) = try? api.walkRevisions(call, .production, maxPages: 3) {
            for page in pages { _ = try? SignedTransactions.list(page["signedTransactions"], call: call, optional: false) }
        }
    default:
        _ = try? api.walkNotificationHistory(body: .object([]), .sandbox, maxPages: 3)
        if let answer = try? api.send(Endpoint.transaction("1"), .sandbox) {
            _ = try? AppStoreServerAPI.requiredString(answer, "signedTransactionInfo", call: call)
        }
    }
}

/// `IAPCTL_FUZZ_MODE=N`: only inputs of mode N are run (the others return at once), for
/// `scripts/fuzz --smoke`.
let onlyMode: UInt8? = getenv("IAPCTL_FUZZ_MODE").flatMap { UInt8(String(cString: $0)) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let mode = FuzzMode(rawValue: data[0] % UInt8(FuzzMode.allCases.count))!
    if let onlyMode, mode.rawValue != onlyMode { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch mode {
    case .framing: fuzzFraming(bytes)
    case .json: fuzzJSON(bytes)
    case .payload: fuzzPayload(bytes)
    case .header: fuzzHeader(bytes)
    case .encodings: fuzzEncodings(bytes)
    case .receipt: fuzzReceipt(bytes)
    case .ledger: fuzzLedger(bytes)
    case .certificate: fuzzCertificate(bytes)
    case .corrections: fuzzCorrections(bytes)
    case .apiAnswer: fuzzAPIAnswer(bytes)
    }
    return 0
}

#if !IAPCTL_LIBFUZZER
    /// Without libFuzzer: runs each input file named on the command line once (a finding's
    /// reproduction without the sanitizers), and exits 0 when none broke an invariant.
    @main
    enum ReplayDriver {
        static func main() {
            for path in CommandLine.arguments.dropFirst() {
                guard let bytes = FuzzWorld.read(path) else {
                    printError("IAPFuzz: cannot read \(path)")
                    exit(66)
                }
                bytes.withUnsafeBufferPointer { _ = fuzzOneInput($0.baseAddress, $0.count) }
                print("ran \(path) (\(bytes.count) bytes)")
            }
        }
    }
#endif
