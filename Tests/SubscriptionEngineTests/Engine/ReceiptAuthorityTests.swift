import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// In-app entries of a StoreKit 1 receipt reach the engine as client facts flagged
/// `isFromReceipt`: they record payments and extend expiry dates, but never revoke, expire or
/// reopen a state Apple set. (The harness clock is 2027-01-15; `t0` is 2025-06-15.)
@Suite("Receipt facts: lower authority")
struct ReceiptAuthorityTests {
    let pending = "0e7a6d0c-3333-4c3c-9d61-000000000001"
    let now: Int64 = 1_800_000_000_000

    /// A receipt entry: no type, price or token (the product fallback supplies the token in restore).
    func receipt(_ id: String, expires: Int64?, token: String? = nil, revoked: Bool = false) -> TransactionFacts {
        var facts = TransactionFacts(
            transactionId: id, originalTransactionId: "1000", productId: "pro.monthly", appAccountToken: token,
            purchaseDate: (expires ?? t0) - 30 * day, originalPurchaseDate: t0, expiresDate: expires,
            revocationDate: revoked ? t0 : nil, environment: "Sandbox", signedDate: now - day)
        facts.isFromReceipt = true
        return facts
    }

    @Test func aContractKnownOnlyFromReceiptsFollowsTheProvenPeriod() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        // The oldest period ended long ago: the new contract is expired, not active.
        #expect(try h.apply(client(receipt("1000", expires: t0 + 30 * day, token: pending))).verdict == .applied)
        #expect(try h.contract("1000")?.status == .expired)
        #expect(try h.order(pending)?.status == .paid)
        // A later period still running: proven active (no Apple state yet).
        _ = try h.apply(client(receipt("1001", expires: now + 10 * day)))
        let contract = try #require(try h.contract("1000"))
        #expect(contract.status == .active)
        #expect(contract.expiresDate == now + 10 * day)
        #expect(contract.lastEventDate == nil)
        #expect(try h.order(tradeNo: "1001")?.userId == "alice")
    }

    @Test func aReceiptNeverReopensWhatAppleEnded() throws {
        let h = try Harness.subscribed(token: pending)
        try h.apply(notification("EXPIRED", "VOLUNTARY", signed: t0 + 31 * day, tx: tx("1000", token: pending)))
        #expect(try h.contract("1000")?.status == .expired)
        let outcome = try h.apply(client(receipt("1005", expires: now + 20 * day)))
        #expect(outcome.verdict == .applied)
        let contract = try #require(try h.contract("1000"))
        // The money fact counts (a paid period, one order), the state does not change.
        #expect(contract.expiresDate == now + 20 * day)
        #expect(contract.status == .expired)
        #expect(try h.order(tradeNo: "1005")?.status == .paid)
        #expect(outcome.detail.contains("app receipt"))
    }

    @Test func aReceiptNeverRevokesNorExpires() throws {
        let h = try Harness.subscribed(token: pending)
        #expect(try h.contract("1000")?.status == .active)
        let before = try h.snapshot()
        // Even facts carrying a revocation date (the mapping drops such entries) do not refund.
        _ = try h.apply(client(receipt("1000", expires: t0 + 30 * day, revoked: true)))
        #expect(try h.order(pending)?.status == .paid)
        #expect(try h.contract("1000")?.status == .active)
        // An old period (already ended) does not expire an active contract either.
        _ = try h.apply(client(receipt("0999", expires: t0 - day)))
        #expect(try h.contract("1000")?.status == .active)
        #expect(try h.contract("1000")?.expiresDate == t0 + 30 * day)
        #expect(try h.snapshot().filter { $0.contains("contract") } == before.filter { $0.contains("contract") })
    }

    @Test func anEntryWithoutExpiryIsNotASubscription() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice", product: "coins.100")
        var coins = receipt("5000", expires: nil, token: pending)
        coins.productId = "coins.100"
        #expect(!coins.isAutoRenewable)
        #expect(try h.apply(client(coins)).verdict == .applied)
        #expect(try h.order(pending)?.status == .paid)
        #expect(try h.contracts().isEmpty)
    }
}
