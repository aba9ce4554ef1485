import AppStoreJWS
import Testing

@testable import AppStoreReceipt

/// Genuine Apple-signed sandbox receipts (Fixtures/README.md): decoded against Apple's own
/// verifyReceipt answer, verified at their creation date, refused at a later date.
@Suite("Real Apple receipts")
struct RealReceiptTests {
    static let today = ms("2026-11-30T00:00:00Z")

    static func verifier(
        bundleId: String?, at time: TrustConfiguration.ValidationTime = .signedDate, roots: [[UInt8]] = [AppleIncRootCA.der],
        environments: Set<String> = ["Sandbox"]
    ) throws -> ReceiptVerifier {
        try ReceiptVerifier(
            trust: ReceiptTrust(roots: roots, bundleId: bundleId, environments: environments, validationTime: time, clock: { today }))
    }

    @Test func embeddedRootIsApplesRootPinnedBySHA256() throws {
        let certificate = try #require(X509Certificate(der: AppleIncRootCA.der))
        #expect(certificate.sha256Fingerprint == AppleIncRootCA.sha256Fingerprint)
        #expect(
            AppleIncRootCA.sha256Fingerprint
                == "B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24")
        #expect(certificate.subjectName == "Apple Root CA")
        #expect(try FixtureFiles.bytes("AppleIncRootCertificate.cer") == AppleIncRootCA.der)
    }

    @Test func revenueCatReceiptDecodesLikeApplesVerifyReceipt() throws {
        let report = try Self.verifier(bundleId: "com.revenuecat.sampleapp")
            .verify(base64: try FixtureFiles.text("revenuecat-sandbox-receipt.b64"))
        #expect(report.isValid, "\(report.checks)")
        let receipt = try #require(report.receipt)
        let oracle = try FixtureFiles.json("revenuecat-sandbox-receipt.verifyReceipt.json")
        let expected = try #require(oracle["receipt"])
        #expect(receipt.receiptType == expected["receipt_type"]?.stringValue)
        #expect(receipt.bundleId == expected["bundle_id"]?.stringValue)
        #expect(receipt.appVersion == expected["application_version"]?.stringValue)
        #expect(receipt.originalAppVersion == expected["original_application_version"]?.stringValue)
        #expect(receipt.creationDate.map(String.init) == expected["receipt_creation_date_ms"]?.stringValue)
        let entries = try #require(expected["in_app"]?.arrayValue)
        try #require(receipt.inApp.count == entries.count)
        #expect(entries.count == 9)
        for (decoded, apple) in zip(receipt.inApp, entries) {
            #expect(decoded.quantity.map(String.init) == apple["quantity"]?.stringValue)
            #expect(decoded.productId == apple["product_id"]?.stringValue)
            #expect(decoded.transactionId == apple["transaction_id"]?.stringValue)
            #expect(decoded.originalTransactionId == apple["original_transaction_id"]?.stringValue)
            #expect(decoded.purchaseDate.map(String.init) == apple["purchase_date_ms"]?.stringValue)
            #expect(decoded.originalPurchaseDate.map(String.init) == apple["original_purchase_date_ms"]?.stringValue)
            #expect(decoded.expiresDate.map(String.init) == apple["expires_date_ms"]?.stringValue)
            #expect(decoded.cancellationDate.map(String.init) == apple["cancellation_date_ms"]?.stringValue)
            #expect(decoded.webOrderLineItemId.map(String.init) == apple["web_order_line_item_id"]?.stringValue)
            #expect(decoded.isTrialPeriod.map(String.init) == apple["is_trial_period"]?.stringValue)
            #expect(decoded.isInIntroOfferPeriod.map(String.init) == apple["is_in_intro_offer_period"]?.stringValue)
        }
        // The oracle's own counts, so a silently empty comparison cannot pass.
        #expect(
            receipt.inApp.filter { $0.isTrialPeriod == true }.count == entries.filter { $0["is_trial_period"]?.stringValue == "true" }.count
        )
    }

    @Test(arguments: [
        ("revenuecat-sandbox-receipt.b64", "com.revenuecat.sampleapp", "2020-07-22T17:39:08Z"),
        ("receipt-sandbox-g5", "dev.bonzer.weeka.app", "2025-12-26T18:39:47Z"),
    ])
    func verifiesAtCreationDateAndIsRefusedToday(file: String, bundleId: String, created: String) throws {
        let text = try FixtureFiles.text(file)
        let atCreation = try Self.verifier(bundleId: bundleId).verify(base64: text)
        #expect(atCreation.isValid, "\(atCreation.checks)")
        #expect(atCreation.receipt?.creationDate == ms(created))
        #expect(atCreation.validationTime == ms(created))
        #expect(atCreation.check("leaf OID")?.status == .passed)
        #expect(atCreation.check("intermediate OID")?.status == .passed)
        #expect(atCreation.environment == "Sandbox")

        let now = try Self.verifier(bundleId: bundleId, at: .now).verify(base64: text)
        #expect(now.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(now.check("validity")?.status == .failed)
        let fixed = try Self.verifier(bundleId: bundleId, at: .fixed(Self.today)).verify(base64: text)
        #expect(fixed.failure?.code == .certificateExpiredOrNotYetValid)
    }

    @Test func g5ReceiptDecodes() throws {
        let report = try Self.verifier(bundleId: "dev.bonzer.weeka.app").verify(base64: try FixtureFiles.text("receipt-sandbox-g5"))
        let receipt = try #require(report.receipt)
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.inApp.count == 2)
        #expect(Set(receipt.inApp.compactMap(\.originalTransactionId)).count == 1)
        #expect(receipt.inApp.allSatisfy { $0.expiresDate != nil && $0.purchaseDate! < $0.expiresDate! })
    }

    @Test func wrongBundleIdAndEnvironmentAreNamed() throws {
        let text = try FixtureFiles.text("receipt-sandbox-g5")
        let wrongBundle = try Self.verifier(bundleId: "com.other.app").verify(base64: text)
        #expect(wrongBundle.failure?.code == .invalidAppIdentifier)
        #expect(wrongBundle.check("bundle id")?.status == .failed)
        let production = try Self.verifier(bundleId: "dev.bonzer.weeka.app", environments: ["Production"]).verify(base64: text)
        #expect(production.failure?.code == .invalidEnvironment)
        #expect(production.failure?.message.contains("ProductionSandbox") == true)
    }

    @Test func foreignRootRefusesApplesReceipts() throws {
        let foreign = try FixtureFiles.bytes("StoreKitTestCertificate.cer")
        let report = try Self.verifier(bundleId: nil, roots: [foreign]).verify(base64: try FixtureFiles.text("receipt-sandbox-g5"))
        #expect(report.failure?.code == .untrustedChain)
    }

    @Test func xcodeReceiptOnlyWithItsCertificateTrustedExplicitly() throws {
        let text = try FixtureFiles.text("receipt-xcode-with-purchases")
        let apple = try Self.verifier(bundleId: nil, environments: []).verify(base64: text)
        #expect(apple.failure?.code == .untrustedChain)
        let certificate = try FixtureFiles.bytes("StoreKitTestCertificate.cer")
        let trusted = try Self.verifier(bundleId: nil, roots: [certificate], environments: []).verify(base64: text)
        #expect(trusted.isValid, "\(trusted.checks)")
        #expect(trusted.isSelfSigned)
        #expect(!trusted.warnings.isEmpty)
        #expect(trusted.receipt?.inApp.isEmpty == false)
    }
}
