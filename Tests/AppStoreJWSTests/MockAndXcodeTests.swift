import AppStoreJWS
import Testing

/// Apple's library test vectors (Fixtures/mock_signed_data, Fixtures/xcode), as their README says.
@Suite("Apple library mock and Xcode vectors")
struct MockAndXcodeTests {
    static func verifier(
        bundleId: String = "com.example", appAppleId: Int64? = nil, environments: Set<String> = ["Sandbox"]
    ) throws -> AppStoreVerifier {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [try FixtureFiles.bytes("certs/testCA.der")], bundleId: bundleId, appAppleId: appAppleId,
                environments: environments))
    }

    @Test func testNotification() throws {
        let jws = try FixtureFiles.text("mock_signed_data/testNotification")
        let ok = try Self.verifier().verify(jws)
        #expect(ok.isValid)
        #expect(ok.kind == .notification)
        #expect(ok.notification?.notificationType?.rawValue == "TEST")
        #expect(try Self.verifier(appAppleId: 1234, environments: ["Production"]).verify(jws).failure?.code == .invalidEnvironment)
        // Production with appAppleId 1235: the bundle id matches, the payload is Sandbox → environment.
        #expect(try Self.verifier(appAppleId: 1235, environments: ["Production"]).verify(jws).failure?.code == .invalidEnvironment)
    }

    @Test func wrongBundleId() throws {
        let report = try Self.verifier().verify(try FixtureFiles.text("mock_signed_data/wrongBundleId"))
        #expect(report.failure?.code == .invalidAppIdentifier)
        #expect(report.failure?.message.contains("com.example.wrong") == true)
    }

    @Test func missingX5C() throws {
        let report = try Self.verifier().verify(try FixtureFiles.text("mock_signed_data/missingX5CHeaderClaim"))
        #expect(report.failure?.code == .missingX5C)
        #expect(report.failure?.code.isMalformed == false)
    }

    @Test func transactionInfo() throws {
        let jws = try FixtureFiles.text("mock_signed_data/transactionInfo")
        let report = try Self.verifier().verify(jws, as: .transaction)
        #expect(report.isValid)
        #expect(report.kind == .transaction)
        #expect(report.transaction?.bundleId == "com.example")
        #expect(try Self.verifier(bundleId: "com.example.x").verify(jws, as: .transaction).failure?.code == .invalidAppIdentifier)
        // Undetectable kind without a hint: still signature-checked and bundle-checked.
        #expect(try Self.verifier(bundleId: "com.example.x").verify(jws).failure?.code == .invalidAppIdentifier)
    }

    @Test func renewalInfo() throws {
        let jws = try FixtureFiles.text("mock_signed_data/renewalInfo")
        let report = try Self.verifier(bundleId: "com.other").verify(jws, as: .renewalInfo)
        #expect(report.isValid)
        #expect(report.check("bundle id")?.status == .skipped)
        #expect(
            try Self.verifier(appAppleId: 1, environments: ["Production"]).verify(jws, as: .renewalInfo).failure?.code
                == .invalidEnvironment)
        #expect(try Self.verifier().verify(jws, as: .transaction).isValid == false)  // no bundle id in a "transaction"
    }

    @Test func legacyReceiptIsMalformed() throws {
        let report = try Self.verifier().verify(try FixtureFiles.text("mock_signed_data/legacyTransaction"))
        #expect(report.failure?.code == .invalidJWTFormat)
        #expect(report.failure?.code.isMalformed == true)
    }

    static let xcodeBundle = "com.example.naturelab.backyardbirds.example"

    @Test(arguments: [
        ("xcode-signed-transaction", PayloadKind.transaction),
        ("xcode-signed-renewal-info", .renewalInfo),
        ("xcode-signed-app-transaction", .appTransaction),
    ])
    func xcodeDataAcceptedOnlyWhenAskedFor(_ file: String, _ kind: PayloadKind) throws {
        let jws = try FixtureFiles.text("xcode/" + file)
        let accepted = try Self.verifier(bundleId: Self.xcodeBundle, environments: ["Xcode"]).verify(jws)
        #expect(accepted.isValid, "\(accepted.failure.map { "\($0)" } ?? "")")
        #expect(accepted.kind == kind)
        #expect(accepted.check("signature")?.status == .skipped)
        #expect(accepted.check("chain")?.status == .skipped)
        #expect(!accepted.warnings.isEmpty)
        // Not accepted by default: the one self-signed certificate is refused.
        let refused = try Self.verifier(bundleId: Self.xcodeBundle, appAppleId: 1, environments: ["Production", "Sandbox"]).verify(jws)
        #expect(refused.failure?.code == .invalidChainLength)
        // Wrong bundle id still fails in Xcode mode (renewal info carries none).
        let otherBundle = try Self.verifier(bundleId: "com.example", environments: ["Xcode"]).verify(jws)
        #expect(otherBundle.failure?.code == (kind == .renewalInfo ? nil : .invalidAppIdentifier))
    }

    @Test func xcodeFractionalDates() throws {
        let jws = try FixtureFiles.text("xcode/xcode-signed-transaction")
        let report = try Self.verifier(bundleId: Self.xcodeBundle, environments: ["Xcode"]).verify(jws)
        let tx = try #require(report.transaction)
        #expect(tx.purchaseDate == 1697679936049)
        #expect(tx.signedDate == 1697679936056)
        #expect(tx.environment == "Xcode")
        let app = try Self.verifier(bundleId: Self.xcodeBundle, environments: ["Xcode"]).verify(
            try FixtureFiles.text("xcode/xcode-signed-app-transaction"))
        #expect(app.appTransaction?.receiptCreationDate == 1697680122257)
        #expect(app.appTransaction?.originalPurchaseDate == -62135769600000)
        #expect(app.environment == "Xcode")
    }

    @Test func xcodeReceiptsAreNotJWS() throws {
        for file in ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"] {
            let report = try Self.verifier(bundleId: Self.xcodeBundle, environments: ["Xcode"]).verify(
                try FixtureFiles.text("xcode/" + file))
            #expect(report.failure?.code.isMalformed == true)
        }
    }
}
