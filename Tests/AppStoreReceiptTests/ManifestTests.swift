import AppStoreJWS
import Testing

@testable import AppStoreReceipt

/// The synthetic receipts of Fixtures/generated with their test roots: every entry of
/// `manifest.json` gets its expected verdict.
///
/// The generator's "Fake WWDR CA" lacks Apple's WWDR marker 1.2.840.113635.100.6.2.1, which every
/// real Apple receipt chain carries, so these tests relax only that check (`intermediateOID: nil`);
/// ``defaultPolicyRefusesTheFakeIntermediate()`` shows the default refuses them for exactly that.
@Suite("Generated receipts (manifest)")
struct ManifestTests {
    static func manifest() throws -> JSONValue { try FixtureFiles.json("generated/manifest.json") }

    static func verify(
        _ file: String, root: String, at time: TrustConfiguration.ValidationTime = .signedDate,
        environments: Set<String> = ["Sandbox"], requireWWDR: Bool = false
    ) throws -> ReceiptReport {
        let manifest = try manifest()
        var trust = ReceiptTrust(
            roots: [try FixtureFiles.bytes("generated/\(root)")], bundleId: manifest["bundleId"]?.stringValue,
            environments: environments, validationTime: time, clock: { ms("2026-11-30T00:00:00Z") })
        if !requireWWDR { trust.intermediateOID = nil }
        return try ReceiptVerifier(trust: trust).verify(der: try FixtureFiles.bytes("generated/\(file)"))
    }

    @Test func defaultPolicyRefusesTheFakeIntermediate() throws {
        let report = try Self.verify("receipt.der", root: "receipt-root.der", requireWWDR: true)
        #expect(report.failure?.code == .missingIntermediateOID)
        #expect(report.check("leaf OID")?.status == .passed)
        let relaxed = try Self.verify("receipt.der", root: "receipt-root.der")
        #expect(relaxed.check("intermediate OID")?.status == .skipped)
    }

    @Test func validReceiptDecodesToTheManifest() throws {
        let expected = try #require(try Self.manifest()["receipt"])
        let report = try Self.verify("receipt.der", root: "receipt-root.der")
        #expect(report.isValid, "\(report.checks)")
        let receipt = try #require(report.receipt)
        #expect(receipt.receiptType == expected["receiptType"]?.stringValue)
        #expect(receipt.bundleId == expected["bundleId"]?.stringValue)
        #expect(receipt.appVersion == expected["appVersion"]?.stringValue)
        #expect(receipt.originalAppVersion == expected["originalAppVersion"]?.stringValue)
        #expect(receipt.creationDate == expected["creationDate"]?.stringValue.flatMap { Timestamp.parseISO8601($0) })
        #expect(receipt.opaqueValue.map(AppReceipt.hex) == expected["opaqueHex"]?.stringValue)
        let products = try #require(expected["inAppProductIds"]?.arrayValue).compactMap(\.stringValue)
        #expect(receipt.inApp.compactMap(\.productId) == products)
        let vip = try #require(receipt.inApp.first { $0.productId == "com.example.app.vip" })
        #expect(vip.expiresDate == expected["vipExpiresDate"]?.stringValue.flatMap { Timestamp.parseISO8601($0) })
    }

    @Test func deviceHashMatchesTheManifestsDeviceOnly() throws {
        let receipt = try #require(try Self.verify("receipt.der", root: "receipt-root.der").receipt)
        let hex = try #require(try Self.manifest()["receipt"]?["deviceGuidHex"]?.stringValue)
        #expect(hex == (try FixtureFiles.text("generated/device-guid.hex")))
        let guid = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        #expect(guid.count == 16)
        #expect(receipt.matchesDevice(guid: guid))
        var other = guid
        other[0] ^= 1
        #expect(!receipt.matchesDevice(guid: other))
    }

    @Test func expiredLeafVerifiesAtItsHistoricalTimeOnly() throws {
        let chain = try #require(try Self.manifest()["expiredChain"])
        #expect(chain["expectHistorical"]?.stringValue == "verifies")
        #expect(chain["expectFresh"]?.stringValue == "INVALID_CHAIN")
        let historical = try Self.verify("receipt-expired-historical.der", root: "receipt-expired-root.der")
        #expect(historical.isValid, "\(historical.checks)")
        #expect(historical.receipt?.creationDate == chain["historicalSignedDate"]?.int64Value)
        let fresh = try Self.verify("receipt-expired-fresh.der", root: "receipt-expired-root.der")
        #expect(fresh.receipt?.creationDate == chain["freshSignedDate"]?.int64Value)
        #expect(fresh.failure?.code == .certificateExpiredOrNotYetValid)
        // The historical one too, when asked about a fresh time.
        let asked = try Self.verify(
            "receipt-expired-historical.der", root: "receipt-expired-root.der",
            at: .fixed(try #require(chain["freshSignedDate"]?.int64Value)))
        #expect(asked.failure?.code == .certificateExpiredOrNotYetValid)
    }

    @Test func foreignChainIsRefused() throws {
        #expect(try Self.manifest()["receipt"]?["expectForeign"]?.stringValue == "INVALID_CHAIN")
        let report = try Self.verify("receipt-foreign.der", root: "receipt-root.der")
        #expect(report.failure?.code == .untrustedChain)
        #expect(report.check("chain")?.status == .failed)
        // Apple's root does not make it valid either.
        let verifier = try ReceiptVerifier(trust: ReceiptTrust(environments: ["Sandbox"]))
        #expect(verifier.verify(der: try FixtureFiles.bytes("generated/receipt-foreign.der")).failure?.code == .untrustedChain)
    }

    @Test func signerWithoutApplesOIDIsRefused() throws {
        let report = try Self.verify("receipt-no-signer-oid.der", root: "receipt-no-signer-oid-root.der")
        #expect(report.failure?.code == .missingLeafOID)
        #expect(report.check("chain")?.status == .passed)
    }

    /// Xcode-style: the payload inside one extra OCTET STRING is unwrapped once (and only once).
    @Test func doubleWrappedPayloadIsUnwrappedOnce() throws {
        let report = try Self.verify("receipt-double-wrapped.der", root: "receipt-root.der")
        #expect(report.isValid, "\(report.checks)")
        #expect(report.receipt?.appVersion == "1.2.3")
        #expect(report.receipt?.inApp.count == 2)
        #expect(report.check("payload")?.detail.contains("unwrapped") == true)
        let plain = try Self.verify("receipt.der", root: "receipt-root.der")
        #expect(report.receipt?.inApp == plain.receipt?.inApp)
    }

    @Test(arguments: [
        ("receipt-type-production.der", "Production", "Production"),
        ("receipt-type-vpp.der", "ProductionVPP", "Production"),
        ("receipt-type-vpp-sandbox.der", "ProductionVPPSandbox", "Sandbox"),
        ("receipt.der", "ProductionSandbox", "Sandbox"),
    ])
    func receiptTypesMapToEnvironments(file: String, type: String, environment: String) throws {
        let report = try Self.verify(file, root: "receipt-root.der", environments: [environment])
        #expect(report.isValid, "\(report.checks)")
        #expect(report.receipt?.receiptType == type)
        #expect(report.environment == environment)
        let other = environment == "Production" ? "Sandbox" : "Production"
        #expect(try Self.verify(file, root: "receipt-root.der", environments: [other]).failure?.code == .invalidEnvironment)
    }

    @Test func receiptWithoutTypeIsRefusedUnlessAnyEnvironmentIsAccepted() throws {
        let report = try Self.verify("receipt-no-type.der", root: "receipt-root.der")
        #expect(report.receipt?.receiptType == nil)
        #expect(report.failure?.code == .invalidEnvironment)
        #expect(try Self.verify("receipt-no-type.der", root: "receipt-root.der", environments: []).isValid)
    }
}
