import AppStoreJWS
import JWSForge
import Testing

/// Negative and positive cases over throwaway Apple-shaped chains made by JWSForge.
@Suite("Forged test PKI")
struct ForgedPKITests {
    static let signedDate = ms("2026-03-01T10:00:00Z")
    static let clock = ms("2026-06-01T00:00:00Z")

    static func payload(signedDate: Int64 = signedDate, environment: String = "Sandbox", extra: String = "") -> String {
        #"{"notificationType":"TEST","notificationUUID":"u-1","data":{"bundleId":"com.example.app","environment":"\#(environment)","appAppleId":42}\#(extra),"version":"2.0","signedDate":\#(signedDate)}"#
    }

    static func verifier(
        _ pki: TestPKI, roots: [[UInt8]]? = nil, environments: Set<String> = ["Sandbox"],
        time: TrustConfiguration.ValidationTime = .signedDate
    ) throws -> AppStoreVerifier {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: roots ?? [pki.rootDER], bundleId: "com.example.app", appAppleId: 42, environments: environments,
                validationTime: time, clock: { clock }))
    }

    @Test func validChainAndSignature() throws {
        let pki = try TestPKI.make()
        let report = try Self.verifier(pki).verify(try pki.sign(payload: Self.payload()))
        #expect(report.isValid, "\(report.failure.map { "\($0)" } ?? "")")
        #expect(report.check("chain")?.detail.contains("NOT Apple") == true)
        // Not trusted under the built-in Apple root.
        let apple = try AppStoreVerifier(
            configuration: TrustConfiguration(bundleId: "com.example.app", environments: ["Sandbox"], clock: { Self.clock }))
        #expect(apple.verify(try pki.sign(payload: Self.payload())).failure?.code == .untrustedChain)
    }

    @Test func wrongRootSameName() throws {
        let pki = try TestPKI.make()
        let report = try Self.verifier(pki, roots: [pki.unrelatedRootDER]).verify(try pki.sign(payload: Self.payload()))
        #expect(report.failure?.code == .untrustedChain)
        // x5c[2] is the right root, but it is not configured: still untrusted.
        let other = try TestPKI.make()
        #expect(try Self.verifier(other).verify(try pki.sign(payload: Self.payload())).failure?.code == .untrustedChain)
    }

    @Test func tamperedPayloadAndOtherKey() throws {
        let pki = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let jws = try pki.sign(payload: Self.payload())
        let parts = jws.split(separator: ".").map(String.init)
        let tampered = AppStoreJWS.Base64.encodeURL(Array(Self.payload(environment: "Production").utf8))
        #expect(verifier.verify([parts[0], tampered, parts[2]].joined(separator: ".")).failure?.code == .invalidSignature)
        #expect(verifier.verify(try pki.signWithUnrelatedKey(payload: Self.payload())).failure?.code == .invalidSignature)
        #expect(verifier.verify(try pki.signWithZeroSignature(payload: Self.payload())).failure?.code == .invalidSignature)
        let der = verifier.verify(try pki.signWithDERSignature(payload: Self.payload()))
        #expect(der.failure?.code == .invalidSignature)
        #expect(der.failure?.message.contains("DER") == true)
        #expect(
            verifier.verify(try pki.sign(payload: Self.payload(), alg: "none", emptySignature: true)).failure?.code == .unsupportedAlgorithm
        )
        #expect(verifier.verify(try pki.sign(payload: Self.payload(), alg: "ES384")).failure?.code == .unsupportedAlgorithm)
        #expect(verifier.verify(try pki.sign(payload: Self.payload(), alg: "HS256")).failure?.code == .unsupportedAlgorithm)
    }

    @Test func missingMarkerOIDs() throws {
        var noLeaf = PKIOptions()
        noLeaf.leafOID = false
        let a = try TestPKI.make(noLeaf)
        #expect(try Self.verifier(a).verify(try a.sign(payload: Self.payload())).failure?.code == .missingLeafOID)
        var noIntermediate = PKIOptions()
        noIntermediate.intermediateOID = false
        let b = try TestPKI.make(noIntermediate)
        #expect(try Self.verifier(b).verify(try b.sign(payload: Self.payload())).failure?.code == .missingIntermediateOID)
    }

    @Test func leafKeyMustBeP256AndChainSigned() throws {
        var p384 = PKIOptions()
        p384.leafCurve = .p384
        let a = try TestPKI.make(p384)
        let report = try Self.verifier(a).verify(try a.sign(payload: Self.payload()))
        #expect(report.failure?.code == .invalidCertificate)
        #expect(report.failure?.message.contains("P-256") == true)
        var unrelated = PKIOptions()
        unrelated.leafSignedByUnrelatedKey = true
        let b = try TestPKI.make(unrelated)
        #expect(try Self.verifier(b).verify(try b.sign(payload: Self.payload())).failure?.code == .untrustedChain)
    }

    @Test func validityBeforeAndAfterTheLeaf() throws {
        var options = PKIOptions()
        options.leafNotBefore = ms("2026-01-01T00:00:00Z")
        options.leafNotAfter = ms("2026-04-01T00:00:00Z")
        let pki = try TestPKI.make(options)
        let verifier = try Self.verifier(pki)
        #expect(verifier.verify(try pki.sign(payload: Self.payload(signedDate: ms("2026-02-01T00:00:00Z")))).isValid)
        let before = verifier.verify(try pki.sign(payload: Self.payload(signedDate: ms("2025-12-31T23:59:59Z"))))
        #expect(before.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(before.failure?.message.contains("not yet valid") == true)
        let after = verifier.verify(try pki.sign(payload: Self.payload(signedDate: ms("2026-04-02T00:00:00Z"))))
        #expect(after.failure?.code == .certificateExpiredOrNotYetValid)
        #expect(after.failure?.message.contains("expired") == true)
        // Same header, now valid again inside the window (the cache must not remember the failure).
        #expect(verifier.verify(try pki.sign(payload: Self.payload(signedDate: ms("2026-03-31T00:00:00Z")))).isValid)
        // .now (2026-06-01) is after the leaf: fails even for a signedDate inside the window.
        let atNow = try Self.verifier(pki, time: .now).verify(try pki.sign(payload: Self.payload()))
        #expect(atNow.failure?.code == .certificateExpiredOrNotYetValid)
        let fixed = try Self.verifier(pki, time: .fixed(ms("2026-02-01T00:00:00Z"))).verify(
            try pki.sign(payload: Self.payload(signedDate: ms("2026-05-01T00:00:00Z"))))
        #expect(fixed.isValid)
        #expect(fixed.validationTime == ms("2026-02-01T00:00:00Z"))
    }

    @Test func x5cCountsAndGarbage() throws {
        let pki = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let payload = Self.payload()
        #expect(verifier.verify(try pki.sign(payload: payload, removingHeader: ["x5c"])).failure?.code == .missingX5C)
        #expect(verifier.verify(try pki.sign(payload: payload, x5c: pki.x5c(count: 0))).failure?.code == .missingX5C)
        for count in [1, 2, 4, 5] {
            #expect(verifier.verify(try pki.sign(payload: payload, x5c: pki.x5c(count: count))).failure?.code == .invalidChainLength)
        }
        #expect(verifier.verify(try pki.sign(payload: payload, x5c: pki.x5c(count: 3))).isValid)
        let garbage = [pki.leafDER, TestPKI.garbageCertificate, pki.rootDER]
        #expect(verifier.verify(try pki.sign(payload: payload, x5c: garbage)).failure?.code == .invalidCertificate)
        let garbageRoot = [pki.leafDER, pki.intermediateDER, TestPKI.garbageCertificate]
        #expect(verifier.verify(try pki.sign(payload: payload, x5c: garbageRoot)).failure?.code == .invalidCertificate)
        let notBase64 = verifier.verify(try pki.sign(payload: payload, x5cBase64: ["***", "***", "***"]))
        #expect(notBase64.failure?.code == .invalidCertificate)
        // The configured root itself need not be in x5c[2]: anything there is ignored for trust.
        let otherThird = [pki.leafDER, pki.intermediateDER, pki.unrelatedRootDER]
        #expect(verifier.verify(try pki.sign(payload: payload, x5c: otherThird)).isValid)
    }

    @Test func signedPayloadTypeErrorsAndDuplicates() throws {
        let pki = try TestPKI.make()
        let verifier = try Self.verifier(pki)
        let typeError = verifier.verify(
            try pki.sign(
                payload: #"{"transactionId":1,"bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(Self.signedDate)}"#))
        #expect(typeError.failure?.code == .invalidPayload)
        #expect(typeError.failure?.message.contains("transactionId") == true)
        #expect(typeError.check("signature")?.status == .passed)
        let duplicate = verifier.verify(
            try pki.sign(payload: #"{"transactionId":"1","transactionId":"2","signedDate":\#(Self.signedDate)}"#))
        #expect(duplicate.failure?.code == .invalidJSON)
        let array = verifier.verify(try pki.sign(payload: "[1]"))
        #expect(array.failure?.code.isMalformed == true)
    }

    @Test func unknownFieldsSurviveSignedRoundTrip() throws {
        let pki = try TestPKI.make()
        let report = try Self.verifier(pki).verify(
            try pki.sign(payload: Self.payload(extra: #","futureThing":{"k":[1,2.5,"x"]}"#)))
        #expect(report.isValid)
        #expect(report.payload?["futureThing"]?["k"] == .array([.int(1), .double(2.5), .string("x")]))
        #expect(report.notification?.json["futureThing"] != nil)
    }

    @Test func productionAppIdAndEnvironmentOrder() throws {
        let pki = try TestPKI.make()
        let production = try pki.sign(payload: Self.payload(environment: "Production"))
        let both = try Self.verifier(pki, environments: ["Production", "Sandbox"])
        #expect(both.verify(production).isValid)
        let wrongId = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [pki.rootDER], bundleId: "com.example.app", appAppleId: 43, environments: ["Production"],
                clock: { Self.clock }))
        #expect(wrongId.verify(production).failure?.code == .invalidAppIdentifier)
        // App identifier is checked before the environment.
        let wrongBoth = try AppStoreVerifier(
            configuration: TrustConfiguration(
                roots: [pki.rootDER], bundleId: "other", appAppleId: 43, environments: ["Production"],
                clock: { Self.clock }))
        #expect(wrongBoth.verify(try pki.sign(payload: Self.payload())).failure?.code == .invalidAppIdentifier)
    }

    @Test func nestedFailureFailsTheNotification() throws {
        let pki = try TestPKI.make()
        let other = try TestPKI.make()
        let good = PayloadBuilder(pki: pki, bundleId: "com.example.app", environment: "Sandbox", appAppleId: 42)
        let tx = JWSForge.TransactionPayload(
            transactionId: "t1", originalTransactionId: "o1", bundleId: "com.example.app", productId: "p",
            purchaseDate: Self.signedDate, originalPurchaseDate: Self.signedDate, expiresDate: nil, type: "Consumable",
            signedDate: Self.signedDate,
            environment: "Sandbox")
        let ok = try good.notification(type: "ONE_TIME_CHARGE", uuid: "n1", signedDate: Self.signedDate, transaction: tx)
        let verifier = try Self.verifier(pki)
        let report = verifier.verify(ok)
        #expect(report.isValid, "\(report.failure.map { "\($0)" } ?? "")")
        #expect(report.nestedTransaction?.transactionId == "t1")

        // Nested transaction signed under a chain the verifier does not trust.
        let foreignTx = try other.sign(payload: tx.json)
        let outer =
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n2","data":{"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":"\#(foreignTx)"},"signedDate":\#(Self.signedDate)}"#
        let bad = verifier.verify(try pki.sign(payload: outer))
        #expect(bad.failure?.code == .untrustedChain)
        #expect(bad.failure?.message.hasPrefix("signedTransactionInfo:") == true)
        #expect(bad.nested(.signedTransactionInfo)?.isValid == false)

        // Nested transaction of another app.
        var otherApp = tx
        otherApp.bundleId = "com.evil"
        let outer2 =
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n3","data":{"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":"\#(try pki.sign(payload: otherApp.json))"},"signedDate":\#(Self.signedDate)}"#
        #expect(verifier.verify(try pki.sign(payload: outer2)).failure?.code == .invalidAppIdentifier)

        // A notification where a transaction belongs.
        let inner = try pki.sign(payload: Self.payload())
        let outer3 =
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n4","data":{"bundleId":"com.example.app","environment":"Sandbox","signedTransactionInfo":"\#(inner)"},"signedDate":\#(Self.signedDate)}"#
        #expect(verifier.verify(try pki.sign(payload: outer3)).failure?.code == .invalidPayload)
    }
}
