import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Restore look-ups: each basis, each verdict, the product fallback, and that look-ups write nothing.
@Suite("Restore: look-up rules and ownership")
struct RestoreTests {
    let token = "0e7a6d0c-2222-4c3c-9d61-000000000001"
    let pending = "0e7a6d0c-2222-4c3c-9d61-000000000002"
    let other = "0e7a6d0c-2222-4c3c-9d61-000000000003"

    @Test func transactionIdMatchesTheOrderWithItsContract() throws {
        let h = try Harness.subscribed(token: token)
        let r = try h.lookup(tx("1000", token: token), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .transactionId)
        #expect(r.orderNos == [token])
        #expect(r.contractId == "1000")
        #expect(r.owner == "alice")
        #expect(r.contractStatus == .active)
        #expect(r.contractExpires == t0 + 30 * day)
        #expect(r.changes.isEmpty)
        #expect(r.engineOutcome == nil)
    }

    @Test func originalTransactionIdMatchesTheContractAndItsOrders() throws {
        let h = try Harness.subscribed(token: token)
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        // An unseen renewal without a token: only the original transaction id can match.
        let r = try h.lookup(tx("1002", period: 2), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .originalTransactionId)
        #expect(r.orderNos == [token, "renewal-1"])
        #expect(r.contractId == "1000")
        #expect(r.contractExpires == t0 + 60 * day)
    }

    @Test func appAccountTokenMatchesTheOrderNumber() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.lookup(tx("3000", original: "3000", token: pending), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .appAccountToken)
        #expect(r.orderNos == [pending])
        #expect(r.contractId == nil)
        #expect(r.contractStatus == nil)
        #expect(r.owner == "alice")
    }

    @Test(arguments: [nil, "ffffffff-0000-4000-8000-000000000000"] as [String?])
    func productFallbackFindsTheUsersUnlinkedPendingOrder(appToken: String?) throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "bob")  // same product, other user: not a candidate
        try h.createOrder(no: "coins-order", user: "alice", product: "coins.100")  // other product
        let r = try h.lookup(tx("3000", original: "3000", token: appToken), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .product)
        #expect(r.orderNos == [pending])
        #expect(r.owner == "alice")
        #expect(r.detail.contains("fallback"))
    }

    @Test func productFallbackSkipsPaidAndLinkedOrders() throws {
        let h = try Harness.subscribed(token: token)  // alice's pro.monthly order is paid and linked
        let r = try h.lookup(tx("3000", original: "3000"), user: "alice")
        #expect(r.verdict == .unknown)
        #expect(r.reason == .noMatch)
        #expect(r.basis == nil)
    }

    @Test func severalProductCandidatesAreAmbiguousAndNoneIsPicked() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "alice")
        let r = try h.lookup(tx("3000", original: "3000"), user: "alice")
        #expect(r.verdict == .unknown)
        #expect(r.reason == .ambiguous)
        #expect(r.basis == nil)
        #expect(r.orderNos.isEmpty)
        #expect(Set(r.candidates) == [pending, other])
        #expect(r.detail.contains(pending) && r.detail.contains(other))
        #expect(r.detail.contains("--order"))
    }

    @Test func anExplicitOrderPicksOneOfSeveralCandidates() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "alice")
        let r = try h.lookup(tx("3000", original: "3000"), user: "alice", order: other)
        #expect(r.verdict == .restorable)
        #expect(r.basis == .product)
        #expect(r.orderNos == [other])
    }

    @Test func anExplicitOrderOfAnotherUserIsNotEligible() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "bob")
        let r = try h.lookup(tx("3000", original: "3000"), user: "alice", order: other)
        #expect(r.verdict == .unknown)
        #expect(r.reason == .orderNotEligible)
        #expect(r.detail.contains("belongs to bob"))
        #expect(r.candidates == [pending])
    }

    @Test func anExplicitOrderDoesNotOverrideAnEarlierBasis() throws {
        let h = try Harness.subscribed(token: token)
        try h.createOrder(no: pending, user: "alice")
        let r = try h.lookup(tx("1000", token: token), user: "alice", order: pending)
        #expect(r.basis == .transactionId)
        #expect(r.orderNos == [token])
        #expect(r.detail.contains("--order \(pending) ignored"))
    }

    @Test func anotherUsersPurchaseIsOwnedByOther() throws {
        let h = try Harness.subscribed(token: token)
        let r = try h.lookup(tx("1000", token: token), user: "bob")
        #expect(r.verdict == .ownedByOther)
        #expect(r.owner == "alice")
        #expect(r.contractId == "1000")
        #expect(r.detail.contains("alice"))
    }

    @Test func anotherUsersPendingOrderByTokenIsOwnedByOther() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.lookup(tx("3000", original: "3000", token: pending), user: "bob")
        #expect(r.verdict == .ownedByOther)
        #expect(r.basis == .appAccountToken)
        #expect(r.owner == "alice")
    }

    @Test func nothingFoundIsUnknown() throws {
        let h = try Harness()
        let r = try h.lookup(tx("3000", original: "3000", token: pending), user: "alice")
        #expect(r.verdict == .unknown)
        #expect(r.reason == .noMatch)
        #expect(r.detail.contains("3000"))
        #expect(r.owner == nil)
    }

    @Test func theContractsOwnerWinsOverADisagreeingOrder() throws {
        let h = try Harness.subscribed(token: token)
        try h.store.write { s in
            var order = try #require(try s.order(no: token))
            order.userId = "carol"
            try s.updateOrder(order)
        }
        let mine = try h.lookup(tx("1000", token: token), user: "alice")
        #expect(mine.verdict == .restorable)
        #expect(mine.owner == "alice")
        #expect(mine.detail.contains("contract's owner counts"))
        #expect(try h.lookup(tx("1000", token: token), user: "carol").verdict == .ownedByOther)
    }

    @Test func lookupsWriteNothing() throws {
        let h = try Harness.subscribed(token: token)
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "alice")
        let before = try h.state()
        let results = [
            try h.lookup(tx("1000", token: token), user: "alice"),
            try h.lookup(tx("1001", period: 1), user: "alice"),
            try h.lookup(tx("1000", token: token), user: "bob"),
            try h.lookup(tx("3000", original: "3000"), user: "alice"),
            try h.lookup(tx("3000", original: "3000"), user: "alice", order: other),
            try h.lookup(tx("4000", original: "4000"), user: "nobody"),
        ]
        #expect(results.map(\.verdict) == [.restorable, .restorable, .ownedByOther, .unknown, .restorable, .unknown])
        #expect(try h.state() == before)
    }
}

// MARK: helpers for the restore suites

extension Harness {
    static let restoreContext = EngineContext(actor: "operator", command: "restore --apply")

    /// A harness with alice's subscription 1000 bought at t0 with order `token`.
    static func subscribed(token: String, user: String = "alice") throws -> Harness {
        let h = try Harness()
        try h.createOrder(no: token, user: user)
        try h.apply(notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("1000", token: token)))
        return h
    }

    var restore: RestoreService { RestoreService(engine: engine) }

    func lookup(_ tx: TransactionFacts, user: String, order: String? = nil) throws -> RestoreResult {
        try store.read { try restore.lookup(tx, user: user, explicitOrder: order, in: $0) }
    }

    func restoreApply(
        _ tx: TransactionFacts, user: String, policy: RestorePolicy = .keep, reason: String? = nil,
        order: String? = nil
    ) throws -> RestoreResult {
        try store.write { s in
            try restore.apply(
                tx, raw: "jws-restore-\(tx.transactionId)", user: user, policy: policy, reason: reason,
                explicitOrder: order, context: Harness.restoreContext, in: s)
        }
    }

    /// Every ledger row about the test subscriptions.
    func restoreLedger() throws -> [LedgerEntry] {
        try store.read {
            try $0.ledger(transactionIds: [], originalTransactionIds: ["1000", "3000", "4000"], appAccountTokens: [])
        }
    }

    func audit(_ entity: EntityKind, _ key: String) throws -> [AuditEntry] {
        try store.read { try $0.audit(entity: entity, key: key) }
    }

    /// Tables, ledger and row counts: "nothing was written" means this is unchanged.
    func state() throws -> [String] {
        let counts = try store.read { try $0.counts() }
        return try snapshot() + restoreLedger().map { "ledger \($0.id) \($0.verdict)" } + ["\(counts)"]
    }
}
