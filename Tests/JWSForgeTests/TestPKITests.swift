import Foundation
import IAPFoundation
import JWSForge
import Testing

@Suite("TestPKI chain")
struct TestPKITests {
    static let leafOID = "1.2.840.113635.100.6.11.1"
    static let intermediateOID = "1.2.840.113635.100.6.2.1"

    @Test(arguments: [Curve.p256, Curve.p384])
    func chainVerifiesStrictlyWithOpenSSL(caCurve: Curve) throws {
        var options = PKIOptions()
        options.rootCurve = caCurve
        options.intermediateCurve = caCurve
        let pki = try TestPKI.make(options)
        #expect(OpenSSLCheck.verifyChain(leaf: pki.leafDER, intermediate: pki.intermediateDER, root: pki.rootDER) == 0)
        #expect(OpenSSLCheck.keyInfo(pki.rootDER).bits == (caCurve == .p256 ? 256 : 384))
        // Issued by the root, not by itself: the intermediate alone is not a trust anchor for the leaf's issuer.
        #expect(OpenSSLCheck.verifyChain(leaf: pki.leafDER, intermediate: pki.rootDER, root: pki.rootDER) != 0)
    }

    @Test func defaultChainCarriesAppleMarkerOIDsAsNonCriticalNull() throws {
        let pki = try TestPKI.make()
        let leaf = OpenSSLCheck.hasExtension(pki.leafDER, oid: Self.leafOID)
        #expect(leaf.present && !leaf.critical && leaf.value == [0x05, 0x00])
        let intermediate = OpenSSLCheck.hasExtension(pki.intermediateDER, oid: Self.intermediateOID)
        #expect(intermediate.present && !intermediate.critical && intermediate.value == [0x05, 0x00])
        #expect(!OpenSSLCheck.hasExtension(pki.leafDER, oid: Self.intermediateOID).present)
        #expect(!OpenSSLCheck.hasExtension(pki.rootDER, oid: Self.leafOID).present)
    }

    @Test func leafIsP256ByDefault() throws {
        let pki = try TestPKI.make()
        #expect(OpenSSLCheck.keyInfo(pki.leafDER).bits == 256)
        #expect(OpenSSLCheck.keyInfo(pki.leafDER).curve == "prime256v1")
        #expect(pki.x5cBase64 == [pki.leafDER, pki.intermediateDER, pki.rootDER].map { Data($0).base64EncodedString() })
    }

    @Test func omittingOIDsRemovesThem() throws {
        var options = PKIOptions()
        options.leafOID = false
        options.intermediateOID = false
        let pki = try TestPKI.make(options)
        #expect(!OpenSSLCheck.hasExtension(pki.leafDER, oid: Self.leafOID).present)
        #expect(!OpenSSLCheck.hasExtension(pki.intermediateDER, oid: Self.intermediateOID).present)
        // The chain itself stays valid: only Apple's policy must reject it.
        #expect(OpenSSLCheck.verifyChain(leaf: pki.leafDER, intermediate: pki.intermediateDER, root: pki.rootDER) == 0)
    }

    @Test func leafValidityWindowIsHonoured() throws {
        var options = PKIOptions()
        options.leafNotBefore = 1_735_689_600_000  // 2025-01-01
        options.leafNotAfter = 1_738_368_000_000  // 2025-02-01
        let pki = try TestPKI.make(options)
        let chain = (leaf: pki.leafDER, intermediate: pki.intermediateDER, root: pki.rootDER)
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: chain.leaf, intermediate: chain.intermediate, root: chain.root,
                atSeconds: 1_736_000_000) == 0)
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: chain.leaf, intermediate: chain.intermediate, root: chain.root,
                atSeconds: 1_740_000_000) == 10)  // X509_V_ERR_CERT_HAS_EXPIRED
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: chain.leaf, intermediate: chain.intermediate, root: chain.root,
                atSeconds: 1_730_000_000) == 9)  // X509_V_ERR_CERT_NOT_YET_VALID
    }

    @Test func p384LeafOption() throws {
        var options = PKIOptions()
        options.leafCurve = .p384
        let pki = try TestPKI.make(options)
        #expect(OpenSSLCheck.keyInfo(pki.leafDER).bits == 384)
        let jws = try pki.sign(payload: "{}")
        let signature = Base64.decodeURL(String(jws.split(separator: ".")[2]))
        #expect(signature?.count == 96)
    }

    @Test func unrelatedRootDoesNotVerifyTheChain() throws {
        let pki = try TestPKI.make()
        #expect(pki.unrelatedRootDER != pki.rootDER)
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: pki.leafDER, intermediate: pki.intermediateDER,
                root: pki.unrelatedRootDER) != 0)
        let other = try TestPKI.make()
        #expect(
            OpenSSLCheck.verifyChain(leaf: pki.leafDER, intermediate: pki.intermediateDER, root: other.rootDER) != 0)
    }

    @Test func leafSignedByUnrelatedKeyFailsVerification() throws {
        var options = PKIOptions()
        options.leafSignedByUnrelatedKey = true
        let pki = try TestPKI.make(options)
        #expect(
            OpenSSLCheck.verifyChain(leaf: pki.leafDER, intermediate: pki.intermediateDER, root: pki.rootDER)
                == 7)  // X509_V_ERR_CERT_SIGNATURE_FAILURE
    }

    @Test func saveAndLoadRoundTrip() throws {
        let pki = try TestPKI.make()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jwsforge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try pki.save(to: dir.path)
        for name in ["root.pem", "intermediate.pem", "leaf.pem", "leaf.key"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path))
        }
        let loaded = try TestPKI.load(directory: dir.path)
        #expect(loaded.rootDER == pki.rootDER)
        #expect(loaded.intermediateDER == pki.intermediateDER)
        #expect(loaded.leafDER == pki.leafDER)
        let jws = try loaded.sign(payload: #"{"a":1}"#)
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
    }

    @Test func loadRefusesAMismatchedKey() throws {
        let a = try TestPKI.make()
        let b = try TestPKI.make()
        #expect(throws: ForgeError.self) {
            try TestPKI.load(
                rootPEM: a.rootPEM, intermediatePEM: a.intermediatePEM, leafPEM: a.leafPEM,
                leafKeyPEM: try b.leafPrivateKeyPEM())
        }
    }
}
