import Foundation
import Testing

@testable import AppStoreAPI

/// The App Store Server API's rules the `apple` commands apply before sending anything: the key file,
/// the ids, the write requests' limits, the notification history window, and what a 401 likely means.
@Suite struct KeyFileTests {
    /// A fresh folder under the temporary directory, removed by the caller.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "keyfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], to path: String, mode: Int) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    @Test func readsAPrivateFileWhole() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = Array("-----BEGIN PRIVATE KEY-----\n".utf8) + [UInt8](repeating: 65, count: 70_000 - 28)
        try Self.write(Array(bytes.prefix(APIKeyFile.maxBytes)), to: dir + "/AuthKey_ABC.p8", mode: 0o600)
        #expect(try APIKeyFile.read(dir + "/AuthKey_ABC.p8") == Array(bytes.prefix(APIKeyFile.maxBytes)))
        try Self.write([], to: dir + "/empty.p8", mode: 0o640)
        #expect(try APIKeyFile.read(dir + "/empty.p8").isEmpty)
    }

    @Test func refusesMissingFoldersWorldReadableAndHugeFiles() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: APIKeyFile.Refusal.inaccessible(path: dir + "/none.p8", errno: ENOENT)) {
            try APIKeyFile.read(dir + "/none.p8")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir)
        #expect(throws: APIKeyFile.Refusal.notAFile(path: dir)) { try APIKeyFile.read(dir) }
        try Self.write(Array("key".utf8), to: dir + "/open.p8", mode: 0o644)
        #expect(throws: APIKeyFile.Refusal.worldReadable(path: dir + "/open.p8")) { try APIKeyFile.read(dir + "/open.p8") }
        try Self.write(
            [UInt8](repeating: 1, count: APIKeyFile.maxBytes + 1), to: dir + "/huge.p8", mode: 0o600)
        #expect(throws: APIKeyFile.Refusal.tooLarge(path: dir + "/huge.p8", maxBytes: APIKeyFile.maxBytes)) {
            try APIKeyFile.read(dir + "/huge.p8")
        }
    }

    @Test func refusesAFileItCannotOpen() throws {
        guard getuid() != 0 else { return }  // root opens anything
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Array("key".utf8), to: dir + "/locked.p8", mode: 0o000)
        #expect(throws: APIKeyFile.Refusal.cannotOpen(path: dir + "/locked.p8", errno: EACCES)) {
            try APIKeyFile.read(dir + "/locked.p8")
        }
    }

    @Test func keyIdComesFromAppStoreConnectsDownloadName() {
        #expect(APIKeyFile.keyId(inFileName: "/secrets/AuthKey_2X9R4HXF34.p8") == "2X9R4HXF34")
        #expect(APIKeyFile.keyId(inFileName: "AuthKey_A.p8") == "A")
        #expect(APIKeyFile.keyId(inFileName: "/secrets/key.p8") == nil)
        #expect(APIKeyFile.keyId(inFileName: "/secrets/AuthKey_2X9R4HXF34.pem") == nil)
        #expect(APIKeyFile.baseName("/a/b/AuthKey_X.p8") == "AuthKey_X.p8")
        #expect(APIKeyFile.baseName("plain") == "plain")
    }

    @Test func credentialsAreAKeyIdAndAUUID() throws {
        let issuer = "57246542-96fe-1a63-e053-0824d011072a"
        try APICredentials.check(keyId: "2X9R4HXF34", issuerId: issuer)
        try APICredentials.check(keyId: "2X9R4HXF34", issuerId: issuer.uppercased())
        #expect(throws: APICredentials.Refusal.keyId("2X9R-4HXF")) {
            try APICredentials.check(keyId: "2X9R-4HXF", issuerId: issuer)
        }
        #expect(throws: APICredentials.Refusal.keyId("ÄBC")) { try APICredentials.check(keyId: "ÄBC", issuerId: "x") }
        #expect(throws: APICredentials.Refusal.issuerId("57246542-96fe-1a63-e053")) {
            try APICredentials.check(keyId: "ABC", issuerId: "57246542-96fe-1a63-e053")
        }
        #expect(!RequestIdentifier.isUUID("57246542-96fe-1a63-e053-0824d011072g"))
        #expect(!RequestIdentifier.isUUID("5724654296fe1a63e0530824d011072a"))
        #expect(RequestIdentifier.isUUID(RequestIdentifier.derived(from: "x")))
    }
}

@Suite struct WriteRequestTests {
    @Test func extensionDaysAreOneToNinety() throws {
        #expect(try WriteRequest.extensionDays("1") == 1)
        #expect(try WriteRequest.extensionDays("90") == 90)
        for bad in ["0", "91", "-3", "seven", ""] {
            #expect(throws: WriteRequest.Refusal.extensionDays(bad)) { try WriteRequest.extensionDays(bad) }
        }
        #expect(throws: WriteRequest.Refusal.extensionDays(nil)) { try WriteRequest.extensionDays(nil) }
    }

    @Test func consumptionNeedsConsentAndAPercentageInThousandths() throws {
        try WriteRequest.requireConsent(true)
        #expect(throws: WriteRequest.Refusal.consentMissing) { try WriteRequest.requireConsent(false) }
        #expect(try WriteRequest.consumptionPercentage(nil) == nil)
        #expect(try WriteRequest.consumptionPercentage("0") == 0)
        #expect(try WriteRequest.consumptionPercentage("100000") == 100_000)
        for bad in ["100001", "-1", "25%"] {
            #expect(throws: WriteRequest.Refusal.consumptionPercentage(bad)) { try WriteRequest.consumptionPercentage(bad) }
        }
    }

    @Test func requestIdsAndTokensAreUUIDs() throws {
        #expect(try WriteRequest.requestIdentifier(nil) == nil)
        #expect(
            try WriteRequest.requestIdentifier("758883E8-151B-47B7-ABD0-60C4D804C2F5")
                == "758883e8-151b-47b7-abd0-60c4d804c2f5")
        #expect(throws: WriteRequest.Refusal.requestIdentifier("req-1")) { try WriteRequest.requestIdentifier("req-1") }
        let token = "7389A31A-fb6d-4569-a2a6-db7d85d84813"
        #expect(try WriteRequest.appAccountToken(token) == token)
        #expect(throws: WriteRequest.Refusal.appAccountToken("order-42")) { try WriteRequest.appAccountToken("order-42") }
    }
}

@Suite struct NotificationHistoryRulesTests {
    static let day: Int64 = 86_400_000

    @Test func theWindowStartsBeforeItEndsWithinApplesRetention() throws {
        let now: Int64 = 1_750_000_000_000
        try NotificationHistoryQuery.checkWindow(start: now - 180 * Self.day, end: now, now: now)
        #expect(throws: NotificationHistoryQuery.Refusal.startNotBeforeEnd) {
            try NotificationHistoryQuery.checkWindow(start: now, end: now, now: now)
        }
        #expect(throws: NotificationHistoryQuery.Refusal.startBeyondRetention) {
            try NotificationHistoryQuery.checkWindow(start: now - 180 * Self.day - 1, end: now, now: now)
        }
    }

    @Test func itFiltersByATypeOrATransactionNotBoth() throws {
        func body(_ filter: NotificationHistoryQuery.Filter) -> String {
            NotificationHistoryQuery(start: 1, end: 2, filter: filter).body.serialized()
        }
        #expect(body(try NotificationHistoryQuery.filter(type: nil, subtype: nil, transaction: nil)) == #"{"startDate":1,"endDate":2}"#)
        #expect(
            body(try NotificationHistoryQuery.filter(type: "DID_RENEW", subtype: "BILLING_RECOVERY", transaction: nil))
                == #"{"startDate":1,"endDate":2,"notificationType":"DID_RENEW","notificationSubtype":"BILLING_RECOVERY"}"#)
        #expect(
            body(try NotificationHistoryQuery.filter(type: nil, subtype: nil, transaction: "2000"))
                == #"{"startDate":1,"endDate":2,"transactionId":"2000"}"#)
        #expect(throws: NotificationHistoryQuery.Refusal.typeAndTransaction) {
            try NotificationHistoryQuery.filter(type: "DID_RENEW", subtype: nil, transaction: "2000")
        }
        #expect(throws: NotificationHistoryQuery.Refusal.subtypeWithoutType) {
            try NotificationHistoryQuery.filter(type: nil, subtype: "BILLING_RECOVERY", transaction: nil)
        }
        #expect(throws: NotificationHistoryQuery.Refusal.subtypeWithoutType) {
            try NotificationHistoryQuery.filter(type: nil, subtype: "BILLING_RECOVERY", transaction: "2000")
        }
    }
}

@Suite struct UnauthorizedTests {
    @Test func eachLikelyCauseOfA401() {
        let mismatch = UnauthorizedCause.likely(
            keyFile: "/k/AuthKey_AAA.p8", keyId: "BBB", bundleId: "com.example", environment: .production, sandboxTried: false)
        #expect(
            mismatch == [
                .keyIdDiffersFromFileName(keyId: "BBB", fileName: "AuthKey_AAA.p8"), .appNeverReleased,
                .issuerOrBundleId(bundleId: "com.example"),
            ])
        let autoBoth = UnauthorizedCause.likely(
            keyFile: "/k/AuthKey_AAA.p8", keyId: "AAA", bundleId: nil, environment: .auto, sandboxTried: true)
        #expect(autoBoth == [.issuerOrBundleId(bundleId: nil), .sandboxRefusedToo])
        let sandboxOnly = UnauthorizedCause.likely(
            keyFile: "key.p8", keyId: "AAA", bundleId: "b", environment: .sandbox, sandboxTried: true)
        #expect(sandboxOnly == [.issuerOrBundleId(bundleId: "b")], "asked only Sandbox: not 'refused it too'")
    }

    @Test func whichServerIsAskedAndWhetherSandboxWas() {
        #expect(APIEnvironment.auto.singleServer == .production)
        #expect(APIEnvironment.production.singleServer == .production)
        #expect(APIEnvironment.sandbox.singleServer == .sandbox)
        #expect(APIEnvironment.auto.mayHaveAskedSandbox(followsEnvironment: true))
        #expect(!APIEnvironment.auto.mayHaveAskedSandbox(followsEnvironment: false))
        #expect(!APIEnvironment.production.mayHaveAskedSandbox(followsEnvironment: true))
        #expect(APIEnvironment.sandbox.mayHaveAskedSandbox(followsEnvironment: false))
        #expect(APIEnvironment.sandbox.mayHaveAskedSandbox(followsEnvironment: true))
    }
}
