import AppStoreJWS
import AppStoreReceipt
import AppleFlows
import ClientSubmissions
import Foundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `verify --apply`'s operation in process on every backend: each item verified as what it is,
/// then a valid signed transaction or receipt through the engine, a refused one kept in the ledger.
@Suite("Client verification (verify --apply)")
struct ClientVerificationTests {
    struct Unexpected: Error {}

    /// RevenueCat's 2020 sandbox receipt (the end-to-end fixture): 9 entries of one subscription.
    static let receiptFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("EndToEndTests/Fixtures/receipts/revenuecat-sandbox-receipt.b64")
    static let receiptOriginal = "1000000692878476"

    static func receipt() throws -> String {
        try String(contentsOf: receiptFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func receiptVerifier() throws -> ReceiptVerifier {
        try ReceiptVerifier(trust: ReceiptTrust(bundleId: "com.revenuecat.sampleapp", environments: ["Sandbox"]))
    }

    /// Verifiers for JWS only: asking for the receipt verifier is a failure.
    static func jwsOnly(_ world: World) -> ClientVerifiers {
        ClientVerifiers(jws: { world.verifier }, receipts: { throw Unexpected() })
    }

    /// Verifiers for receipts only: asking for the JWS verifier is a failure.
    static func receiptsOnly() throws -> ClientVerifiers {
        let verifier = try receiptVerifier()
        return ClientVerifiers(jws: { throw Unexpected() }, receipts: { verifier })
    }

    /// A signed transaction of subscription `original` bought with order `token`.
    static func signed(_ world: World, _ id: String, original: String, token: String? = nil, by pki: TestPKI? = nil) throws -> String {
        try (pki ?? world.pki).sign(payload: world.transaction(id, original: original, token: token).json)
    }

    static func item(_ line: Int, _ text: String) -> WebhookBody.Item {
        WebhookBody.Item(line: line, result: .success(text))
    }

    static func submission(_ world: World, dryRun: Bool = false) -> ClientVerification.Submission {
        ClientVerification.Submission(store: world.store, context: world.context, dryRun: dryRun)
    }

    @Test(arguments: Backend.available)
    func aValidSignedTransactionIsAppliedThroughTheEngine(_ backend: Backend) throws {
        let world = try World(backend)
        let jws = try Self.signed(world, "1000", original: "orig-0", token: World.token(0))
        let checked = try ClientVerification.check(Self.item(1, jws), with: Self.jwsOnly(world))
        guard case .jws(let report) = checked.report else {
            Issue.record("not verified as a JWS: \(checked.report)")
            return
        }
        #expect(report.kind == .transaction && checked.failure == nil && checked.raw == jws)
        let result = try ClientVerification.submit(checked, to: Self.submission(world))
        guard case .transaction(.applied(let event, let outcome))? = result.applied else {
            Issue.record("not applied: \(String(describing: result.applied))")
            return
        }
        #expect(event.source == .client && event.transaction?.transactionId == "1000")
        #expect(outcome.verdict == .applied)
        #expect(result.verdict == .applied && result.outcome == .success && result.isCommitted)
        #expect(try world.order(0)?.status == .paid)
        #expect(try world.contract("orig-0")?.userId == "user-0")
        let ledger = try world.ledger(original: "orig-0")
        #expect(ledger.map(\.verdict) == [.applied])
        #expect(ledger.first?.source == .client && ledger.first?.raw == jws)

        // The same bytes again: the engine's duplicate, still a success.
        let again = try ClientVerification.submit(
            ClientVerification.check(Self.item(1, jws), with: Self.jwsOnly(world)), to: Self.submission(world))
        #expect(again.verdict == .duplicate && again.outcome == .success)
    }

    @Test(arguments: Backend.available)
    func aForgedTransactionIsKeptAsRejectedAndChangesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let forged = try Self.signed(world, "1000", original: "orig-0", token: World.token(0), by: try TestPKI.make())
        let checked = try ClientVerification.check(Self.item(1, forged), with: Self.jwsOnly(world))
        let failure = try #require(checked.failure)
        #expect(ClientVerification.result(checked).outcome == .unverified)
        let result = try ClientVerification.submit(checked, to: Self.submission(world))
        guard case .keptRejected(let why)? = result.applied else {
            Issue.record("not kept as rejected: \(String(describing: result.applied))")
            return
        }
        #expect(why == failure.message)
        #expect(result.verdict == .rejected && result.outcome == .unverified && !result.isCommitted)
        let rows = try RejectedItemsTests.ledger(world)
        #expect(rows.count == 1)
        #expect(rows.first?.verdict == .rejected && rows.first?.source == .client && rows.first?.raw == forged)
        #expect(rows.first?.detail == failure.message && rows.first?.transactionId == nil)
        #expect(try world.order(0)?.status == .pending)
        #expect(try world.contract("orig-0") == nil)
        // Kept once per distinct bytes.
        _ = try ClientVerification.submit(checked, to: Self.submission(world))
        #expect(try world.counts.ledger == 1)
    }

    @Test(arguments: Backend.available)
    func aNotificationOrAnUnreadableItemIsNotApplied(_ backend: Backend) throws {
        let world = try World(backend)
        let notification = try world.lifecycle(0)[0]
        let checked = try ClientVerification.check(Self.item(1, notification), with: Self.jwsOnly(world))
        #expect(checked.failure == nil)
        let result = try ClientVerification.submit(checked, to: Self.submission(world))
        guard case .transaction(.notATransaction(.notification))? = result.applied else {
            Issue.record("a notification was taken: \(String(describing: result.applied))")
            return
        }
        #expect(result.verdict == .rejected && result.outcome == .invalid)
        #expect(try RejectedItemsTests.ledger(world).map(\.verdict) == [.rejected])
        #expect(try world.order(0)?.status == .pending)

        // A line that could not be read: reported, nothing to verify or keep.
        let unreadable = WebhookBody.Item(line: 2, result: .failure(VerificationFailure(.invalidJWTFormat, "line is not valid UTF-8")))
        let none = ClientVerifiers(jws: { throw Unexpected() }, receipts: { throw Unexpected() })
        let refused = try ClientVerification.submit(ClientVerification.check(unreadable, with: none), to: Self.submission(world))
        #expect(refused.applied == nil && refused.checked.raw == nil)
        #expect(refused.outcome == .invalid && refused.verdict == .rejected)
        #expect(try world.counts.ledger == 1)
    }

    @Test(arguments: Backend.available)
    func aDryRunSaysWhatWouldHappenAndWritesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let before = try world.counts
        let valid = try Self.signed(world, "1000", original: "orig-0", token: World.token(0))
        let forged = try Self.signed(world, "2000", original: "orig-1", token: World.token(1), by: try TestPKI.make())
        let verifiers = Self.jwsOnly(world)
        let applied = try ClientVerification.submit(
            ClientVerification.check(Self.item(1, valid), with: verifiers), to: Self.submission(world, dryRun: true))
        #expect(applied.verdict == .applied && applied.outcome == .success)
        let refused = try ClientVerification.submit(
            ClientVerification.check(Self.item(2, forged), with: verifiers), to: Self.submission(world, dryRun: true))
        #expect(refused.verdict == .rejected && refused.outcome == .unverified)
        #expect(try world.counts == before)
        #expect(try world.order(0)?.status == .pending)
        #expect(try world.contract("orig-0") == nil)
    }

    @Test(arguments: Backend.available)
    func withoutApplyNothingIsVerifiedTwiceOrWritten(_ backend: Backend) throws {
        let world = try World(backend)
        let valid = try Self.signed(world, "1000", original: "orig-0", token: World.token(0))
        let result = ClientVerification.result(try ClientVerification.check(Self.item(1, valid), with: Self.jwsOnly(world)))
        #expect(result.applied == nil && result.outcome == .success)
        #expect(try world.counts.ledger == 0)
        #expect(try world.order(0)?.status == .pending)
    }

    @Test(arguments: Backend.available)
    func aReceiptsEntriesEachGoThroughTheEngineInPurchaseOrder(_ backend: Backend) throws {
        let world = try World(backend, orders: 0)
        let base64 = try Self.receipt()
        // A run of receipts never needs the JWS verifier.
        let checked = try ClientVerification.check(Self.item(1, base64), with: try Self.receiptsOnly())
        guard case .receipt(let report) = checked.report, let receipt = report.receipt else {
            Issue.record("not verified as a receipt: \(checked.report)")
            return
        }
        #expect(checked.failure == nil && receipt.inApp.count == 9)

        // A dry run first: every entry's result, nothing written.
        let dry = try ClientVerification.submit(checked, to: Self.submission(world, dryRun: true))
        guard case .receipt(_, let predicted)? = dry.applied else {
            Issue.record("not applied as a receipt: \(String(describing: dry.applied))")
            return
        }
        #expect(predicted.count == 9)
        #expect(try world.counts.ledger == 0)

        var delivered: [String?] = []
        let result = try ClientVerification.submit(checked, to: Self.submission(world)) { entry, _ in
            delivered.append(entry.transactionId)
        }
        guard case .receipt(_, let entries)? = result.applied else {
            Issue.record("not applied as a receipt: \(String(describing: result.applied))")
            return
        }
        // Oldest purchase first, each delivered as it was final.
        #expect(entries.map(\.entry.transactionId) == ReceiptMapping.entries(of: receipt).map(\.transactionId))
        #expect(delivered == entries.map(\.entry.transactionId))
        #expect(entries.first?.entry.transactionId == Self.receiptOriginal)
        // Nobody's purchase yet (a receipt has no appAccountToken): every entry unmatched, exit-worthy
        // as not found; so is the item (it was `rejected` while its entries were written).
        #expect(entries.map(\.result.verdict) == Array(repeating: .unmatched, count: 9))
        #expect(result.outcome == .notFound && result.verdict == .unmatched && result.isCommitted)
        // In the ledger: the receipt kept once, with the first entry; the others point there.
        let ledger = try world.ledger(original: Self.receiptOriginal)
        #expect(ledger.count == 9)
        let first = try #require(ledger.first { $0.raw == base64 })
        #expect(first.transactionId == Self.receiptOriginal)
        #expect(ledger.filter { $0.raw == ReceiptMapping.reference(to: first.id) }.count == 8)
        #expect(ledger.allSatisfy { $0.source == .client && $0.verdict == .unmatched })
    }

    /// A receipt's own verdict agrees with its entries and with its exit status.
    @Test func aReceiptsVerdictIsTheOneThatDecidesItsOutcome() {
        #expect(ClientVerification.receiptVerdict([.duplicate, .unmatched, .applied]) == .unmatched)
        #expect(ClientVerification.receiptVerdict([.duplicate, .applied, .ignored]) == .applied)
        #expect(ClientVerification.receiptVerdict([.duplicate, .stale]) == .duplicate)
        #expect(ClientVerification.receiptVerdict([]) == .ignored)
        for verdicts: [Verdict] in [[.applied, .conflict], [.unmatched], [.duplicate, .ignored]] {
            let verdict = ClientVerification.receiptVerdict(verdicts)
            let decided = verdicts.map(ItemOutcome.init).first { $0 != .success } ?? .success
            #expect(ItemOutcome(verdict) == decided)
        }
    }

    @Test(arguments: Backend.available)
    func aReceiptThatFailsVerificationIsKeptAsRejected(_ backend: Backend) throws {
        let world = try World(backend, orders: 0)
        let base64 = try Self.receipt()
        // The right receipt, the wrong app.
        let verifier = try ReceiptVerifier(trust: ReceiptTrust(bundleId: "com.example.other", environments: ["Sandbox"]))
        let verifiers = ClientVerifiers(jws: { throw Unexpected() }, receipts: { verifier })
        let checked = try ClientVerification.check(Self.item(1, base64), with: verifiers)
        let failure = try #require(checked.failure)
        let result = try ClientVerification.submit(checked, to: Self.submission(world))
        guard case .keptRejected(let why)? = result.applied else {
            Issue.record("not kept as rejected: \(String(describing: result.applied))")
            return
        }
        #expect(why == "app receipt: " + failure.message)
        #expect(result.outcome == .unverified && result.verdict == .rejected)
        let rows = try RejectedItemsTests.ledger(world)
        #expect(rows.map(\.verdict) == [.rejected] && rows.first?.raw == base64 && rows.first?.source == .client)
        #expect(try world.contract(Self.receiptOriginal) == nil)
    }

    @Test func aRunsOutcomeIsOneItemsOwnOrSuccessOrFailed() {
        #expect(ItemOutcome.of([.notFound]) == .notFound)
        #expect(ItemOutcome.of([.success, .success]) == .success)
        #expect(ItemOutcome.of([.success, .conflict]) == .failed)
        #expect(ItemOutcome(VerificationFailure(.invalidJWTFormat, "x")) == .invalid)
        #expect(ItemOutcome(VerificationFailure(.invalidSignature, "x")) == .unverified)
        #expect(ItemOutcome(Verdict.stale) == .success && ItemOutcome(Verdict.unmatched) == .notFound)
        #expect(ItemOutcome(RestoreVerdict.ownedByOther) == .conflict && ItemOutcome(RestoreVerdict.unknown) == .notFound)
    }
}
