import Foundation
import Testing

@testable import AppStoreJWS

/// What the trust options' texts become: a validation time, root certificates read from files, and
/// a failed chain in a person's words.
@Suite("Trust inputs")
struct TrustInputsTests {
    typealias ValidationTime = TrustConfiguration.ValidationTime

    @Test func validationTimeWords() throws {
        let now: Int64 = 1_757_035_472_000
        for word in ["signed", "SIGNED", "signeddate", "signedDate", "signed-date"] {
            #expect(try ValidationTime.parse(word, now: now) == .signedDate, "\(word)")
        }
        #expect(try ValidationTime.parse("now", now: now) == .now)
        #expect(try ValidationTime.parse("Now", now: now) == .now)
        #expect(try ValidationTime.parse("1757035472000", now: 0) == .fixed(1_757_035_472_000))
        #expect(try ValidationTime.parse("2025-09-05T09:24:32+08:00", now: 0) == .fixed(1_757_035_472_000))
        #expect(try ValidationTime.parse("2d", now: now) == .fixed(now - 2 * 86_400_000))
        #expect(try ValidationTime.parse("36h", now: now) == .fixed(now - 36 * 3_600_000))
    }

    @Test func aValidationTimeThatIsNoneOfThemCarriesItsText() {
        for text in ["yesterday", "2025-09-05T01:24:32", "", "signed date"] {
            #expect(throws: ValidationTimeError(text: text), "\(text)") { try ValidationTime.parse(text, now: 0) }
        }
    }

    /// A scratch folder removed when the test ends.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("iapctl-roots-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test func rootFilesDERAndPEM() throws {
        let folder = try Folder()
        let der = try FixtureFiles.bytes("certs/testCA.der")
        #expect(try TrustConfiguration.roots(fromFile: folder.write("ca.der", der)) == [der])
        #expect(try TrustConfiguration.roots(fromFile: folder.write("ca.pem", FixtureFiles.bytes("certs/testCA.pem"))) == [der])
        let two = try FixtureFiles.bytes("certs/testCA.pem") + Array("\n".utf8) + FixtureFiles.bytes("certs/testLeaf.pem")
        #expect(try TrustConfiguration.roots(fromFile: folder.write("two.pem", two)).count == 2)
    }

    @Test func rootFileRefusalsNameThePath() throws {
        let folder = try Folder()
        let missing = folder.url.appendingPathComponent("missing.pem").path
        #expect(throws: RootFileRefusal.cannotOpen(path: missing, errno: ENOENT)) { try TrustConfiguration.roots(fromFile: missing) }
        #expect(throws: RootFileRefusal.cannotRead(path: folder.url.path, errno: EISDIR)) {
            try TrustConfiguration.roots(fromFile: folder.url.path)
        }
        let garbage = try folder.write("garbage.pem", Array("hello".utf8))
        #expect(throws: RootFileRefusal.notACertificate(path: garbage, .invalidRoot(index: 0, reason: "neither a DER certificate nor PEM")))
        {
            try TrustConfiguration.roots(fromFile: garbage)
        }
        let pem = String(decoding: try FixtureFiles.bytes("certs/testCA.pem"), as: UTF8.self)
        let withoutEnd = try #require(pem.components(separatedBy: "-----END CERTIFICATE-----").first)
        let cut = try folder.write("cut.pem", Array(withoutEnd.utf8))
        #expect(throws: RootFileRefusal.notACertificate(path: cut, .invalidRoot(index: 0, reason: "PEM block without END line"))) {
            try TrustConfiguration.roots(fromFile: cut)
        }
        // Exactly the limit is read; one byte more is refused before parsing.
        let limit = TrustConfiguration.maxRootFileBytes
        #expect(limit == 1 << 20)
        let atLimit = try folder.write("limit.pem", [UInt8](repeating: 0x41, count: limit))
        #expect(throws: RootFileRefusal.notACertificate(path: atLimit, .invalidRoot(index: 0, reason: "neither a DER certificate nor PEM")))
        {
            try TrustConfiguration.roots(fromFile: atLimit)
        }
        let large = try folder.write("large.pem", [UInt8](repeating: 0x41, count: limit + 1))
        #expect(throws: RootFileRefusal.tooLarge(path: large, maxBytes: limit)) { try TrustConfiguration.roots(fromFile: large) }
    }

    @Test func chainErrorsInPlainWords() {
        #expect(
            VerificationFailure.plainWords("certificate chain not trusted: unable to get local issuer certificate (depth 1)")
                == "certificate chain not trusted: it was not issued under the trusted root (depth 1)")
        for openssl in ["self-signed certificate in certificate chain", "self signed certificate in certificate chain"] {
            #expect(VerificationFailure.plainWords(openssl) == "it leads to a root that is not the trusted one")
        }
        #expect(VerificationFailure.plainWords("unable to get issuer certificate") == "its issuer is missing from the chain")
        #expect(VerificationFailure.plainWords("certificate signature failure") == "a certificate's signature does not match its issuer")
        #expect(VerificationFailure.plainWords("certificate has expired") == "certificate has expired")
    }

    @Test func anUntrustedChainsMessageInPlainWords() throws {
        // The test CA's notification under Apple's root only: OpenSSL cannot find the issuer.
        let jws = try FixtureFiles.text("conformance/ok_test_notification.jws")
        let verifier = try AppStoreVerifier(configuration: TrustConfiguration(bundleId: "com.example", environments: ["Sandbox"]))
        let failure = try #require(verifier.verify(jws).failure)
        #expect(failure.code == .untrustedChain)
        #expect(failure.message.contains("unable to get local issuer certificate"))
        #expect(failure.plainMessage == VerificationFailure.plainWords(failure.message))
        #expect(failure.plainMessage.contains("it was not issued under the trusted root"))
        #expect(!failure.plainMessage.contains("unable to get local issuer certificate"))
        // Other failures keep their words.
        let other = VerificationFailure(.invalidSignature, "certificate signature failure")
        #expect(other.plainMessage == other.message)
    }
}
