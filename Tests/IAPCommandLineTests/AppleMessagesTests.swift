import AppStoreAPI
import AppleFlows
import ClientSubmissions
import CommandLineKit
import Foundation
import IAPOperations
import ItemInput
import PersonalData
import Testing

@testable import IAPCommandLine

/// The `apple` commands' wording of AppStoreAPI's typed refusals: the codes, messages and hints they
/// were refused with before the rules moved out of the command layer.
@Suite("apple refusals as the command line words them")
struct AppleMessagesTests {
    static func text(_ error: any CLIErrorConvertible) -> String {
        let e = error.cliError
        return "\(e.code.rawValue) \(e.message)" + (e.hint.map { " | \($0)" } ?? "")
    }

    /// An audited write to Apple says why, like every other audited change: a blank --reason is a
    /// usage error before any key is read or anything is sent.
    @Test func writesRefuseABlankReason() {
        for command in [
            ["apple", "extend", "1", "--days", "1", "--reason-code", "0"],
            ["apple", "consumption", "1", "--customer-consented", "--delivery-status", "DELIVERED"],
            ["apple", "set-app-account-token", "1", "--token", "7389a31a-fb6d-4569-a2a6-db7d85d84813"],
        ] {
            let run = iapctl(command + ["--reason", " ", "--bundle-id", "com.example.app", "--key-file", "/nonexistent.p8"])
            #expect(run.code == 64, "\(command)")
            #expect(run.err.hasPrefix("error: --reason must say why\nhint: e.g. --reason 'outage 2025-06-01, ticket INC-9'\n"))
        }
    }

    @Test func keyFileAndIds() {
        let checkFile = " | check --key-file (or IAPCTL_APPLE_KEY_FILE / 'apple-key-file')"
        let owner = " | check its owner and permissions"
        #expect(
            Self.text(APIKeyFile.Refusal.inaccessible(path: "/k.p8", errno: 2))
                == "78 cannot read the key file /k.p8: No such file or directory" + checkFile)
        #expect(Self.text(APIKeyFile.Refusal.notAFile(path: "/k")) == "78 the key file /k is not a file")
        #expect(
            Self.text(APIKeyFile.Refusal.readableByOthers(path: "/k.p8", mode: 0o644))
                == "78 the key file /k.p8 is readable by every user of this machine (mode 644)"
                + " | it is a secret only its owner may read: chmod 600 /k.p8 (run iapctl as its owner; "
                + "keep it out of version control)")
        #expect(
            Self.text(APIKeyFile.Refusal.readableByOthers(path: "/k.p8", mode: 0o640)).hasPrefix(
                "78 the key file /k.p8 is readable by its group (mode 640) | it is a secret only its owner may read: chmod 600"))
        #expect(
            Self.text(APIKeyFile.Refusal.cannotOpen(path: "/k.p8", errno: 13))
                == "78 cannot read the key file: cannot open /k.p8: Permission denied" + owner)
        #expect(
            Self.text(APIKeyFile.Refusal.cannotRead(path: "/k.p8", errno: 21))
                == "78 cannot read the key file: cannot read /k.p8: Is a directory" + owner)
        #expect(
            Self.text(APIKeyFile.Refusal.tooLarge(path: "/k.p8", maxBytes: 65_536))
                == "78 cannot read the key file: /k.p8 is larger than 65536 bytes" + owner)
        #expect(
            Self.text(APICredentials.Refusal.keyId("a-b"))
                == "78 --key-id 'a-b' is not a key id (letters and digits, e.g. 2X9R4HXF34)")
        #expect(
            Self.text(APICredentials.Refusal.issuerId("x"))
                == "78 --issuer-id 'x' is not a UUID | copy it from App Store Connect")
    }

    /// The client settings' refusals (``APIClientSetup/Refusal``): every missing setting in one message with
    /// where each is set; the others as the refusal they carry.
    /// A consumptionPercentage (thousandths of a percent) is also shown as a percentage.
    @Test func consumptionPercentageAsAPercentage() {
        #expect(RefundsAnswer.percent(milli: 18611) == "18.6")
        #expect(RefundsAnswer.percent(milli: 0) == "0.0")
        #expect(RefundsAnswer.percent(milli: 100_000) == "100.0")
        #expect(RefundsAnswer.percent(milli: 49) == "0.0" && RefundsAnswer.percent(milli: 50) == "0.1")
    }

    @Test func missingKeySettings() {
        #expect(
            Self.text(APIClientSetup.Refusal.missing([.keyId, .bundleId]))
                == "78 the App Store Server API settings are incomplete: --key-id, --bundle-id not set | "
                + "--key-id: the 10-character id App Store Connect shows next to the key, or the KEYID of the file "
                + "name AuthKey_KEYID.p8 (IAPCTL_APPLE_KEY_ID, 'apple-key-id'); --bundle-id: the app's bundle id "
                + "(IAPCTL_BUNDLE_ID, 'bundle-id'); see which are set, and from where: iapctl apple settings; "
                + "the App Store Connect steps: iapctl help apple")
        #expect(
            Self.text(APIClientSetup.Refusal.credentials(.keyId("a-b"))) == Self.text(APICredentials.Refusal.keyId("a-b")))
        #expect(
            Self.text(APIClientSetup.Refusal.keyFile(.notAFile(path: "/k")))
                == Self.text(APIKeyFile.Refusal.notAFile(path: "/k")))
        let bad = AppStoreAPIError(.configuration, "cannot read the key", hint: "h")
        #expect(Self.text(APIClientSetup.Refusal.key(bad)) == "78 cannot read the key | h")

        let get = ["apple", "transactions", "get", "1", "--bundle-id", "com.example.app"]
        let noFile = iapctl(get)
        #expect(noFile.code == 78)
        #expect(
            noFile.err.hasPrefix(
                "error: the App Store Server API settings are incomplete: --key-file, --key-id, --issuer-id not set\n"
                    + "hint: --key-file: the In-App Purchase key AuthKey_KEYID.p8"))
        #expect(
            iapctl(get + ["--key-file", "/none.p8"]).err.hasPrefix(
                "error: the App Store Server API settings are incomplete: --key-id, --issuer-id not set\n"))
        #expect(
            iapctl(get + ["--key-file", "/none.p8", "--key-id", "K1"]).err.hasPrefix(
                "error: the App Store Server API settings are incomplete: --issuer-id not set\n"))
        let unread = iapctl(
            get + ["--key-file", "/none.p8", "--key-id", "K1", "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a"])
        #expect(unread.code == 78)
        #expect(unread.err.hasPrefix("error: cannot read the key file /none.p8: No such file or directory\n"))
    }

    /// With a usable key, the test server and a key id other than the file's name are warned about
    /// before anything is sent (a dry run sends nothing).
    @Test func testServerAndKeyIdMismatchWarnings() throws {
        let dir = NSTemporaryDirectory() + "apple-setup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = dir + "/AuthKey_OTHERKEY01.p8"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let run = iapctl(
            [
                "apple", "set-app-account-token", "1", "--token", "7389a31a-fb6d-4569-a2a6-db7d85d84813", "--reason", "r",
                "--dry-run", "--bundle-id", "com.example.app", "--key-file", key, "--key-id", "2X9R4HXF34",
                "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a",
            ], environment: ["IAPCTL_APPLE_API_BASE_URL": "https://127.0.0.1:9"])
        #expect(run.code == 0, "\(run.err)")
        #expect(
            run.err.hasPrefix(
                "warning: talking to the test server https://127.0.0.1:9 (IAPCTL_APPLE_API_BASE_URL), not to Apple\n"
                    + "warning: --key-id 2X9R4HXF34 differs from the key file's name AuthKey_OTHERKEY01.p8; "
                    + "Apple will refuse a mismatch\n"))
        #expect(run.out.hasPrefix("PUT https://127.0.0.1:9/inApps/v1/transactions/1/appAccountToken\n"))
    }

    @Test func writeRequestsAndTheHistoryWindow() {
        #expect(Self.text(WriteRequest.Refusal.extensionDays("91")) == "64 --days must be 1 to 90 (Apple's limit)")
        #expect(
            Self.text(WriteRequest.Refusal.consentMissing)
                == "64 --customer-consented is required | Apple accepts consumption data only with the customer's consent")
        #expect(
            Self.text(WriteRequest.Refusal.consumptionPercentage("-1"))
                == "64 --consumption-percentage must be 0 to 100000 (thousandths of a percent)")
        #expect(Self.text(WriteRequest.Refusal.requestIdentifier("r1")) == "64 --request-id 'r1' is not a UUID")
        #expect(
            Self.text(WriteRequest.Refusal.appAccountToken("t"))
                == "64 --token 't' is not a UUID | appAccountToken is a UUID, e.g. an order number")
        #expect(Self.text(NotificationHistoryQuery.Refusal.startNotBeforeEnd) == "64 --since must be before --until")
        #expect(
            Self.text(NotificationHistoryQuery.Refusal.startBeyondRetention)
                == "64 --since is more than 180 days ago | Apple keeps notification history for 180 days")
        #expect(
            Self.text(NotificationHistoryQuery.Refusal.typeAndTransaction)
                == "64 --type and --transaction exclude each other (Apple filters by one or the other)")
        #expect(Self.text(NotificationHistoryQuery.Refusal.subtypeWithoutType) == "64 --subtype goes with --type")
    }

    @Test func eachCauseOfA401() {
        #expect(
            AppleSession.describe(.keyIdDiffersFromFileName(keyId: "B", fileName: "AuthKey_A.p8"))
                == "the key id: --key-id B but the key file is AuthKey_A.p8")
        #expect(
            AppleSession.describe(.appNeverReleased)
                == "an app never released on the App Store is known only to Sandbox: try --environment Sandbox")
        #expect(
            AppleSession.describe(.issuerOrBundleId(bundleId: nil))
                == "the issuer id (--issuer-id) or the bundle id (--bundle-id ?) does not belong to this key's team, "
                + "or the key was revoked in App Store Connect")
        #expect(AppleSession.describe(.sandboxRefusedToo) == "(Sandbox refused it too, so it is not an unreleased app)")
    }

    @Test func historyResponses() {
        #expect(throws: CLIError.self) { try GapReport.entries(in: .object([]), name: "n") }
        do {
            _ = try GapReport.entries(in: .object([("notificationHistory", .array([.object([])]))]), name: "Apple's history")
            Issue.record("an item without signedPayload was read")
        } catch {
            #expect(error.message == "Apple's history: a notificationHistory item has no signedPayload")
            #expect(error.code == .dataError)
        }
    }
}
