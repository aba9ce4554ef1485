import AppStoreJWS
import AppleFlows
import ClientSubmissions
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import AppStoreAPI

/// `apple reconcile`'s operation in process: Apple's answers from a stand-in source, the store of each backend.
@Suite("apple reconcile: the operation")
struct AppleReconcileOperationTests {
    /// Apple's answers, by originalTransactionId; an id it does not know is `notFound`.
    final class Answers: ReconcileSource {
        var statuses: [String: [SubscriptionStatusItem]] = [:]
        var histories: [String: [String]] = [:]
        /// Histories in several pages (instead of `histories`' one).
        var historyPages: [String: [[String]]] = [:]
        /// Pages handed on so far.
        var pagesHanded = 0
        var asked: [String] = []

        func statuses(_ transactionId: String) throws -> (server: APIServer, items: [SubscriptionStatusItem]) {
            asked.append(transactionId)
            guard let items = statuses[transactionId] else {
                throw AppStoreAPIError(.notFound, "Transaction id not found.")
            }
            return (.sandbox, items)
        }

        func history(_ transactionId: String, page: (SignedTransactions) throws -> Void) throws {
            let pages = historyPages[transactionId] ?? [histories[transactionId] ?? []]
            for (index, items) in pages.enumerated() {
                pagesHanded += 1
                try page(SignedTransactions(server: .sandbox, items: items, pages: index + 1))
            }
        }

        func transaction(_ transactionId: String) throws -> SignedTransactions {
            SignedTransactions(server: .sandbox, items: [], pages: 1)
        }

        func lookup(_ orderId: String) throws -> SignedTransactions? { nil }
    }

    /// Subscription `orig-0` bought with order 0 (its INITIAL_BUY notified); Apple says it renewed
    /// (period 1, a transaction the database never saw) and auto-renew is now off.
    func world(_ backend: Backend) throws -> (World, Answers, String) {
        let world = try World(backend)
        _ = try world.commit([try world.lifecycle(0)[0]])
        let answers = Answers()
        var renewed = world.transaction("0001", original: "orig-0", period: 1)
        renewed.signedDate = World.t0 + 31 * World.day
        let tx = try world.pki.sign(payload: renewed.json)
        let renewal = try world.pki.sign(
            payload: JWSForge.RenewalInfoPayload(
                originalTransactionId: "orig-0", autoRenewProductId: World.product, productId: World.product,
                autoRenewStatus: 0, signedDate: World.t0 + 31 * World.day, environment: "Sandbox",
                renewalDate: World.t0 + 60 * World.day
            ).json)
        let item = JSONValue.object([
            ("status", .int(1)), ("originalTransactionId", .string("orig-0")), ("signedTransactionInfo", .string(tx)),
            ("signedRenewalInfo", .string(renewal)),
        ])
        answers.statuses["orig-0"] = [
            SubscriptionStatusItem(group: "g", status: 1, original: "orig-0", transaction: tx, renewal: renewal, json: item)
        ]
        answers.histories["orig-0"] = [tx]
        return (world, answers, item.serialized())
    }

    func reconcile(_ world: World, _ answers: Answers, apply: Bool) -> AppleReconcile {
        AppleReconcile(
            store: world.store, source: answers, verifier: { _ in world.verifier },
            context: EngineContext(actor: "tester", command: "apple reconcile"), apply: apply)
    }

    func changes(_ result: AppleReconcile.Result) -> [String] {
        result.rows.flatMap { row -> [String] in
            guard case .applied(_, _, let outcome) = row else { return ["not applied"] }
            return outcome.changes.map { "\($0.entity.rawValue) \($0.action.rawValue) \($0.fields.map(\.column))" }
        }
    }

    @Test(arguments: Backend.available)
    func historyItemsPastTheBoundStopTheSubscriptionAndWriteNothing(_ backend: Backend) throws {
        let (world, answers, _) = try world(backend)
        // Items that do not verify are kept to be stored as rejected: 3 MiB a page, for ever.
        let big = String(repeating: "x", count: 3 << 20)
        answers.historyPages["orig-0"] = (1...40).map { ["\(big)\($0)"] }
        let before = try world.counts
        let error = #expect(throws: AppStoreAPIError.self) {
            try reconcile(world, answers, apply: true).reconcile("orig-0")
        }
        #expect(error?.message.contains("page 22 brings the items kept for this subscription past 64 MiB") == true)
        #expect(answers.pagesHanded == 22, "no page is read past the bound")
        #expect(try world.counts == before)
    }

    @Test(arguments: Backend.available)
    func aDryRunPredictsTheRunThatFixesItAndThenItAgrees(_ backend: Backend) throws {
        let (world, answers, _) = try world(backend)
        let before = try world.counts
        let dry = try reconcile(world, answers, apply: false).reconcile("orig-0")
        #expect(!dry.agrees)
        #expect(try world.counts == before, "a dry run writes nothing")
        let real = try reconcile(world, answers, apply: true).reconcile("orig-0")
        #expect(changes(real) == changes(dry))
        #expect(changes(real).contains { $0.hasPrefix("order insert") })
        let contract = try #require(try world.contract("orig-0"))
        #expect(contract.autoRenew == false)
        #expect(contract.expiresDate == World.t0 + 60 * World.day)
        let kept = try world.ledger(original: "orig-0").filter { $0.source == .appleAPI }
        #expect(kept.count == 2, "the history transaction and the status item")

        let counts = try world.counts
        let again = try reconcile(world, answers, apply: true).reconcile("orig-0")
        #expect(again.agrees)
        #expect(try world.counts == counts, "an agreeing subscription keeps nothing")
    }

    @Test(arguments: Backend.available)
    func aKeptStatusItemIsReadBackAsTheSameEvent(_ backend: Backend) throws {
        let (world, answers, item) = try world(backend)
        let result = try reconcile(world, answers, apply: true).reconcile("orig-0")
        let applied = result.rows.compactMap { row -> SubscriptionEvent? in
            if case .applied(.status, let event, _) = row { return event }
            return nil
        }
        let event = try #require(applied.first)
        #expect(event.status == 1)
        let entry = try #require(try world.ledger(original: "orig-0").first { $0.source == .appleAPI && $0.raw == item })
        let rebuilt = try #require(FactRebuild.event(entry))
        #expect(rebuilt.source == .appleAPI)
        #expect(rebuilt.facts.map(\.identity) == event.facts.map(\.identity))
        #expect(rebuilt.facts.contains { $0.kind == .notification }, "the status is a fact again")
        // A kept history transaction reads back as a transaction of Apple's API.
        let tx = try #require(try world.ledger(original: "orig-0").first { $0.source == .appleAPI && $0.raw != item })
        #expect(FactRebuild.event(tx)?.status == nil)
        #expect(FactRebuild.event(tx)?.source == .appleAPI)
    }

    @Test(arguments: Backend.available)
    func allResumesAfterItsCheckpointWhichAFinishedRunRemoves(_ backend: Backend) throws {
        let (world, answers, _) = try world(backend)
        _ = try world.commit([try world.lifecycle(1)[0]])
        let dryRun = reconcile(world, answers, apply: false)
        _ = try dryRun.reconcile("orig-0", checkpoint: true)
        #expect(try world.store.read { try $0.checkpoint(named: AppleReconcile.checkpointName) } == nil, "a dry run saves none")
        #expect(try dryRun.plan(.all(status: nil, since: nil)).originals == ["orig-0", "orig-1"])

        let run = reconcile(world, answers, apply: true)
        _ = try run.reconcile("orig-0", checkpoint: true)
        let saved = try world.store.read { try $0.checkpoint(named: AppleReconcile.checkpointName) }
        #expect(saved?.value == "orig-0")
        let plan = try run.plan(.all(status: nil, since: nil))
        #expect(plan.originals == ["orig-1"])
        #expect(plan.resumedAfter == "orig-0")
        #expect(try run.plan(.all(status: .expired, since: nil)).originals.isEmpty)

        // Apple does not know orig-1: a row, not a failure of the run.
        let unknown = try run.reconcile("orig-1", checkpoint: true)
        guard case .unknown = try #require(unknown.rows.first) else {
            Issue.record("expected unknown, got \(unknown.rows)")
            return
        }
        try run.finishAll()
        #expect(try world.store.read { try $0.checkpoint(named: AppleReconcile.checkpointName) } == nil)
        #expect(try run.plan(.all(status: nil, since: World.t0 + 1_000 * World.day)).originals.isEmpty)
    }

    @Test(arguments: Backend.available)
    func aUserWithoutContractsIsRefusedBeforeAppleIsAsked(_ backend: Backend) throws {
        let (world, answers, _) = try world(backend)
        #expect(throws: AppleReconcile.ScopeError.userHasNoContracts("nobody")) {
            try reconcile(world, answers, apply: false).plan(.user("nobody"))
        }
        #expect(try reconcile(world, answers, apply: false).plan(.user("user-0")).originals == ["orig-0"])
        #expect(answers.asked.isEmpty)
    }

    @Test func eachRowIsReportedAsNotifyReportsItWithItsAnswerAndOutcome() throws {
        let (world, answers, _) = try world(.sqlite)
        let result = try reconcile(world, answers, apply: false).reconcile("orig-0")
        let reports = result.rows.map { ItemReport(line: 3, original: "orig-0", $0, dryRun: true) }
        #expect(!reports.isEmpty)
        for report in reports {
            #expect(report.verdict == .applied)
            #expect(report.outcome == .failed, "a difference is not a success: exit 1")
            #expect(report.dryRun)
            #expect(report.line == 3)
            #expect(report.originalTransactionId == "orig-0")
            #expect(!report.changes.isEmpty)
        }
        #expect(reports.map { $0.extra.first?.value } == [.string("transaction history"), .string("subscription status")])
        // Under --apply the same changes were written: done, not a difference left (exit 0).
        let written = result.rows.map { ItemReport(line: 3, original: "orig-0", $0, dryRun: false) }
        #expect(written.allSatisfy { $0.outcome == .success && !$0.dryRun }, "\(written.map(\.outcome))")

        let refused = ItemReport(
            line: 1, original: "orig-0", .refused(.history, VerificationFailure(.invalidSignature, "the signature does not verify")),
            dryRun: false)
        #expect(refused.verdict == .rejected)
        #expect(refused.outcome == .unverified)
        let unknown = ItemReport(
            line: 2, original: "orig-9", .unknown(AppStoreAPIError(.notFound, "Transaction id not found.")), dryRun: false)
        #expect(unknown.verdict == .unknown)
        #expect(unknown.outcome == .notFound)
        #expect(unknown.error?.contains("orig-9") == true)
    }

    @Test func aTransactionIdGivenAsTheSubscriptionIsUnknownNotAgreeing() throws {
        let (world, answers, _) = try world(.sqlite)
        // Apple answers for the customer of transaction 0001, whose subscription is orig-0.
        answers.statuses["0001"] = answers.statuses["orig-0"]
        answers.histories["0001"] = answers.histories["orig-0"]
        let result = try reconcile(world, answers, apply: true).reconcile("0001")
        guard case .unknown(let error) = try #require(result.rows.first) else {
            Issue.record("expected unknown, got \(result.rows)")
            return
        }
        #expect(error.message.contains("--transaction"))
    }
}
