import AppStoreAPI
import CommandLineKit
import IAPOperations
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
            Self.text(APIKeyFile.Refusal.worldReadable(path: "/k.p8"))
                == "78 the key file /k.p8 is readable by every user of this machine"
                + " | it is a secret: chmod 600 /k.p8 (and keep it out of version control)")
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
                == "an app never released on the App Store is known only to Sandbox: try --environment sandbox")
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
