// libFuzzer entry point over everything iapctl reads from the internet before it touches the
// database: input framing (`WebhookBody`), the strict JSON parser, base64, JWS parsing, the
// X.509/ES256 chain checks and payload decoding, and StoreKit 1 receipts (PKCS#7 container and
// the strict DER payload decoder), and the ledger's legacy LZ decoder. Built by `scripts/fuzz` together with the
// sources of Sources/AppStoreJWS, Sources/AppStoreReceipt and Sources/StoreSQL/LegacyLedgerFormat.swift into one module (so internal API is visible),
// with `swiftc -sanitize=fuzzer,address`. Not part of the package.
//
// The first input byte picks what the rest of the input is (see `Mode`); seeds in
// Fuzz/corpus carry that byte. Besides "no crash, no hang, no sanitizer report", every input
// is checked against invariants that would mean a wrong verdict (see `check`).

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
    /// The ledger's legacy LZ decoder (Sources/StoreSQL/LegacyLedgerFormat.swift, rows written
    /// before issue 25): two bytes of output length, then a stream, decoded against a fixed preset
    /// dictionary.
    case lz = 6
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

/// Stops the run: libFuzzer records the input as a crash.
func invariant(_ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String) {
    if !condition() {
        fputs("INVARIANT VIOLATED: \(what())\n", stderr)
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
        for (name, nested) in first.nested {
            invariant(nested.failure == nil, "accepted with a failing nested \(name)")
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
    let text = String(decoding: bytes, as: UTF8.self)
    let world = FuzzWorld.shared
    for item in WebhookBody.items(in: text).prefix(8) {
        guard case .success(let token) = item.result else { continue }
        check(token, world.strict)
        check(token, world.xcode)
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
    if let ms = ISO8601Millis.parse(text) {
        invariant(ISO8601Millis.parse(ISO8601Millis.format(ms)) == ms, "ISO-8601 round trip of \(ms)")
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

/// A preset dictionary in the spirit of the ledger's (App Store keys).
let fuzzLZDictionary = Array(
    #"{"notificationType":"DID_RENEW","subtype":"","data":{"signedTransactionInfo":"{"transactionId":"","price":"#.utf8)

func fuzzLZ(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    // Hostile streams: refused, or exactly `count` bytes (the ledger's CRC catches a wrong result).
    // (Decode only: new rows are zstd; the compressor is gone with issue 25.)
    let count = Int(bytes[0]) | Int(bytes[1]) << 8
    for dictionary in [fuzzLZDictionary, []] {
        if let out = LegacyLedgerFormat.decompress(bytes[2...], dictionary: dictionary, count: count) {
            invariant(out.count == count, "LZ output of the wrong length")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch FuzzMode(rawValue: data[0] % 7)! {
    case .framing: fuzzFraming(bytes)
    case .json: fuzzJSON(bytes)
    case .payload: fuzzPayload(bytes)
    case .header: fuzzHeader(bytes)
    case .encodings: fuzzEncodings(bytes)
    case .receipt: fuzzReceipt(bytes)
    case .lz: fuzzLZ(bytes)
    }
    return 0
}
