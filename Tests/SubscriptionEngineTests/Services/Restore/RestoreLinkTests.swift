import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `restore --apply` says `restored` only when an order of the user holds the transaction, and the
/// order its product fallback found stays linked through Apple's newer versions without a token.
@Suite("Restore --apply: what it linked, and that the link holds")
struct RestoreLinkTests {
    let pending = "0e7a6d0c-4444-4c3c-9d61-000000000002"
    let bobs = "0e7a6d0c-4444-4c3c-9d61-000000000003"
    let token = "0e7a6d0c-4444-4c3c-9d61-000000000001"

    @Test func theProductFallbackLinksAPurchaseAppleToldFirstWithoutAToken() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let first = try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0 + 1000, tx: tx("3000", original: "3000")))
        #expect(first.verdict == .unmatched)
        // StoreKit's copy, signed a second before Apple's notification.
        let r = try h.restoreApply(tx("3000", original: "3000"), user: "alice")
        #expect(r.basis == .product)
        #expect(r.linked, "\(r.detail)")
        #expect(RestoreVerdict.committed(r) == .restored)
        let order = try #require(try h.order(pending))
        #expect(order.status == .paid)
        #expect(order.tradeNo == "3000")
        #expect(try h.contract("3000")?.userId == "alice")

        // Apple's newer version of the same transaction, still without a token: the link holds.
        var renewed = tx("3000", original: "3000")
        renewed.signedDate = t0 + 2 * day
        let later = try h.apply(
            notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 2 * day, tx: renewed, autoRenew: 0))
        #expect(later.verdict == .applied, "\(later.detail)")
        #expect(try h.order(pending)?.tradeNo == "3000")
        #expect(try h.contract("3000")?.userId == "alice")
        #expect(try h.contract("3000")?.status == .canceled)
        #expect(try h.orders().count == 1)
    }

    @Test func anEngineRefusalIsReportedAsTheEnginesVerdictNotRestored() throws {
        let h = try Harness.subscribed(token: token)
        try h.createOrder(no: bobs, user: "bob")
        // alice's own transaction, but carrying bob's order number: the engine refuses (two owners).
        let r = try h.restoreApply(tx("1000", token: bobs), user: "alice")
        #expect(r.engineOutcome?.verdict == .conflict)
        #expect(!r.linked)
        #expect(r.verdict == .conflict, "\(r.detail)")
        #expect(RestoreVerdict.committed(r) == .conflict)
        #expect(r.detail.contains("not restored"), "\(r.detail)")
    }
}
