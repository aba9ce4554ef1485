import Foundation
import IAPFoundation
import StoreTestSupport
import SubscriptionDerivation
import SubscriptionModel
import Testing

@Suite("Renewals, state changes, refunds and ordering")
struct LifecycleTests {
    let token = "0e7a6d0c-1111-4c3c-9d61-000000000001"

    /// A harness with alice's subscription 1000 bought at t0.
    func subscribed() throws -> Harness {
        let h = try Harness()
        try h.createOrder(no: token, user: "alice")
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        return h
    }

    @Test func didRenewAddsAPaidOrderForTheContractsUserAndExtendsExpiry() throws {
        let h = try subscribed()
        let out = try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        #expect(out.verdict == .applied)
        let renewal = try #require(try h.order(tradeNo: "1001"))
        #expect(renewal.userId == "alice")
        #expect(renewal.status == .paid)
        #expect(renewal.originNo == "1000")
        #expect(try h.contract("1000")?.expiresDate == t0 + 60 * day)
        #expect(out.orderNos == [renewal.no])
    }

    @Test func didRenewForAKnownTransactionIsADuplicate() throws {
        let h = try subscribed()
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        let again = try h.apply(notification("DID_RENEW", signed: t0 + 30 * day + 9, tx: tx("1001", period: 1)))
        #expect(again.verdict == .duplicate)
        #expect(try h.orders().count == 2)
    }

    @Test func didRenewWithoutContractIsUnmatched() throws {
        let h = try Harness()
        let out = try h.apply(notification("DID_RENEW", signed: t0, tx: tx("1001", period: 1)))
        #expect(out.verdict == .unmatched)
        #expect(try h.orders().isEmpty)
    }

    @Test func expiryNeverMovesBackwards() throws {
        let h = try subscribed()
        try h.apply(notification("DID_RENEW", signed: t0 + 60 * day, tx: tx("1002", period: 2)))
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        #expect(try h.contract("1000")?.expiresDate == t0 + 90 * day)
        #expect(try h.orders().count == 3)
    }

    @Test(
        arguments: [
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", ContractStatus.canceled),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", .gracePeriod),
            ("DID_FAIL_TO_RENEW", nil, .billingRetry),
            // Apple keeps retrying after the grace period: billing retry, not expired.
            ("GRACE_PERIOD_EXPIRED", nil, .billingRetry),
            ("EXPIRED", "VOLUNTARY", .expired),
            ("EXPIRED", "BILLING_RETRY", .expired),
        ] as [(String, String?, ContractStatus)])
    func stateChanges(type: String, subtype: String?, expected: ContractStatus) throws {
        let h = try subscribed()
        let out = try h.apply(
            notification(
                type, subtype, signed: t0 + day,
                tx: tx("1000", token: token), autoRenew: 0))
        #expect(out.verdict == .applied)
        #expect(try h.contract("1000")?.status == expected)
        #expect(try h.contract("1000")?.autoRenew == false)
    }

    @Test func autoRenewEnabledMakesTheContractActiveAgain() throws {
        let h = try subscribed()
        try h.apply(notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + day, tx: tx("1000"), autoRenew: 0))
        try h.apply(notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: t0 + 2 * day, tx: tx("1000"), autoRenew: 1))
        let c = try #require(try h.contract("1000"))
        #expect(c.status == .active)
        #expect(c.autoRenew)
    }

    @Test func anOlderStateChangeArrivingLaterIsStaleAndKeepsTheState() throws {
        let h = try subscribed()
        try h.apply(notification("EXPIRED", "VOLUNTARY", signed: t0 + 31 * day, tx: tx("1000"), autoRenew: 0))
        let late = try h.apply(
            notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: t0 + 2 * day, tx: tx("1000"), autoRenew: 1))
        #expect(late.verdict == .stale)
        #expect(late.changes.isEmpty)
        #expect(try h.contract("1000")?.status == .expired)
        let row = try h.store.read { try $0.ledgerEntry(id: try #require(late.ledgerId)) }
        #expect(row?.verdict == .stale)
    }

    @Test func aLateRenewalIsStillRecordedAsMoneyButDoesNotOverrideNewerState() throws {
        let h = try subscribed()
        try h.apply(notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 40 * day, tx: tx("1000"), autoRenew: 0))
        let out = try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        #expect(out.verdict == .applied)
        #expect(try h.order(tradeNo: "1001")?.status == .paid)
        let c = try #require(try h.contract("1000"))
        #expect(c.status == .canceled)
        #expect(c.expiresDate == t0 + 60 * day)
    }

    @Test func refundOfTheCurrentPeriodRevokesTheContractAndReversalUndoesIt() throws {
        let h = try subscribed()
        let refund = try h.apply(notification("REFUND", signed: t0 + 2 * day, tx: tx("1000", token: token, revoked: true), autoRenew: nil))
        #expect(refund.verdict == .applied)
        #expect(try h.order(token)?.status == .refunded)
        #expect(try h.contract("1000")?.status == .revoked)

        let reversed = try h.apply(notification("REFUND_REVERSED", signed: t0 + 3 * day, tx: tx("1000", token: token), autoRenew: nil))
        #expect(reversed.verdict == .applied)
        #expect(try h.order(token)?.status == .paid)
        #expect(try h.contract("1000")?.status == .active)
    }

    @Test func refundOfAnOlderPeriodLeavesTheContractActive() throws {
        let h = try subscribed()
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        try h.apply(notification("REFUND", signed: t0 + 35 * day, tx: tx("1000", token: token, revoked: true), autoRenew: nil))
        #expect(try h.order(token)?.status == .refunded)
        #expect(try h.contract("1000")?.status == .active)
    }

    @Test func revokeMarksTheOrderRevoked() throws {
        let h = try subscribed()
        try h.apply(notification("REVOKE", signed: t0 + 2 * day, tx: tx("1000", token: token, revoked: true), autoRenew: nil))
        #expect(try h.order(token)?.status == .revoked)
        #expect(try h.contract("1000")?.status == .revoked)
    }

    @Test func aRefundForATransactionNeverSeenRecordsItAsRefunded() throws {
        let h = try subscribed()
        try h.apply(notification("REFUND", signed: t0 + 40 * day, tx: tx("1001", period: 1, revoked: true), autoRenew: nil))
        #expect(try h.order(tradeNo: "1001")?.status == .refunded)
    }

    @Test func informationalTypesAreIgnoredButAnUnseenPaymentBecomesAnOrder() throws {
        let h = try subscribed()
        let test = try h.apply(
            SubscriptionEvent(source: .apple, notificationUUID: "t", notificationType: .known(.test), signedDate: t0, raw: "x"))
        #expect(test.verdict == .ignored)
        let unknown = try h.apply(notification("SOMETHING_NEW", signed: t0 + day, tx: tx("1000")))
        #expect(unknown.verdict == .ignored)
        let consumption = try h.apply(notification("CONSUMPTION_REQUEST", signed: t0 + 31 * day, tx: tx("1001", period: 1)))
        #expect(consumption.verdict == .applied)
        #expect(try h.order(tradeNo: "1001") != nil)
        #expect(try h.contract("1000")?.status == .active)
    }

    @Test func renewalPreferenceRecordsTheNextProduct() throws {
        let h = try subscribed()
        let out = try h.apply(
            notification("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", signed: t0 + day, tx: tx("1000"), nextProduct: "pro.basic"))
        #expect(out.verdict == .applied)
        #expect(try h.contract("1000")?.nextProductId == "pro.basic")
    }

    @Test func anySetOfEventsInAnyOrderConvergesToTheSignedDateOrderResult() throws {
        var events = [
            notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)),
            notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)),
            notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE", signed: t0 + 35 * day, tx: tx("1001", period: 1), nextProduct: "pro.yearly"),
            notification("DID_RENEW", signed: t0 + 60 * day, tx: tx("1002", period: 2)),
            notification("REFUND", signed: t0 + 65 * day, tx: tx("1001", period: 1, revoked: true), autoRenew: nil),
            notification(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 70 * day, tx: tx("1002", period: 2), autoRenew: 0),
            notification("EXPIRED", "VOLUNTARY", signed: t0 + 91 * day, tx: tx("1002", period: 2), autoRenew: 0),
        ]
        let ordered = try Harness()
        try ordered.createOrder(no: token, user: "alice")
        for e in events { try ordered.apply(e) }
        let expected = try ordered.snapshot()
        #expect(try ordered.contract("1000")?.status == .expired)

        var rng = SplitMix(seed: 42)
        for _ in 0..<25 {
            events.shuffle(using: &rng)
            let h = try Harness()
            try h.createOrder(no: token, user: "alice")
            // The first purchase must be known before anything can attach to the contract; later
            // events in any order.
            let first = events.firstIndex { $0.notificationType == .known(.subscribed) }!
            try h.apply(events[first])
            for (i, e) in events.enumerated() where i != first { try h.apply(e) }
            #expect(try h.snapshot() == expected)
        }
    }
}
