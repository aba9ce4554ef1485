import AppStoreAPI
import AppStoreJWS
import AppStoreReceipt
import AppleFlows
import ClientSubmissions
import Foundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import StoreTestSupport
import Testing

/// The trust options as a value: the verifiers `TrustSettings` makes accept and refuse as
/// configured, and `ClientVerifiers` made from settings asks only for the verifier an item needs.
@Suite("Trust settings")
struct TrustSettingsTests {
    /// A throwaway CA whose root is saved as PEM in a scratch folder.
    struct CA {
        let scratch: Scratch
        let pki: TestPKI
        var rootFile: String { scratch.path(TestPKI.FileName.root) }

        init() throws {
            scratch = try Scratch()
            pki = try World.sharedPKI()
            try pki.save(to: scratch.directory.path)
        }

        /// A Sandbox transaction of `World.bundleId` signed by this CA's leaf.
        func transaction() throws -> String {
            let payload = JWSForge.TransactionPayload(
                transactionId: "1000", originalTransactionId: "orig", bundleId: World.bundleId, productId: World.product,
                purchaseDate: World.t0, originalPurchaseDate: World.t0, expiresDate: World.t0 + 30 * World.day,
                appAccountToken: nil, signedDate: World.t0 + 5_000, environment: "Sandbox")
            return try pki.sign(payload: payload.json)
        }
    }

    @Test func rootFilesAreReadNowAndNamed() throws {
        let ca = try CA()
        #expect(try TrustSettings.Roots.read(files: []) == .builtIn)
        let roots = try TrustSettings.Roots.read(files: [ca.rootFile, ca.rootFile])
        #expect(roots == .files([ca.rootFile, ca.rootFile], certificates: [ca.pki.rootDER, ca.pki.rootDER]))
        #expect(roots.certificates == [ca.pki.rootDER, ca.pki.rootDER])
        #expect(TrustSettings.Roots.builtIn.certificates == nil)
        let missing = ca.scratch.path("missing.pem")
        #expect(throws: RootFileRefusal.cannotOpen(path: missing, errno: ENOENT)) {
            try TrustSettings.Roots.read(files: [ca.rootFile, missing])
        }
    }

    @Test func theJWSVerifierTrustsTheRootsGiven() throws {
        let ca = try CA()
        let jws = try ca.transaction()
        let trusted = TrustSettings(
            roots: try .read(files: [ca.rootFile]), bundleId: World.bundleId, environments: ["Sandbox"])
        #expect(try trusted.appStoreVerifier().verify(jws).isValid)
        #expect(try trusted.appStoreVerifier().configuration.roots == [ca.pki.rootDER])
        let bytes = TrustSettings(roots: .certificates([ca.pki.rootDER]), environments: ["Sandbox"])
        #expect(try bytes.appStoreVerifier().verify(jws).isValid)
        // The built-in Apple root does not anchor the throwaway CA.
        let apple = TrustSettings(bundleId: World.bundleId, environments: ["Sandbox"])
        #expect(try apple.appStoreVerifier().verify(jws).failure?.code == .untrustedChain)
    }

    @Test func theJWSVerifierChecksAppEnvironmentAndTime() throws {
        let ca = try CA()
        let jws = try ca.transaction()
        let roots = try TrustSettings.Roots.read(files: [ca.rootFile])
        // Production by default, which needs the app's Apple id.
        #expect(TrustSettings().environments == ["Production"])
        #expect(throws: TrustConfigurationError.missingAppAppleId) { try TrustSettings(roots: roots).appStoreVerifier() }
        let production = TrustSettings(roots: roots, appAppleId: 42)
        #expect(try production.appStoreVerifier().verify(jws).failure?.code == .invalidEnvironment)
        let otherApp = TrustSettings(roots: roots, bundleId: "com.example.other", environments: ["Sandbox"])
        #expect(try otherApp.appStoreVerifier().verify(jws).failure?.code == .invalidAppIdentifier)
        // A validation time after the throwaway CA's certificates expire.
        let late = TrustSettings(roots: roots, environments: ["Sandbox"], validationTime: .fixed(4_000_000_000_000))
        #expect(try late.appStoreVerifier().verify(jws).failure?.code == .certificateExpiredOrNotYetValid)
        let signed = TrustSettings(roots: roots, environments: ["Sandbox"], validationTime: .signedDate)
        #expect(try signed.appStoreVerifier().verify(jws).isValid)
    }

    @Test func anAPIServersVerifierAcceptsOnlyItsEnvironment() throws {
        let ca = try CA()
        let jws = try ca.transaction()
        // The settings' environments give way to the server's.
        let settings = TrustSettings(roots: try .read(files: [ca.rootFile]), environments: ["Production"])
        #expect(try settings.appStoreVerifier(for: .sandbox).verify(jws).isValid)
        #expect(throws: TrustConfigurationError.missingAppAppleId) { try settings.appStoreVerifier(for: .production) }
        var withId = settings
        withId.appAppleId = 42
        #expect(try withId.appStoreVerifier(for: .production).verify(jws).failure?.code == .invalidEnvironment)
    }

    @Test func theReceiptVerifierTrustsItsOwnRoots() throws {
        let ca = try CA()
        let receipt = try ClientVerificationTests.receipt()
        let sandbox = TrustSettings(bundleId: "com.revenuecat.sampleapp", environments: ["Sandbox"])
        #expect(try sandbox.receiptVerifier().verify(base64: receipt).isValid)
        // The JWS roots do not touch the receipt verifier, and its own replace Apple Inc. Root.
        var jwsRootsOnly = sandbox
        jwsRootsOnly.roots = try .read(files: [ca.rootFile])
        #expect(try jwsRootsOnly.receiptVerifier().verify(base64: receipt).isValid)
        var otherRoot = sandbox
        otherRoot.receiptRoots = try .read(files: [ca.rootFile])
        #expect(try otherRoot.receiptVerifier().verify(base64: receipt).failure?.code == .untrustedChain)
        let production = TrustSettings(bundleId: "com.revenuecat.sampleapp")
        #expect(try production.receiptVerifier().verify(base64: receipt).failure?.code == .invalidEnvironment)
        #expect(throws: TrustConfigurationError.noRoots) { try TrustSettings(receiptRoots: .certificates([])).receiptVerifier() }
    }

    @Test func clientVerifiersAskForTheSettingsAnItemNeeds() throws {
        let ca = try CA()
        let roots = try TrustSettings.Roots.read(files: [ca.rootFile])
        var asked: [ClientVerifiers.Kind] = []
        let verifiers = ClientVerifiers(settings: { kind in
            asked.append(kind)
            return TrustSettings(
                roots: roots, bundleId: kind == .jws ? World.bundleId : "com.revenuecat.sampleapp", environments: ["Sandbox"])
        })
        #expect(verifiers.jwsSettings == nil)
        #expect(verifiers.jwsRoots == .builtIn)
        let receipt = try ClientVerification.check(
            WebhookBody.Item(line: 1, result: .success(try ClientVerificationTests.receipt())), with: verifiers)
        #expect(receipt.failure == nil)
        #expect(asked == [.receipts])
        let jws = try ClientVerification.check(WebhookBody.Item(line: 2, result: .success(try ca.transaction())), with: verifiers)
        #expect(jws.failure == nil)
        _ = try ClientVerification.check(WebhookBody.Item(line: 3, result: .success(try ca.transaction())), with: verifiers)
        #expect(asked == [.receipts, .jws])
        #expect(verifiers.jwsRoots == roots)
    }

    @Test func settingsThatCannotMakeAVerifierSayWhich() throws {
        let ca = try CA()
        let verifiers = ClientVerifiers(settings: { _ in TrustSettings(receiptRoots: .certificates([])) })
        let item = WebhookBody.Item(line: 1, result: .success(try ca.transaction()))
        #expect(throws: ClientVerifiers.SetupError(kind: .jws, error: .missingAppAppleId)) {
            try ClientVerification.check(item, with: verifiers)
        }
        #expect(verifiers.jwsSettings == nil)
        #expect(throws: ClientVerifiers.SetupError(kind: .receipts, error: .noRoots)) { try verifiers.receipts() }
    }
}
