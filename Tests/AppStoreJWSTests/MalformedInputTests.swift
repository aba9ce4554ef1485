import Testing

@testable import AppStoreJWS

/// Hostile and broken input, built from a valid vector signed under Apple's test PKI.
@Suite("Malformed and hostile input")
struct MalformedInputTests {
    static func verifier(environments: Set<String> = ["Sandbox"]) throws -> AppStoreVerifier {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [try FixtureFiles.bytes("certs/testCA.der")], bundleId: "com.example", environments: environments))
    }

    static func parts() throws -> [String] {
        try FixtureFiles.text("conformance/ok_test_notification.jws").split(separator: ".").map(String.init)
    }

    static func b64url(_ text: String) -> String { Base64.encodeURL(Array(text.utf8)) }

    /// P-256 group order n.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            var d = Int(a[i]) - Int(b[i]) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 256 }
            out[i] = UInt8(d)
        }
        return out
    }

    static func der(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    @Test func baselineIsValid() throws {
        let p = try Self.parts()
        #expect(try Self.verifier().verify(p.joined(separator: ".")).isValid)
        // Surrounding whitespace is ignored.
        #expect(try Self.verifier().verify("\n  " + p.joined(separator: ".") + " \r\n").isValid)
    }

    @Test(arguments: ["a.b.c", "a.b.c.d", "abc", "", "   ", "..", "a..c", ".b.c", "eyJhbGciOiJFUzI1NiJ9", "a.b", "a.b.c.d.e"])
    func notJWSIsMalformed(_ text: String) throws {
        let report = try Self.verifier().verify(text)
        #expect(!report.isValid)
        #expect(report.failure?.code.isMalformed == true, "\(report.failure.map { "\($0)" } ?? "")")
    }

    @Test func segmentCountIsReported() throws {
        #expect(try Self.verifier().verify("a.b.c.d").failure?.message.contains("4 dot-separated segments") == true)
    }

    @Test func hugeInputIsRefusedCheaply() throws {
        let huge = String(repeating: "A", count: 3 << 20) + ".e30.AA"
        let report = try Self.verifier().verify(huge)
        #expect(report.failure?.code == .invalidJWTFormat)
        #expect(report.failure?.message.contains("limit") == true)
        #expect(report.failure!.message.count < 200)
    }

    @Test func invalidUTF8OrJSONIsMalformed() throws {
        let p = try Self.parts()
        let badUTF8 = Base64.encodeURL([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D])  // {"a":"\xC3("}
        for payload in [badUTF8, Self.b64url("{\"a\":1,\"a\":2}"), Self.b64url("[1,2]"), Self.b64url("{"), "!!!"] {
            let report = try Self.verifier().verify([p[0], payload, p[2]].joined(separator: "."))
            #expect(report.failure?.code.isMalformed == true, "\(report.failure.map { "\($0)" } ?? "")")
        }
        let badHeader = try Self.verifier().verify([Base64.encodeURL([0xFF, 0xFE]), p[1], p[2]].joined(separator: "."))
        #expect(badHeader.failure?.code == .invalidJSON)
    }

    @Test func wrongTypeForSignedDateIsMalformedAndNamed() throws {
        let p = try Self.parts()
        let payload = Self.b64url(
            #"{"notificationType":"TEST","signedDate":"yesterday","data":{"environment":"Sandbox","bundleId":"com.example"}}"#)
        let report = try Self.verifier().verify([p[0], payload, p[2]].joined(separator: "."))
        #expect(report.failure?.code == .invalidPayload)
        #expect(report.failure?.message.contains("signedDate") == true)
    }

    @Test func zeroAndOutOfRangeSignatures() throws {
        let p = try Self.parts()
        let verifier = try Self.verifier()
        let zero = [UInt8](repeating: 0, count: 64)
        let order = Self.order
        let cases: [([UInt8], String)] = [
            (zero, "r is zero"),
            ([UInt8](repeating: 1, count: 32) + [UInt8](repeating: 0, count: 32), "s is zero"),
            (order + [UInt8](repeating: 1, count: 32), "r is not below"),
            ([UInt8](repeating: 1, count: 32) + order, "s is not below"),
            ([UInt8](repeating: 0xFF, count: 64), "r is not below"),
            ([UInt8](repeating: 1, count: 63), "63 bytes"),
            ([], "0 bytes"),
        ]
        for (signature, reason) in cases {
            let report = verifier.verify([p[0], p[1], Base64.encodeURL(signature)].joined(separator: "."))
            #expect(report.failure?.code == .invalidSignature)
            #expect(report.failure?.message.contains(reason) == true, "\(report.failure.map { "\($0)" } ?? "")")
        }
    }

    @Test func derEncodedSignatureIsRefused() throws {
        let p = try Self.parts()
        let raw = try #require(Base64.decodeURL(Array(p[2].utf8)))
        let report = try Self.verifier().verify([p[0], p[1], Base64.encodeURL(Self.der(raw))].joined(separator: "."))
        #expect(report.failure?.code == .invalidSignature)
        #expect(report.failure?.message.contains("DER") == true)
    }

    @Test func flippedBitAndHighSVariant() throws {
        let p = try Self.parts()
        var raw = try #require(Base64.decodeURL(Array(p[2].utf8)))
        let verifier = try Self.verifier()
        // (r, n - s) is the same ECDSA signature's mirror: OpenSSL (like Apple's libraries) accepts it.
        let mirrored = Array(raw[0..<32]) + Self.subtract(Self.order, Array(raw[32..<64]))
        #expect(verifier.verify([p[0], p[1], Base64.encodeURL(mirrored)].joined(separator: ".")).isValid)
        raw[10] ^= 0x01
        #expect(verifier.verify([p[0], p[1], Base64.encodeURL(raw)].joined(separator: ".")).failure?.code == .invalidSignature)
        // Signature segment not base64url.
        #expect(verifier.verify([p[0], p[1], p[2] + "="].joined(separator: ".")).failure?.code == .invalidJWTFormat)
    }

    @Test func algorithmAndX5CShapes() throws {
        let p = try Self.parts()
        let header = try JSONParser.parse(try #require(Base64.decodeURL(Array(p[0].utf8))))
        let certs = try #require(header["x5c"]?.arrayValue)
        let verifier = try Self.verifier()
        func run(_ headerJSON: String) -> VerificationReport {
            verifier.verify([Self.b64url(headerJSON), p[1], p[2]].joined(separator: "."))
        }
        let c = certs.map { $0.serialized() }
        #expect(run(#"{"alg":"none","x5c":[\#(c[0]),\#(c[1]),\#(c[2])]}"#).failure?.code == .unsupportedAlgorithm)
        #expect(run(#"{"alg":"ES384","x5c":[\#(c[0]),\#(c[1]),\#(c[2])]}"#).failure?.code == .unsupportedAlgorithm)
        #expect(run(#"{"alg":"es256","x5c":[\#(c[0]),\#(c[1]),\#(c[2])]}"#).failure?.code == .unsupportedAlgorithm)
        #expect(run(#"{"x5c":[\#(c[0]),\#(c[1]),\#(c[2])]}"#).failure?.code == .unsupportedAlgorithm)
        #expect(run(#"{"alg":"ES256"}"#).failure?.code == .missingX5C)
        #expect(run(#"{"alg":"ES256","x5c":[]}"#).failure?.code == .missingX5C)
        #expect(run(#"{"alg":"ES256","x5c":"abc"}"#).failure?.code == .missingX5C)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0])]}"#).failure?.code == .invalidChainLength)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),\#(c[1])]}"#).failure?.code == .invalidChainLength)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),\#(c[1]),\#(c[2]),\#(c[2])]}"#).failure?.code == .invalidChainLength)
        // Garbage certificates.
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),"!!notbase64",\#(c[2])]}"#).failure?.code == .invalidCertificate)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),"AAAA",\#(c[2])]}"#).failure?.code == .invalidCertificate)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),1,\#(c[2])]}"#).failure?.code == .invalidCertificate)
        let urlSafeLeaf = c[0].replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        if urlSafeLeaf != c[0] {
            #expect(run(#"{"alg":"ES256","x5c":[\#(urlSafeLeaf),\#(c[1]),\#(c[2])]}"#).failure?.code == .invalidCertificate)
        }
        let leafText = try #require(certs[0].stringValue)
        let leafDER = try #require(Base64.decodeStandard(leafText))
        let trailing = "\"" + Base64.encodeStandard(leafDER + [0]) + "\""
        #expect(run(#"{"alg":"ES256","x5c":[\#(trailing),\#(c[1]),\#(c[2])]}"#).failure?.code == .invalidCertificate)
        // x5c[2] is never trusted by itself; order matters.
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[1]),\#(c[0]),\#(c[2])]}"#).failure?.code == .untrustedChain)
        #expect(run(#"{"alg":"ES256","x5c":[\#(c[0]),\#(c[0]),\#(c[2])]}"#).failure?.code == .untrustedChain)
        // A leaf straight under the root with the root as "intermediate" is not Apple's shape.
        let report = run(#"{"alg":"ES256","x5c":[\#(c[0]),\#(c[2]),\#(c[2])]}"#)
        #expect(report.failure?.code == .untrustedChain)
    }

    @Test func certificatesWithWrongAppleOIDs() throws {
        let p = try Self.parts()
        func pemBase64(_ file: String) throws -> String {
            let der = try TrustConfiguration.roots(fromDERorPEM: FixtureFiles.bytes("certs/" + file))
            return Base64.encodeStandard(der[0])
        }
        let header = try JSONParser.parse(try #require(Base64.decodeURL(Array(p[0].utf8))))
        let certs = try #require(header["x5c"]?.arrayValue).map { $0.serialized() }
        let verifier = try Self.verifier()
        let badLeaf = "\"\(try pemBase64("testInvalidOIDLeaf.pem"))\""
        let r1 = verifier.verify(
            [Self.b64url(#"{"alg":"ES256","x5c":[\#(badLeaf),\#(certs[1]),\#(certs[2])]}"#), p[1], p[2]].joined(separator: "."))
        #expect(r1.failure?.code == .missingLeafOID)
        let badIntermediate = "\"\(try pemBase64("testInvalidOIDIntermediate.pem"))\""
        let r2 = verifier.verify(
            [Self.b64url(#"{"alg":"ES256","x5c":[\#(certs[0]),\#(badIntermediate),\#(certs[2])]}"#), p[1], p[2]].joined(separator: "."))
        #expect(r2.failure?.code != nil)
        #expect(r2.failure?.code != .missingLeafOID)
    }

    @Test func unsignedXcodeDataStillChecksPayloadTypes() throws {
        let header = Self.b64url(#"{"alg":"ES256","kid":"Apple_Xcode_Key"}"#)
        let payload = Self.b64url(#"{"transactionId":5,"environment":"Xcode","bundleId":"com.example"}"#)
        let report = try Self.verifier(environments: ["Xcode"]).verify("\(header).\(payload).")
        #expect(report.failure?.code == .invalidPayload)
        #expect(report.failure?.message.contains("transactionId") == true)
        // The same, unsigned, is refused when Xcode is not accepted.
        let sandbox = try Self.verifier().verify("\(header).\(payload).")
        #expect(sandbox.failure?.code == .missingX5C)
    }

    @Test func messagesNeverEchoTheToken() throws {
        let jws = try FixtureFiles.text("conformance/neg_tampered_payload.jws")
        let report = try Self.verifier().verify(jws)
        #expect(report.failure?.code == .invalidSignature)
        for check in report.checks { #expect(!check.detail.contains(jws.prefix(60))) }
    }
}
