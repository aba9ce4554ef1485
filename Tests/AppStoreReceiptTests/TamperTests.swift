import AppStoreJWS
import Testing

@testable import AppStoreReceipt

/// A flipped byte anywhere in a genuine receipt (structure, payload, signature, any carried
/// certificate) is refused.
@Suite("Tampered receipts")
struct TamperTests {
    @Test(
        arguments: [
            ("revenuecat-sandbox-receipt.b64", "com.revenuecat.sampleapp", nil),
            ("receipt-sandbox-g5", "dev.bonzer.weeka.app", nil),
            // BER (indefinite lengths), self-signed, trusted explicitly.
            ("receipt-xcode-with-purchases", "com.example.naturelab.backyardbirds.example", "StoreKitTestCertificate.cer"),
        ] as [(String, String, String?)])
    func everySampledFlippedByteIsRefused(file: String, bundleId: String, root: String?) throws {
        let roots = try root.map { [try FixtureFiles.bytes($0)] } ?? [AppleIncRootCA.der]
        let verifier = try ReceiptVerifier(
            trust: ReceiptTrust(
                roots: roots, bundleId: bundleId, environments: ["Sandbox", "Xcode"], clock: { ms("2026-11-30T00:00:00Z") }))
        let der = try #require(ReceiptInput.der(fromBase64: try FixtureFiles.text(file)))
        #expect(verifier.verify(der: der).isValid)
        // Every 5th position from a per-file offset, plus the first and last 64 bytes: ~1,000–2,000
        // positions covering the structure, payload, every certificate and the signature.
        // The Xcode receipt (small, quick to verify) at every position.
        var positions = Set(stride(from: der.count % 5, to: der.count, by: root == nil ? 5 : 1))
        positions.formUnion(0..<64)
        positions.formUnion((der.count - 64)..<der.count)
        var accepted: [Int] = []
        for position in positions.sorted() {
            var tampered = der
            tampered[position] ^= 0x01
            if verifier.verify(der: tampered).isValid { accepted.append(position) }
        }
        #expect(accepted.isEmpty, "flipped bytes accepted at \(accepted.prefix(20))")
    }
}
