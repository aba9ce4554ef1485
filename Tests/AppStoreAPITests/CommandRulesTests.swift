import AppStoreJWS
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
        try Self.write([], to: dir + "/empty.p8", mode: 0o600)
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
        #expect(throws: APIKeyFile.Refusal.readableByOthers(path: dir + "/open.p8", mode: 0o644)) {
            try APIKeyFile.read(dir + "/open.p8")
        }
        // The README's rule: only the owner may read it; a group is wider than the people meant to hold it.
        try Self.write(Array("key".utf8), to: dir + "/group.p8", mode: 0o640)
        #expect(throws: APIKeyFile.Refusal.readableByOthers(path: dir + "/group.p8", mode: 0o640)) {
            try APIKeyFile.read(dir + "/group.p8")
        }
        try Self.write(Array("key".utf8), to: dir + "/readonly.p8", mode: 0o400)
        #expect(try APIKeyFile.read(dir + "/readonly.p8") == Array("key".utf8))
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
        #expect(RequestIdentifier.isUUID(RequestIdentifier.random()))
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

/// The client settings made from the options' values and the environment: what is refused, in which
/// order, the defaults, the loopback test server, and the key id / file name mismatch.
@Suite struct ClientSetupTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"

    /// A folder holding `AuthKey_2X9R4HXF34.p8` (a fresh key, mode 0600), removed by the caller.
    static func keyFolder(name: String = "AuthKey_2X9R4HXF34.p8", mode: Int = 0o600) throws -> (dir: String, file: String) {
        let dir = try KeyFileTests.folder()
        try KeyFileTests.write(try TestKey().pem, to: dir + "/" + name, mode: mode)
        return (dir, dir + "/" + name)
    }

    static func refusal(
        keyFile: String?, keyId: String? = "2X9R4HXF34", issuerId: String? = issuer
    ) -> APIClientSetup.Refusal? {
        do {
            _ = try APIClientSetup(keyFile: keyFile, keyId: keyId, issuerId: issuerId, bundleId: "b", environment: [:])
            return nil
        } catch { return error }
    }

    /// Every missing setting is named in one refusal; the key id, when not given, is the KEYID of the
    /// key file's name `AuthKey_KEYID.p8`.
    @Test func namesEveryMissingSettingAtOnce() throws {
        func missing(
            keyFile: String?, keyId: String? = "2X9R4HXF34", issuerId: String? = Self.issuer, bundleId: String? = "b"
        ) -> [APIClientSetup.Setting]? {
            do {
                _ = try APIClientSetup(
                    keyFile: keyFile, keyId: keyId, issuerId: issuerId, bundleId: bundleId, environment: [:])
                return nil
            } catch {
                guard case .missing(let settings) = error else { return nil }
                return settings
            }
        }
        #expect(missing(keyFile: nil, keyId: nil, issuerId: nil, bundleId: nil) == [.keyFile, .keyId, .issuerId, .bundleId])
        #expect(missing(keyFile: "", keyId: "", issuerId: "", bundleId: "") == [.keyFile, .keyId, .issuerId, .bundleId])
        #expect(missing(keyFile: "/none.p8", keyId: nil) == [.keyId])
        #expect(missing(keyFile: "/none.p8", issuerId: nil, bundleId: nil) == [.issuerId, .bundleId])
        #expect(missing(keyFile: "/none.p8", bundleId: "") == [.bundleId])
        // The file name's KEYID stands in for a key id not given.
        #expect(missing(keyFile: "/keys/AuthKey_2X9R4HXF34.p8", keyId: nil, bundleId: nil) == [.bundleId])
        let (_, named) = try Self.keyFolder()
        let setup = try APIClientSetup(keyFile: named, keyId: nil, issuerId: Self.issuer, bundleId: "b", environment: [:])
        #expect(setup.settings.key.keyId == "2X9R4HXF34")
        #expect(setup.keyIdMismatch == nil)
    }

    @Test func checksTheIdsBeforeReadingTheKeyThenTheFileThenTheKey() throws {
        // The ids first: the file does not exist.
        guard case .credentials(.keyId("2X9R-4HXF"))? = Self.refusal(keyFile: "/none.p8", keyId: "2X9R-4HXF"),
            case .credentials(.issuerId("x"))? = Self.refusal(keyFile: "/none.p8", issuerId: "x")
        else {
            Issue.record("a malformed id was taken")
            return
        }
        guard case .keyFile(.inaccessible(path: "/none.p8", errno: ENOENT))? = Self.refusal(keyFile: "/none.p8") else {
            Issue.record("a missing key file was taken")
            return
        }
        let open = try Self.keyFolder(mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: open.dir) }
        guard case .keyFile(.readableByOthers)? = Self.refusal(keyFile: open.file) else {
            Issue.record("a world-readable key file was taken")
            return
        }
        let dir = try KeyFileTests.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try KeyFileTests.write(Array("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8), to: dir + "/bad.p8", mode: 0o600)
        guard case .key(let error)? = Self.refusal(keyFile: dir + "/bad.p8") else {
            Issue.record("a file without a key was taken")
            return
        }
        #expect(error.kind == .configuration)
    }

    @Test func takesTheValuesGivenAndKeepsTheDefaultsOtherwise() throws {
        let key = try Self.keyFolder()
        defer { try? FileManager.default.removeItem(atPath: key.dir) }
        let plain = try APIClientSetup(
            keyFile: key.file, keyId: "2X9R4HXF34", issuerId: Self.issuer, bundleId: "com.example.app", environment: [:])
        #expect(plain.keyFile == key.file)
        #expect(plain.settings.key.keyId == "2X9R4HXF34")
        #expect(plain.settings.issuerId == Self.issuer)
        #expect(plain.settings.bundleId == "com.example.app")
        #expect(plain.settings.connectTimeout == 10 && plain.settings.totalTimeout == 60)
        #expect(plain.settings.deadline == 60)
        #expect(plain.settings.maxRateLimitWait == nil && plain.settings.backoff == nil)
        #expect(plain.settings.testServer == nil && plain.testServer == nil)
        #expect(plain.keyIdMismatch == nil)

        let given = try APIClientSetup(
            keyFile: key.file, keyId: "2X9R4HXF34", issuerId: Self.issuer, bundleId: "com.example", connectTimeout: 3,
            totalTimeout: 7, deadline: 20, maxRateLimitWait: 90, environment: ["IAPCTL_APPLE_API_BACKOFF_MS": "5"])
        #expect(given.settings.deadline == 20)
        #expect(given.settings.bundleId == "com.example")
        #expect(given.settings.connectTimeout == 3 && given.settings.totalTimeout == 7)
        #expect(given.settings.maxRateLimitWait == 90)
        #expect(given.settings.backoff == nil, "the backoff is read only with a test server variable")
    }

    @Test func theEnvironmentNamesALoopbackTestServer() throws {
        let key = try Self.keyFolder()
        defer { try? FileManager.default.removeItem(atPath: key.dir) }
        func setup(_ environment: [String: String]) throws -> APIClientSetup {
            try APIClientSetup(
                keyFile: key.file, keyId: "2X9R4HXF34", issuerId: Self.issuer, bundleId: "b", environment: environment)
        }
        let test = try setup([
            "IAPCTL_APPLE_API_BASE_URL": "https://127.0.0.1:8443", "IAPCTL_APPLE_API_SANDBOX_BASE_URL": "https://127.0.0.1:8444",
            "IAPCTL_APPLE_API_CA_FILE": "/tmp/ca.pem", "IAPCTL_APPLE_API_BACKOFF_MS": "20",
        ])
        #expect(test.testServer == "https://127.0.0.1:8443")
        #expect(test.settings.testServer?.production == "https://127.0.0.1:8443")
        #expect(test.settings.testServer?.sandbox == "https://127.0.0.1:8444")
        #expect(test.settings.testServer?.caFile == "/tmp/ca.pem")
        #expect(test.settings.backoff == 20)

        let bare = try setup(["IAPCTL_APPLE_API_BASE_URL": "https://127.0.0.1:8443"])
        #expect(bare.settings.testServer?.sandbox == nil && bare.settings.testServer?.caFile == nil)
        #expect(bare.settings.backoff == nil)

        // An empty base URL is no test server, though the backoff is still read.
        let empty = try setup(["IAPCTL_APPLE_API_BASE_URL": "", "IAPCTL_APPLE_API_BACKOFF_MS": "20"])
        #expect(empty.testServer == nil && empty.settings.testServer == nil)
        #expect(empty.settings.backoff == 20)
        #expect(try setup(["IAPCTL_APPLE_API_BACKOFF_MS": "x", "IAPCTL_APPLE_API_BASE_URL": "h"]).settings.backoff == nil)
    }

    @Test func aKeyIdOtherThanTheFileNamesIsAMismatch() throws {
        let other = try Self.keyFolder(name: "AuthKey_OTHERKEY01.p8")
        defer { try? FileManager.default.removeItem(atPath: other.dir) }
        let mismatched = try APIClientSetup(
            keyFile: other.file, keyId: "2X9R4HXF34", issuerId: Self.issuer, bundleId: "b", environment: [:])
        #expect(mismatched.keyIdMismatch == .init(keyId: "2X9R4HXF34", fileName: "AuthKey_OTHERKEY01.p8"))
        let plain = try Self.keyFolder(name: "key.p8")
        defer { try? FileManager.default.removeItem(atPath: plain.dir) }
        #expect(
            try APIClientSetup(keyFile: plain.file, keyId: "2X9R4HXF34", issuerId: Self.issuer, bundleId: "b", environment: [:])
                .keyIdMismatch == nil, "a file not named AuthKey_KEYID.p8 says nothing")
    }
}

/// What Apple's answers about the writes and the test notification mean.
@Suite struct AnswerMeaningTests {
    @Test func anExtensionSucceededOnlyWhenAppleSaysSoAndAMassExtensionWhenComplete() throws {
        #expect(WriteAnswer.extended(try JSONParser.parse(#"{"success":true,"effectiveDate":1}"#)))
        #expect(!WriteAnswer.extended(try JSONParser.parse(#"{"success":false}"#)))
        #expect(!WriteAnswer.extended(try JSONParser.parse(#"{"success":"true"}"#)))
        #expect(!WriteAnswer.extended(try JSONParser.parse(#"{}"#)))
        #expect(!WriteAnswer.extended(nil))
        #expect(WriteAnswer.massExtensionComplete(try JSONParser.parse(#"{"complete":true,"succeededCount":3}"#)))
        #expect(!WriteAnswer.massExtensionComplete(try JSONParser.parse(#"{"complete":false}"#)))
        #expect(!WriteAnswer.massExtensionComplete(try JSONParser.parse(#"{"success":true}"#)))
        #expect(!WriteAnswer.massExtensionComplete(nil))
        #expect(
            WriteAnswer.massExtensionStatusFields == [
                "requestIdentifier", "complete", "completeDate", "succeededCount", "failedCount",
            ])
    }

    @Test func aTestNotificationIsDeliveredWhenTheLastAttemptSucceeded() {
        #expect(TestNotification.delivered(lastAttemptResult: "SUCCESS"))
        #expect(!TestNotification.delivered(lastAttemptResult: "TIMED_OUT"))
        #expect(!TestNotification.delivered(lastAttemptResult: "success"))
        #expect(!TestNotification.delivered(lastAttemptResult: nil))
    }
}
