import Foundation
import Testing

@testable import AppStoreJWS

@Suite("Trust configuration and roots")
struct ConfigurationTests {
    @Test func builtInRootIsAppleRootCAG3() throws {
        let root = try #require(X509Certificate(der: AppleRootCAG3.der))
        #expect(root.sha256Fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
        #expect(root.sha256Fingerprint == AppleRootCAG3.sha256Fingerprint)
        #expect(root.subjectName == "Apple Root CA - G3")
        #expect(AppleRootCAG3.der == (try FixtureFiles.bytes("AppleRootCA-G3.cer")))
        #expect(TrustConfiguration().roots == [AppleRootCAG3.der])
    }

    @Test func productionNeedsAppAppleId() throws {
        #expect(throws: TrustConfigurationError.missingAppAppleId) { try AppStoreVerifier(configuration: TrustConfiguration()) }
        #expect(throws: TrustConfigurationError.missingAppAppleId) {
            try AppStoreVerifier(configuration: TrustConfiguration(environments: ["Sandbox", "Production"]))
        }
        #expect(throws: TrustConfigurationError.missingAppAppleId) {
            try AppStoreVerifier(configuration: TrustConfiguration(environments: []))
        }
        _ = try AppStoreVerifier(configuration: TrustConfiguration(appAppleId: 1))
        _ = try AppStoreVerifier(configuration: TrustConfiguration(environments: ["Sandbox"]))
    }

    @Test func rootsMustBeCertificates() {
        #expect(throws: TrustConfigurationError.noRoots) {
            try AppStoreVerifier(configuration: TrustConfiguration(roots: [], environments: ["Sandbox"]))
        }
        #expect(throws: TrustConfigurationError.self) {
            try AppStoreVerifier(configuration: TrustConfiguration(roots: [[0x30, 0x03, 0x02, 0x01, 0x00]], environments: ["Sandbox"]))
        }
    }

    @Test func rootsFromDERAndPEM() throws {
        let der = try FixtureFiles.bytes("certs/testCA.der")
        #expect(try TrustConfiguration.roots(fromDERorPEM: der) == [der])
        // The PEM file carries a text dump before the block.
        #expect(try TrustConfiguration.roots(fromDERorPEM: FixtureFiles.bytes("certs/testCA.pem")) == [der])
        let two = try FixtureFiles.bytes("certs/testCA.pem") + Array("\n".utf8) + FixtureFiles.bytes("certs/testLeaf.pem")
        #expect(try TrustConfiguration.roots(fromDERorPEM: two).count == 2)
        #expect(throws: TrustConfigurationError.self) { try TrustConfiguration.roots(fromDERorPEM: Array("hello".utf8)) }
        #expect(throws: TrustConfigurationError.self) {
            try TrustConfiguration.roots(fromDERorPEM: Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
        }
    }

    @Test func severalRootsAnyMayAnchor() throws {
        let jws = try FixtureFiles.text("conformance/ok_test_notification.jws")
        let both = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [AppleRootCAG3.der, try FixtureFiles.bytes("certs/testCA.der")], bundleId: "com.example",
                environments: ["Sandbox"]))
        #expect(both.verify(jws).isValid)
        let appleOnly = try AppStoreVerifier(configuration: TrustConfiguration(bundleId: "com.example", environments: ["Sandbox"]))
        #expect(appleOnly.verify(jws).failure?.code == .untrustedChain)
    }

    @Test func intermediateAsOnlyAnchorIsNotEnough() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [try FixtureFiles.bytes("AppleWWDRCAG6.cer")], bundleId: "com.loki-project.loki-messenger",
                environments: ["Sandbox"]))
        #expect(verifier.verify(jws).failure?.code == .untrustedChain)
    }

    @Test func futureSignedDateRefused() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")  // signed 2025-10-01T07:08:38Z
        func verifier(clock: Int64) throws -> AppStoreVerifier {
            try AppStoreVerifier(
                configuration: TrustConfiguration(
                    bundleId: "com.loki-project.loki-messenger", environments: ["Sandbox"], clock: { clock }))
        }
        let early = try verifier(clock: ms("2025-10-01T07:00:00Z")).verify(jws)
        #expect(early.failure?.code == .futureSignedDate)
        #expect(early.failure?.message.contains("2025-10-01T07:08:38.835Z") == true)
        #expect(try verifier(clock: ms("2025-10-01T07:04:00Z")).verify(jws).isValid)  // within 5 minutes
    }
}
