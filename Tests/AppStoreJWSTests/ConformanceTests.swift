import AppStoreJWS
import Testing

/// Every row of Fixtures/conformance/manifest.json: same accept/reject as Apple's Python library.
@Suite("Apple conformance vectors")
struct ConformanceTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let index: Int
        let file: String
        let env: String
        let bundleId: String
        let appAppleId: Int64
        let root: String
        let description: String
        let pythonResult: String

        var testDescription: String { "#\(index) \(file): \(description)" }
        var expectValid: Bool { pythonResult.hasPrefix("OK") }
        var nestedExpected: Int { pythonResult.components(separatedBy: "verified OK").count - 1 }
    }

    static let rows: [Row] = {
        guard let manifest = try? JSONParser.parse(FixtureFiles.bytes("conformance/manifest.json")),
            let items = manifest.arrayValue
        else { return [] }
        return items.enumerated().map { index, item in
            Row(
                index: index, file: item["file"]?.stringValue ?? "", env: item["env"]?.stringValue ?? "",
                bundleId: item["bundleId"]?.stringValue ?? "", appAppleId: item["appAppleId"]?.int64Value ?? 0,
                root: item["root"]?.stringValue ?? "", description: item["description"]?.stringValue ?? "",
                pythonResult: item["python_lib_result"]?.stringValue ?? "")
        }
    }()

    static func testCA() throws -> [UInt8] { try FixtureFiles.bytes("certs/testCA.der") }

    @Test func manifestLoaded() {
        #expect(Self.rows.count == 28)
        #expect(Self.rows.filter(\.expectValid).count == 12)
    }

    @Test(arguments: rows)
    func sameVerdictAsApple(_ row: Row) throws {
        let roots = row.root == "testCA" ? [try Self.testCA()] : [AppleRootCAG3.der]
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: roots, bundleId: row.bundleId, appAppleId: row.appAppleId, environments: [row.env]))
        let report = verifier.verify(try FixtureFiles.text("conformance/" + row.file))
        #expect(report.isValid == row.expectValid, "\(report.failure.map { "\($0)" } ?? "valid") vs \(row.pythonResult)")
        if row.expectValid {
            #expect(report.nested.count == row.nestedExpected)
            #expect(report.nested.allSatisfy { $0.report.isValid })
        } else {
            let code = try #require(report.failure?.code)
            #expect(!code.isMalformed)
            if row.pythonResult.hasPrefix("INVALID_APP_IDENTIFIER") { #expect(code == .invalidAppIdentifier) }
            if row.pythonResult.hasPrefix("INVALID_ENVIRONMENT") { #expect(code == .invalidEnvironment) }
            if row.pythonResult.hasPrefix("INVALID_CHAIN_LENGTH") { #expect(code == .invalidChainLength) }
            if row.pythonResult.contains("InvalidSignatureError") { #expect(code == .invalidSignature) }
            if row.pythonResult.contains("Algorithm was not ES256") { #expect(code == .unsupportedAlgorithm) }
            if row.pythonResult.contains("x5c claim was empty") { #expect(code == .missingX5C) }
            if row.pythonResult.contains("6.11.1") { #expect(code == .missingLeafOID) }
            if row.pythonResult.contains("6.2.1") { #expect(code == .missingIntermediateOID) }
            if row.pythonResult.contains("unable to get local issuer") { #expect(code == .untrustedChain) }
        }
    }

    @Test func signedBeforeCertificateIsNotYetValid() throws {
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"]))
        let report = verifier.verify(try FixtureFiles.text("conformance/neg_signed_before_cert_valid.jws"))
        #expect(report.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(report.check("chain")?.status == .passed)
        #expect(report.check("validity")?.detail.contains("at signedDate 2020-09-13") == true)
    }

    @Test func signedAfterExpiryIsRefusedAsFutureNowAndAsExpiredLater() throws {
        let jws = try FixtureFiles.text("conformance/neg_signed_after_cert_expiry.jws")
        let today = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"]))
        #expect(today.verify(jws).failure?.code == .futureSignedDate)
        // With the clock in 2034 the signedDate (2033-05-18) is in the past: the leaf (until 2033-01-01) has expired.
        let later = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"],
                clock: { ms("2034-01-01T00:00:00Z") }))
        let report = later.verify(jws)
        #expect(report.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(report.failure?.message.contains("expired") == true)
    }

    @Test func noSignedDateFallsBackToNow() throws {
        let now = ms("2026-03-01T12:00:00Z")
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"], clock: { now }))
        let report = verifier.verify(try FixtureFiles.text("conformance/ok_no_signed_date.jws"))
        #expect(report.isValid)
        #expect(report.validationTime == now)
        #expect(report.check("validity")?.detail.contains("payload has no signedDate") == true)
    }

    @Test func externalPurchaseTokenEnvironmentIsDerived() throws {
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"]))
        let report = verifier.verify(try FixtureFiles.text("conformance/notification_external_purchase_token_sandbox.jws"))
        #expect(report.isValid)
        #expect(report.environment == "Sandbox")
        #expect(report.notification?.externalPurchaseToken?.environment == "Sandbox")
    }

    @Test func unknownNotificationTypeIsKeptRaw() throws {
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"]))
        let report = verifier.verify(try FixtureFiles.text("conformance/notification_unknown_type_sandbox.jws"))
        #expect(report.isValid)
        #expect(report.notification?.notificationType?.rawValue == "SOME_FUTURE_TYPE")
        #expect(report.notification?.subtype?.rawValue == "SOME_FUTURE_SUBTYPE")
    }

    @Test func fullTransactionAndRenewalFieldSets() throws {
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [try Self.testCA()], bundleId: "com.example", environments: ["Sandbox"]))
        let tx = try #require(verifier.verify(try FixtureFiles.text("conformance/transaction_sandbox.jws")).transaction)
        #expect(tx.price == 10990)
        #expect(tx.commitmentInfo?.totalBillingPeriods == 12)
        #expect(tx.advancedCommerceInfo?["taxRate"] == .string("0.15"))
        #expect(tx.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        let renewal = try #require(verifier.verify(try FixtureFiles.text("conformance/renewal_sandbox.jws")).renewalInfo)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 9990)
        #expect(renewal.renewalBillingPlanType == "MONTHLY")
    }
}
