import Foundation
import IAPFoundation
import JWSForge
import Testing

@Suite("TestPKI signing")
struct SigningTests {
    let pki: TestPKI

    init() throws {
        pki = try TestPKI.make()
    }

    @Test func signatureVerifiesWithLeafKey() throws {
        let payload = #"{"notificationType":"TEST","signedDate":1760000000000}"#
        let jws = try pki.sign(payload: payload)
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(!jws.contains("=") && !jws.contains("+") && !jws.contains("/"))
        #expect(Base64.decodeURL(parts[1]).map { String(decoding: $0, as: UTF8.self) } == payload)
        #expect(Base64.decodeURL(parts[2])?.count == 64)
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
        // Not with another key, and not once the payload changes.
        #expect(!OpenSSLCheck.verifyES256(jws: jws, certificate: pki.intermediateDER))
        let tampered = parts[0] + "." + Base64.encodeURL(Array(#"{"notificationType":"TEST"}"#.utf8)) + "." + parts[2]
        #expect(!OpenSSLCheck.verifyES256(jws: tampered, certificate: pki.leafDER))
    }

    @Test func headerIsAppleShaped() throws {
        let jws = try pki.sign(payload: "{}")
        let headerSegment = String(jws.split(separator: ".")[0])
        let headerText = String(decoding: Base64.decodeURL(headerSegment)!, as: UTF8.self)
        #expect(headerText.hasPrefix(#"{"alg":"ES256","x5c":[""#))
        let header = try #require(OpenSSLCheck.json(segment: headerSegment))
        #expect(header["alg"] as? String == "ES256")
        let x5c = try #require(header["x5c"] as? [String])
        #expect(x5c.count == 3)
        let decoded = x5c.map { Data(base64Encoded: $0).map { [UInt8]($0) } }
        #expect(decoded == [pki.leafDER, pki.intermediateDER, pki.rootDER])
    }

    @Test func signaturesDifferButAllVerify() throws {
        let a = try pki.sign(payload: "{}")
        let b = try pki.sign(payload: "{}")
        #expect(a != b)
        #expect(OpenSSLCheck.verifyES256(jws: a, certificate: pki.leafDER))
        #expect(OpenSSLCheck.verifyES256(jws: b, certificate: pki.leafDER))
    }

    @Test func headerOverridesAndRemovals() throws {
        let jws = try pki.sign(payload: "{}", header: ["kid": "Apple_Xcode_Key", "x5c": JSONRaw("null")])
        let header = try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[0])))
        #expect(header["kid"] as? String == "Apple_Xcode_Key")
        #expect(header["x5c"] is NSNull)
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))

        let noX5C = try pki.sign(payload: "{}", removingHeader: ["x5c"])
        let header2 = try #require(OpenSSLCheck.json(segment: String(noX5C.split(separator: ".")[0])))
        #expect(header2.keys.sorted() == ["alg"])
    }

    @Test(arguments: [0, 1, 2, 4, 5])
    func x5cWithNCertificates(count: Int) throws {
        let jws = try pki.sign(payload: "{}", x5c: pki.x5c(count: count))
        let header = try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[0])))
        let x5c = try #require(header["x5c"] as? [String])
        #expect(x5c.count == count)
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
    }

    @Test func garbageCertificateInX5C() throws {
        let jws = try pki.sign(payload: "{}", x5c: [TestPKI.garbageCertificate, pki.intermediateDER, pki.rootDER])
        let header = try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[0])))
        let x5c = try #require(header["x5c"] as? [String])
        #expect(Data(base64Encoded: x5c[0]).map { [UInt8]($0) } == TestPKI.garbageCertificate)
        #expect(OpenSSLCheck.x509(TestPKI.garbageCertificate) == nil)

        let notBase64 = try pki.sign(payload: "{}", x5cBase64: ["%%%not base64%%%", "", "AAAA"])
        let header2 = try #require(OpenSSLCheck.json(segment: String(notBase64.split(separator: ".")[0])))
        #expect(header2["x5c"] as? [String] == ["%%%not base64%%%", "", "AAAA"])
    }

    @Test func derSignatureIsDERAndNot64Bytes() throws {
        let jws = try pki.signWithDERSignature(payload: "{}")
        let signature = try #require(Base64.decodeURL(String(jws.split(separator: ".")[2])))
        #expect(signature.first == 0x30)
        #expect(signature.count >= 8 && signature.count <= 72 && signature.count != 64)
        #expect(!OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
    }

    @Test func zeroSignature() throws {
        let jws = try pki.signWithZeroSignature(payload: "{}")
        #expect(Base64.decodeURL(String(jws.split(separator: ".")[2])) == [UInt8](repeating: 0, count: 64))
        #expect(!OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
    }

    @Test(arguments: ["none", "ES384", "HS256"])
    func algHeader(alg: String) throws {
        let jws = try pki.sign(payload: "{}", alg: alg)
        let header = try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[0])))
        #expect(header["alg"] as? String == alg)
        #expect((header["x5c"] as? [String])?.count == 3)
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))

        let unsigned = try pki.sign(payload: "{}", alg: alg, emptySignature: true)
        #expect(unsigned.hasSuffix("."))
        #expect(unsigned.split(separator: ".", omittingEmptySubsequences: false).count == 3)
    }

    @Test func unrelatedKeySignatureDoesNotVerify() throws {
        let jws = try pki.signWithUnrelatedKey(payload: "{}")
        #expect(Base64.decodeURL(String(jws.split(separator: ".")[2]))?.count == 64)
        #expect(!OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
    }

    @Test func base64MatchesFoundation() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let foundation = Data(bytes).base64EncodedString()
            #expect(Base64.encodeStandard(bytes) == foundation)
            let url = foundation.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURL(bytes) == url)
            #expect(Base64.decodeURL(url) == bytes)
            #expect(Base64.decodeStandard(foundation) == bytes)
        }
        #expect(Base64.decodeURL("ab!c") == nil)
    }
}
