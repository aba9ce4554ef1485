import AppStoreJWS
import Testing

@testable import AppStoreReceipt

/// A flipped byte anywhere in a genuine receipt (structure, payload, signature, any carried
/// certificate) is refused.
@Suite("Tampered receipts")
struct TamperTests {
    @Test(arguments: [
        ("revenuecat-sandbox-receipt.b64", "com.revenuecat.sampleapp"),
        ("receipt-sandbox-g5", "dev.bonzer.weeka.app"),
    ])
    func everySampledFlippedByteIsRefused(file: String, bundleId: String) throws {
        let verifier = try ReceiptVerifier(
            trust: ReceiptTrust(bundleId: bundleId, environments: ["Sandbox"], clock: { ms("2026-11-30T00:00:00Z") }))
        let der = try #require(ReceiptInput.der(fromBase64: try FixtureFiles.text(file)))
        #expect(verifier.verify(der: der).isValid)
        // Every 5th position from a per-file offset, plus the first and last 64 bytes: ~1,000–2,000
        // positions covering the structure, payload, every certificate and the signature.
        var positions = Set(stride(from: der.count % 5, to: der.count, by: 5))
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
