import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@Suite("Purchases: SUBSCRIBED and the client path")
struct PurchaseTests {
    let token = "6f1d5a52-0c3c-4a55-9d61-0b7f1f7b1a01"

    @Test func subscribedPaysTheOrderNamedByAppAccountTokenAndCreatesTheContract() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        let out = try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        #expect(out.verdict == .applied)
        let order = try #require(try h.order(token))
        #expect(order.status == .paid)
        #expect(order.tradeNo == "1000")
        #expect(order.originNo == "1000")
        #expect(order.expiresDate == t0 + 30 * day)
        let contract = try #require(try h.contract("1000"))
        #expect(contract.userId == "alice")
        #expect(contract.status == .active)
        #expect(contract.autoRenew)
        #expect(contract.expiresDate == t0 + 30 * day)
        #expect(out.changes.map(\.entity) == [.order, .contract])
        #expect(try h.orders().count == 1)
    }

    @Test(arguments: [true, false])
    func whicheverOfClientAndAppleArrivesSecondFindsTheWorkDone(clientFirst: Bool) throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        let purchase = tx("1000", token: token)
        let apple = notification("SUBSCRIBED", "INITIAL_BUY", signed: t0 + 5, tx: purchase)
        let first = try h.apply(clientFirst ? client(purchase) : apple)
        let before = try h.snapshot()
        let second = try h.apply(clientFirst ? apple : client(purchase))
        #expect(first.verdict == .applied)
        #expect(second.verdict == .duplicate)
        #expect(second.changes.isEmpty)
        #expect(try h.snapshot() == before)
        #expect(try h.orders().count == 1)
    }

    @Test func clientSubmissionOfUnknownTransactionIsUnmatchedAndChangesNothing() throws {
        let h = try Harness()
        let out = try h.apply(client(tx("1000", token: token)))
        #expect(out.verdict == .unmatched)
        #expect(out.detail.contains(token))
        #expect(try h.orders().isEmpty)
        #expect(try h.contracts().isEmpty)
        #expect(try h.ledger().map(\.verdict) == [.unmatched])
    }

    @Test func unmatchedIsReplayedAfterTheOrderIsCreated() throws {
        let h = try Harness()
        let event = notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token))
        let first = try h.apply(event)
        #expect(first.verdict == .unmatched)
        let pending = try h.store.read { try $0.unmatchedLedger(limit: nil) }
        #expect(pending.count == 1)

        try h.createOrder(no: token, user: "alice")
        let replay = try h.store.write { s in
            try h.engine.apply(event, in: s, context: h.context, replaying: pending[0].id)
        }
        #expect(replay.verdict == .applied)
        #expect(try h.order(token)?.status == .paid)
        #expect(try h.store.read { try $0.unmatchedLedger(limit: nil) }.isEmpty)
        #expect(try h.ledger().map(\.verdict) == [.applied])
    }

    @Test func sameNotificationUUIDTwiceIsADuplicate() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        let event = notification("SUBSCRIBED", "INITIAL_BUY", uuid: "n-1", signed: t0, tx: tx("1000", token: token))
        #expect(try h.apply(event).verdict == .applied)
        let again = try h.apply(event)
        #expect(again.verdict == .duplicate)
        #expect(again.detail.contains("n-1"))
        // Every later delivery points at the item that was applied, not at the previous duplicate.
        let applied = try #require(try h.ledger().first { $0.verdict == .applied })
        let third = try h.apply(event)
        #expect(third.verdict == .duplicate)
        #expect(third.detail.contains("(ledger #\(applied.id): applied)"), "\(third.detail)")
    }

    @Test func dryRunWritesNothingButReportsTheChanges() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        let out = try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)), dryRun: true)
        #expect(out.verdict == .applied)
        #expect(out.ledgerId == nil)
        #expect(out.changes.contains { $0.fields.contains { $0.column == "status" && $0.after == "paid" } })
        #expect(try h.order(token)?.status == .pending)
        #expect(try h.contracts().isEmpty)
        #expect(try h.ledger().isEmpty)
    }

    @Test func resubscribeWithSameOriginalAndNoTokenReactivatesTheContract() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        try h.apply(notification("EXPIRED", "VOLUNTARY", signed: t0 + 31 * day, tx: tx("1000", token: token), autoRenew: 0))
        #expect(try h.contract("1000")?.status == .expired)
        let out = try h.apply(notification("SUBSCRIBED", "RESUBSCRIBE", signed: t0 + 60 * day, tx: tx("1002", period: 2)))
        #expect(out.verdict == .applied)
        let contract = try #require(try h.contract("1000"))
        #expect(contract.status == .active)
        #expect(contract.expiresDate == t0 + 90 * day)
        let newOrder = try #require(try h.order(tradeNo: "1002"))
        #expect(newOrder.userId == "alice")
        #expect(newOrder.status == .paid)
        #expect(newOrder.no != token)
    }

    @Test func resubscribeAfterExpiryWithNewOriginalAndNewTokenMakesANewContract() throws {
        let h = try Harness()
        let second = "6f1d5a52-0c3c-4a55-9d61-0b7f1f7b1a02"
        try h.createOrder(no: token, user: "alice")
        try h.createOrder(no: second, user: "alice")
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        try h.apply(
            notification("SUBSCRIBED", "RESUBSCRIBE", signed: t0 + 90 * day, tx: tx("2000", original: "2000", token: second, period: 3)))
        #expect(try h.contracts().count == 2)
        #expect(try h.contract("2000")?.userId == "alice")
        #expect(try h.order(second)?.tradeNo == "2000")
    }

    @Test func aTokenOrderThatIsAlreadyPaidIsNeverOverwritten() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        // Renewals echo the original appAccountToken.
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", token: token, period: 1)))
        #expect(try h.order(token)?.tradeNo == "1000")
        #expect(try h.order(tradeNo: "1001")?.userId == "alice")
        #expect(try h.orders().count == 2)
    }

    @Test func oneTimeChargePaysItsOrderWithoutAContract() throws {
        let h = try Harness()
        try h.createOrder(no: token, user: "bob", product: "coins.100")
        var coins = tx("5000", original: "5000", token: token, product: "coins.100")
        coins.type = .init(rawValue: "Consumable")
        coins.expiresDate = nil
        let out = try h.apply(notification("ONE_TIME_CHARGE", signed: t0, tx: coins, autoRenew: nil))
        #expect(out.verdict == .applied)
        #expect(try h.order(token)?.status == .paid)
        #expect(try h.contracts().isEmpty)
    }

    @Test func sqlMetacharactersInIdsAreStoredVerbatim() throws {
        let h = try Harness()
        let evil = "x'; DROP TABLE orders;--"
        try h.createOrder(no: evil, user: "mallory\"")
        let out = try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1'0", original: "1'0", token: evil)))
        #expect(out.verdict == .applied)
        #expect(try h.order(evil)?.tradeNo == "1'0")
        #expect(try h.contract("1'0")?.userId == "mallory\"")
    }
}

/// An order the app creates for a token only after a payment carrying that token got a row of its
/// own: the payment stays on its row and the app's order is left as it is, and later events of the
/// subscription still apply (they failed with a duplicate trade_no: the token's order was given the
/// transaction while its first row still held it). Found by `SnapshotAgreementTests`' histories.
@Suite("Purchases: a token's order created after its payment")
struct LateTokenOrderTests {
    @Test(arguments: Backend.available)
    func thePaymentKeepsItsRowAndLaterEventsStillApply(backend: Backend) throws {
        let h = try Harness(backend: backend)
        try h.createOrder(no: "tok-a", user: "alice")
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: "tok-a")))
        let renewal = try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", token: "tok-b", period: 1)))
        #expect(renewal.verdict == .applied)
        let first = try #require(try h.order(tradeNo: "1001"))
        try h.createOrder(no: "tok-b", user: "alice")

        let next = try h.apply(notification("DID_RENEW", signed: t0 + 60 * day, tx: tx("1002", period: 2)))
        #expect(next.verdict == .applied)
        #expect(try h.order(tradeNo: "1001")?.no == first.no)
        let appOrder = try #require(try h.order("tok-b"))
        #expect(appOrder.tradeNo == nil)
        #expect(appOrder.status == .pending)
        #expect(try h.order(tradeNo: "1002")?.no.hasPrefix("renewal-") == true)
        #expect(try h.contract("1000")?.expiresDate == t0 + 90 * day)
        // A later period carrying the same token does not take the app's order either.
        let later = try h.apply(notification("DID_RENEW", signed: t0 + 90 * day, tx: tx("1003", token: "tok-b", period: 3)))
        #expect(later.verdict == .applied)
        #expect(try h.order("tok-b")?.tradeNo == nil)
        #expect(try h.order(tradeNo: "1003")?.no.hasPrefix("renewal-") == true)
    }
}
