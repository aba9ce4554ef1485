import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `restore --apply`: the engine path for restorable transactions, the policies for other users'
/// purchases, and the transfer's audit trail.
@Suite("Restore --apply: engine path, policies and transfers")
struct RestoreApplyTests {
    let token = "0e7a6d0c-3333-4c3c-9d61-000000000001"
    let pending = "0e7a6d0c-3333-4c3c-9d61-000000000002"
    let other = "0e7a6d0c-3333-4c3c-9d61-000000000003"

    // MARK: restorable

    @Test func productBasisLinksThePendingOrderAndCreatesTheContract() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.restoreApply(tx("3000", original: "3000"), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .product)
        #expect(r.engineOutcome?.verdict == .applied)
        let order = try #require(try h.order(pending))
        #expect(order.status == .paid)
        #expect(order.tradeNo == "3000")
        #expect(order.originNo == "3000")
        let contract = try #require(try h.contract("3000"))
        #expect(contract.userId == "alice")
        #expect(contract.status == .active)
        #expect(r.contractId == "3000")
        #expect(r.owner == "alice")
        #expect(r.contractStatus == .active)
        #expect(r.contractExpires == t0 + 30 * day)
        #expect(r.orderNos == [pending])
        #expect(r.changes.map(\.entity) == [.order, .contract])
        let ledger = try h.restoreLedger()
        #expect(ledger.map(\.source) == [.restore])
        #expect(ledger.map(\.verdict) == [.applied])
        #expect(ledger.first?.raw == "jws-restore-3000")
        // Then Apple's SUBSCRIBED for the same transaction finds the payment already recorded.
        let apple = try h.apply(
            notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: tx("3000", original: "3000"), autoRenew: nil))
        #expect(apple.verdict == .duplicate)
        #expect(try h.orders().count == 1)
    }

    @Test func explicitOrderAmongSeveralCandidatesIsTheOneLinked() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        try h.createOrder(no: other, user: "alice")
        let ambiguous = try h.restoreApply(tx("3000", original: "3000"), user: "alice")
        #expect(ambiguous.verdict == .unknown)
        #expect(ambiguous.reason == .ambiguous)
        #expect(try h.order(pending)?.status == .pending)
        #expect(try h.order(other)?.status == .pending)
        // Kept in the ledger (every JWS received is), as unmatched: no row changed.
        #expect(try h.restoreLedger().map(\.verdict) == [.unmatched])

        let r = try h.restoreApply(tx("3000", original: "3000"), user: "alice", order: other)
        #expect(r.verdict == .restorable)
        #expect(try h.order(other)?.tradeNo == "3000")
        #expect(try h.order(pending)?.status == .pending)
        #expect(try h.contract("3000")?.userId == "alice")
    }

    @Test func tokenBasisLinksThePendingOrderAsAPurchaseWould() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.restoreApply(tx("3000", original: "3000", token: pending), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .appAccountToken)
        #expect(try h.order(pending)?.tradeNo == "3000")
        #expect(try h.contract("3000")?.userId == "alice")
    }

    @Test func anUnseenRenewalIsRecorded() throws {
        let h = try Harness.subscribed(token: token)
        let r = try h.restoreApply(tx("1001", period: 1), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.basis == .originalTransactionId)
        #expect(r.engineOutcome?.verdict == .applied)
        let renewal = try #require(try h.order(tradeNo: "1001"))
        #expect(renewal.userId == "alice")
        #expect(renewal.status == .paid)
        #expect(r.orderNos == [token, renewal.no])
        #expect(r.contractExpires == t0 + 60 * day)
        #expect(try h.contract("1000")?.expiresDate == t0 + 60 * day)
        #expect(try h.restoreLedger().last?.source == .restore)
    }

    @Test func aKnownTransactionIsADuplicateAndChangesNoRow() throws {
        let h = try Harness.subscribed(token: token)
        let before = try h.snapshot()
        let r = try h.restoreApply(tx("1000", token: token), user: "alice")
        #expect(r.verdict == .restorable)
        #expect(r.engineOutcome?.verdict == .duplicate)
        #expect(r.changes.isEmpty)
        #expect(try h.snapshot() == before)
    }

    /// Every JWS received is kept: an unknown restored item changes no row and is
    /// kept in the ledger as `unmatched`, for replay once its order exists.
    @Test func unknownChangesNoRowAndIsKeptInTheLedger() throws {
        let h = try Harness.subscribed(token: token)
        let before = try h.snapshot()
        let r = try h.restoreApply(tx("4000", original: "4000"), user: "alice", policy: .transfer, reason: "x")
        #expect(r.verdict == .unknown)
        #expect(r.engineOutcome == nil)
        #expect(try h.snapshot() == before)
        let kept = try h.store.read { try $0.ledger(transactionIds: ["4000"], originalTransactionIds: [], appAccountTokens: []) }
        #expect(kept.map(\.verdict) == [.unmatched])
        #expect(kept.first?.source == .restore)
    }

    // MARK: policies

    @Test func keepNeverMovesAnotherUsersPurchase() throws {
        let h = try Harness.subscribed(token: token)
        let before = try h.snapshot()
        let r = try h.restoreApply(tx("1001", period: 1), user: "bob", policy: .keep)
        #expect(r.verdict == .ownedByOther)
        #expect(r.reason == .keptByPolicy)
        #expect(r.owner == "alice")
        #expect(r.engineOutcome == nil)
        #expect(r.changes.isEmpty)
        #expect(try h.snapshot() == before)
        let kept = try h.store.read { try $0.ledger(transactionIds: ["1001"], originalTransactionIds: [], appAccountTokens: []) }
        #expect(kept.last?.verdict == .conflict)
    }

    @Test func transferMovesTheContractAndAllItsOrdersThenRecordsTheRenewal() throws {
        let h = try Harness.subscribed(token: token)
        try h.apply(notification("DID_RENEW", signed: t0 + 30 * day, tx: tx("1001", period: 1)))
        let r = try h.restoreApply(
            tx("1002", token: token, period: 2), user: "bob", policy: .transfer, reason: "ticket 42: account merge")
        #expect(r.verdict == .transferred)
        #expect(r.previousOwner == "alice")
        #expect(r.owner == "bob")
        #expect(r.contractId == "1000")
        #expect(r.contractStatus == .active)
        #expect(r.contractExpires == t0 + 90 * day)
        #expect(try h.contract("1000")?.userId == "bob")
        let orders = try h.orders()
        #expect(orders.count == 3)
        #expect(orders.allSatisfy { $0.userId == "bob" })
        #expect(try h.order(tradeNo: "1002")?.userId == "bob")
        #expect(r.engineOutcome?.verdict == .applied)
        #expect(Set(r.orderNos) == Set(orders.map(\.no)))
        let moved = r.changes.filter { $0.fields.contains { $0.column == "user_id" && $0.before == "alice" && $0.after == "bob" } }
        #expect(moved.count == 3)  // the contract and the two existing orders
        #expect(r.reminder?.contains(token) == true)
        #expect(r.detail.contains("appAccountToken"))
        #expect(r.detail.contains("transfer from alice to bob"))
    }

    @Test func aTransferIsAuditedWithFromToActorAndReason() throws {
        let h = try Harness.subscribed(token: token)
        try h.restoreApply(tx("1000", token: token), user: "bob", policy: .transfer, reason: "ticket 42")
        let contractAudit = try h.audit(.contract, "1000")
        let transfer = try #require(contractAudit.first { $0.command == "restore --apply" })
        #expect(transfer.actor == "operator")
        #expect(transfer.reason?.contains("transfer from alice to bob") == true)
        #expect(transfer.reason?.contains("ticket 42") == true)
        #expect(transfer.before?.contains("\"userId\":\"alice\"") == true)
        #expect(transfer.after?.contains("\"userId\":\"bob\"") == true)
        let orderAudit = try h.audit(.order, token).filter { $0.command == "restore --apply" }
        #expect(orderAudit.count == 1)
        #expect(orderAudit.first?.reason?.contains("transfer from alice to bob") == true)
        #expect(orderAudit.first?.after?.contains("\"userId\":\"bob\"") == true)
    }

    @Test func transferOfAPendingOrderByTokenThenLinksItForTheNewOwner() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.restoreApply(tx("3000", original: "3000", token: pending), user: "bob", policy: .transfer, reason: "r")
        #expect(r.verdict == .transferred)
        #expect(try h.order(pending)?.userId == "bob")
        #expect(try h.order(pending)?.tradeNo == "3000")
        #expect(try h.contract("3000")?.userId == "bob")
    }

    /// `transfer-if-inactive` means "not entitled now": a canceled contract inside its
    /// paid period is still the owner's; billing retry (no access) is inactive. An active or
    /// canceled one whose paid period ended with nothing from Apple since is lapsed: not inactive
    /// on our word, refused with the reconcile command that asks Apple.
    @Test(arguments: ContractStatus.allCases, [true, false])
    func transferIfInactiveMovesOnlyAContractThatDoesNotEntitleNow(status: ContractStatus, insidePaidPeriod: Bool) throws {
        let h = try Harness.subscribed(token: token)
        let now: Int64 = 1_800_000_000_000  // the harness's clock
        try h.store.write { s in
            var contract = try #require(try s.contract(contractId: "1000"))
            contract.status = status
            contract.expiresDate = insidePaidPeriod ? now + day : now - day
            try s.updateContract(contract)
        }
        let before = try h.snapshot()
        let r = try h.restoreApply(tx("1000", token: token), user: "bob", policy: .transferIfInactive, reason: "r")
        let entitled = status == .gracePeriod || ((status == .active || status == .canceled) && insidePaidPeriod)
        if entitled {
            #expect(r.verdict == .ownedByOther)
            #expect(r.reason == .refusedByPolicy)
            #expect(r.detail.contains("refused by policy: contract is active"))
            #expect(r.refusal == .refusedByPolicy("contract 1000 of alice is \(status.rawValue)"))
            #expect(try h.snapshot() == before)
            #expect(try h.contract("1000")?.userId == "alice")
        } else if status == .active || status == .canceled {
            #expect(r.verdict == .ownedByOther)
            #expect(r.reason == .refusedByPolicy)
            #expect(r.detail.contains("lapsed: paid until"), "\(r.detail)")
            #expect(r.detail.contains("`iapctl apple reconcile --contract 1000`"), "\(r.detail)")
            #expect(try h.snapshot() == before)
            #expect(try h.contract("1000")?.userId == "alice")
        } else {
            #expect(r.verdict == .transferred)
            #expect(r.refusal == nil)
            #expect(try h.contract("1000")?.userId == "bob")
            #expect(try h.order(token)?.userId == "bob")
        }
    }

    @Test func transferIfInactiveAfterExpiryNotification() throws {
        let h = try Harness.subscribed(token: token)
        try h.apply(notification("EXPIRED", "VOLUNTARY", signed: t0 + 31 * day, tx: tx("1000", token: token), autoRenew: 0))
        let r = try h.restoreApply(tx("1000", token: token), user: "bob", policy: .transferIfInactive, reason: "r")
        #expect(r.verdict == .transferred)
        #expect(r.contractStatus == .expired)
        #expect(r.owner == "bob")
    }

    @Test(arguments: [RestorePolicy.transfer, .transferIfInactive], [nil, "", "  "] as [String?])
    func aTransferPolicyWithoutAReasonIsAUsageError(policy: RestorePolicy, reason: String?) throws {
        let h = try Harness.subscribed(token: token)
        let before = try h.state()
        #expect(throws: RestoreError.missingReason(policy)) {
            try h.restoreApply(tx("1000", token: token), user: "bob", policy: policy, reason: reason)
        }
        #expect(try h.state() == before)
        #expect(RestoreError.missingReason(policy).description.contains("--reason"))
    }

    @Test func keepNeedsNoReasonAndRestorableIgnoresThePolicy() throws {
        let h = try Harness()
        try h.createOrder(no: pending, user: "alice")
        let r = try h.restoreApply(tx("3000", original: "3000"), user: "alice", policy: .transfer, reason: "unused")
        #expect(r.verdict == .restorable)
        #expect(r.previousOwner == nil)
        #expect(try h.audit(.order, pending).allSatisfy { $0.reason?.contains("transfer") != true })
    }
}
