import AppStoreJWS
import AppStoreReceipt
import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The per-item report of every client flow, made from the flows' typed results: ids, verdict
/// words, outcomes, a restore row's fields, the advice the command words, an aborted batch.
@Suite("Item reports")
struct ItemReportTests {
    static let change = Change(
        entity: .order, key: "order-1", action: .update, fields: [FieldChange(column: "status", before: "pending", after: "paid")])

    static func event(
        uuid: String? = "uuid-1", tx: String = "tx-1", original: String = "orig-1", withTransaction: Bool = true
    ) -> SubscriptionEvent {
        SubscriptionEvent(
            source: .apple, notificationUUID: uuid, notificationType: .known(.subscribed), subtype: .known(.initialBuy),
            transaction: withTransaction ? TransactionFacts(transactionId: tx, originalTransactionId: original, productId: "p") : nil,
            renewal: RenewalFacts(originalTransactionId: "orig-renewal"), raw: "raw")
    }

    /// A hint that says which advice it was given, recording it.
    final class Advisor {
        var given: [ItemReport.Advice] = []
        func hint(_ advice: ItemReport.Advice) -> String? {
            given.append(advice)
            return switch advice {
            case .refusedNotification(let report): "HINT(\(report.kind.rawValue))"
            case .receiptGivenToNotify: "HINT(receipt)"
            case .notificationGivenToRestore: "HINT(notification)"
            case .untrustedChain: "HINT(chain)"
            }
        }
    }

    @Test func anAppliedItemCarriesItsEventsIdsAndTheEnginesVerdict() {
        let outcome = Outcome(verdict: .unmatched, changes: [Self.change], detail: "no order")
        let report = ItemReport(line: 7, IngestResult.applied(Self.event(), outcome)) { _ in
            Issue.record("advice asked"); return nil
        }
        #expect(report.line == 7 && report.verdict == .unmatched && report.outcome == .notFound)
        #expect(report.notificationUUID == "uuid-1" && report.notificationType == "SUBSCRIBED" && report.subtype == "INITIAL_BUY")
        #expect(report.transactionId == "tx-1" && report.originalTransactionId == "orig-1")
        #expect(report.changes == [Self.change] && report.detail == "no order" && report.error == nil && !report.dryRun)
        // Without a transaction, the renewal info's original id.
        let renewal = ItemReport.applied(line: 1, event: Self.event(withTransaction: false), outcome: outcome)
        #expect(renewal.transactionId == nil && renewal.originalTransactionId == "orig-renewal")
        let applied = ItemReport.applied(line: 1, event: Self.event(), outcome: Outcome(verdict: .duplicate, detail: "seen"))
        #expect(applied.verdict == .duplicate && applied.outcome == .success)
    }

    @Test func aPoisonItemReportsOnlyTheIdsThatFit() {
        let long = String(repeating: "x", count: StoredFields.maxId + 1)
        let fits = String(repeating: "y", count: StoredFields.maxId)
        let event = Self.event(uuid: long, tx: fits, original: long)
        let report = ItemReport(line: 3, IngestResult.poison(event, why: "too long")) { _ in nil }
        #expect(report.verdict == .rejected && report.outcome == .invalid && report.error == "too long")
        #expect(report.notificationUUID == nil && report.originalTransactionId == nil)
        #expect(report.transactionId == fits && report.notificationType == "SUBSCRIBED")
        #expect(report.changes.isEmpty && report.detail == nil)
    }

    @Test(arguments: Backend.available)
    func notifysRefusalsCarryTheAdviceInTheCommandsWords(_ backend: Backend) throws {
        let world = try World(backend)
        let transaction = try ClientVerificationTests.signed(world, "tx-9", original: "orig-9")
        let receipt = try ClientVerificationTests.receipt()
        let lines = [Lines.unreadable, transaction, receipt]
        let results = try world.commit(lines)
        #expect(results.count == 3)
        let advisor = Advisor()
        let reports = results.map { ItemReport(line: $0.line, $0.result, hint: advisor.hint) }
        #expect(reports.map(\.line) == [1, 2, 3])
        #expect(reports.map(\.verdict) == [.rejected, .rejected, .rejected])
        #expect(reports[0].outcome == .invalid && !(reports[0].error ?? "").contains("HINT"))
        guard case .rejected(.failedVerification(let failure, let report, false)) = results[1].result else {
            Issue.record("line 2 is not refused in verification: \(results[1].result)")
            return
        }
        #expect(report.kind == .transaction)
        #expect(reports[1].error == failure.plainMessage + "; HINT(transaction)")
        #expect(reports[1].outcome == ItemOutcome(failure))
        #expect(reports[2].error?.hasSuffix("; HINT(receipt)") == true)
        #expect(advisor.given.count == 2)

        let notApplicable = ItemReport(line: 4, Refusal.notApplicable, hint: advisor.hint)
        #expect(notApplicable.error == "not a notification the engine can apply" && notApplicable.outcome == .invalid)
        // No words for the advice: the failure alone.
        let plain = ItemReport(line: 2, results[1].result) { _ in nil }
        #expect(plain.error == failure.plainMessage)
    }

    @Test func aReplayedItemsResult() {
        let failure = VerificationFailure(.invalidSignature, "bad signature")
        let receipt = ItemReport(line: 12, UnmatchedReplay.Result.refusedReceipt(failure))
        #expect(receipt.error == "app receipt: bad signature" && receipt.outcome == .unverified && receipt.verdict == .rejected)
        let jws = ItemReport(line: 12, UnmatchedReplay.Result.refusedJWS(VerificationFailure(.invalidJWTFormat, "not a JWS")))
        #expect(jws.error == "not a JWS" && jws.outcome == .invalid)
        let inapplicable = ItemReport(line: 13, UnmatchedReplay.Result.notApplicable("no transaction"))
        #expect(inapplicable.error == "no transaction" && inapplicable.outcome == .invalid)
        let applied = ItemReport(line: 14, UnmatchedReplay.Result.applied(Self.event(), Outcome(verdict: .applied, detail: "ok")))
        #expect(applied.verdict == .applied && applied.outcome == .success && applied.transactionId == "tx-1")
    }

    @Test func aReceiptEntrysResult() {
        var entry = InAppPurchase()
        entry.transactionId = "1000"
        entry.originalTransactionId = "900"
        let skipped = ItemReport(line: 2, entry: entry, ClientSubmission.EntryResult.skipped("cancelled"))
        #expect(skipped.transactionId == "1000" && skipped.originalTransactionId == "900" && skipped.detail == "cancelled")
        #expect(skipped.outcome == ClientSubmission.EntryResult.skipped("cancelled").outcome && skipped.error == nil)
        let incomplete = ItemReport(line: 2, entry: entry, ClientSubmission.EntryResult.incomplete("no ids"))
        #expect(incomplete.verdict == .rejected && incomplete.error == "no ids" && incomplete.transactionId == nil)
    }

    @Test func aRestoredRowAddsWhatTheLookUpFound() throws {
        let tx = TransactionFacts(transactionId: "tx-5", originalTransactionId: "orig-5", productId: "p")
        let result = RestoreResult(
            verdict: .transferred, basis: .originalTransactionId, orderNos: ["a", "b"], contractId: "orig-5", owner: "bob",
            contractStatus: .gracePeriod, contractExpires: 1_750_000_000_000, detail: "moved", changes: [Self.change],
            engineOutcome: Outcome(verdict: .duplicate, detail: "seen"), previousOwner: "alice")
        let report = ItemReport(line: 4, RestoreSubmission.Row.restored(tx, result)) { _ in nil }
        #expect(report.verdict == .transferred && report.outcome == .success && report.detail == "moved")
        #expect(report.transactionId == "tx-5" && report.originalTransactionId == "orig-5" && report.changes == [Self.change])
        #expect(
            report.extra.map(\.key) == ["basis", "orders", "contract", "owner", "status", "expires", "previousOwner", "engineVerdict"])
        #expect(
            report.extra.map(\.value) == [
                .string("original-transaction-id"), .string("a b"), .string("orig-5"), .string("bob"), .string("grace_period"),
                .string(Timestamp.iso8601(1_750_000_000_000)), .string("alice"), .string("duplicate"),
            ])
        // A look-up that found nothing: nulls, and neither previous owner nor engine verdict.
        let unknown = ItemReport(line: 1, RestoreResult(verdict: .unknown, detail: "nothing"), tx: tx)
        #expect(unknown.outcome == .notFound && unknown.extra.count == 6)
        #expect(unknown.extra.map(\.value) == [.null, .string(""), .null, .null, .null, .null])

        let empty = ItemReport(line: 2, RestoreSubmission.Row.emptyReceipt) { _ in nil }
        #expect(empty.verdict == .unknown && empty.outcome == .notFound && empty.error == nil)
        #expect(empty.detail == "the app receipt holds no in-app purchase: nothing to restore")
        let notATransaction = ItemReport(line: 3, RestoreSubmission.Row.notATransaction) { _ in nil }
        #expect(notATransaction.error == RestoreSubmission.notATransaction && notATransaction.outcome == .invalid)
        var entry = InAppPurchase()
        entry.transactionId = "1000"
        let skipped = ItemReport(line: 5, RestoreSubmission.Row.skippedEntry(entry, "cancelled")) { _ in nil }
        #expect(skipped.verdict == .rejected && skipped.outcome == .failed && skipped.error == "cancelled")
        #expect(skipped.transactionId == "1000")
    }

    @Test(arguments: Backend.available)
    func restoreAdvisesOnANotificationAndAnUntrustedChain(_ backend: Backend) throws {
        let world = try World(backend)
        let notification = world.verifier.verify(try world.lifecycle(0)[0], as: .transaction)
        let foreign = world.verifier.verify(
            try ClientVerificationTests.signed(world, "tx-1", original: "orig-1", by: try TestPKI.make()), as: .transaction)
        let advisor = Advisor()
        let rows = [notification, foreign].map { report in
            ItemReport(line: 1, RestoreSubmission.Row.refusedJWS(report.failure!, report), hint: advisor.hint)
        }
        #expect(try #require(foreign.failure).code == .untrustedChain)
        #expect(rows[0].error == notification.failure!.plainMessage + "; HINT(notification)")
        #expect(rows[1].error == foreign.failure!.plainMessage + "; HINT(chain)")
        #expect(rows.map(\.outcome) == [ItemOutcome(notification.failure!), .unverified])
        // Another failure of a transaction: no advice.
        let other = VerificationFailure(.invalidEnvironment, "wrong environment")
        let plain = ItemReport(line: 1, RestoreSubmission.Row.refusedJWS(other, foreign), hint: advisor.hint)
        #expect(plain.error == "wrong environment" && advisor.given.count == 2)
    }

    @Test func anAbortedBatchReportsEveryLineNotApplied() throws {
        var first = ItemReport.applied(
            line: 1, event: Self.event(), outcome: Outcome(verdict: .applied, changes: [Self.change], detail: "ok"))
        first.dryRun = true
        first.extra = [("k", .string("v"))]
        let cause = ItemReport.rejected(line: 2, VerificationFailure(.invalidSignature, "bad signature"), hint: "look")
        let aborted = try #require(AbortedBatch(reports: [first, cause], unread: [3, 4], batch: "the B batch"))
        #expect(aborted.cause.line == 2 && aborted.why == "rejected: bad signature; look")
        let lines = aborted.reports
        #expect(lines.map(\.line) == [1, 2, 3, 4])
        #expect(lines.allSatisfy { $0.verdict == .notApplied && $0.outcome == .failed })
        #expect(lines.allSatisfy { $0.changes.isEmpty && $0.detail == nil && !$0.dryRun })
        #expect(
            lines.map(\.error) == [
                "not applied: the B batch was rolled back at line 2",
                "rejected: bad signature; look; the B batch was rolled back: nothing was applied",
                "not applied: the B batch was rolled back at line 2", "not applied: the B batch was rolled back at line 2",
            ])
        // Ids and a row's own fields stay.
        #expect(lines[0].transactionId == "tx-1" && lines[0].notificationUUID == "uuid-1" && lines[0].extra.map(\.key) == ["k"])
        #expect(lines[2].transactionId == nil)

        // An engine verdict that failed: its detail says why.
        let unmatched = ItemReport.applied(line: 5, event: Self.event(), outcome: Outcome(verdict: .unmatched, detail: "no order"))
        let stopped = try #require(AbortedBatch(reports: [unmatched], unread: [], batch: "the B batch"))
        #expect(stopped.why == "unmatched: no order" && stopped.reports.count == 1)
        #expect(stopped.reports[0].error == "unmatched: no order; the B batch was rolled back: nothing was applied")
        #expect(AbortedBatch(reports: [], unread: [1], batch: "the B batch") == nil)
    }
}
