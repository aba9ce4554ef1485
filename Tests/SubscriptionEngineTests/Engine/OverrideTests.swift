import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The engine and hand overrides: applied over the derivation wherever rows are written
/// (a new event, a re-derivation), lifted only by a newer period.
@Suite("Engine: hand overrides")
struct OverrideTests {
    let now: Int64 = 1_800_000_000_000

    func revokeByHand(_ h: Harness) throws -> Int64 {
        let context = CorrectionContext(actor: "support", command: "contracts update", now: now)
        let request = CorrectionRequest<Contract>(
            line: nil, key: "1000", keyField: "", values: [.set(.status(.revoked))], reason: "fraud", ticket: "T-2001")
        return try #require(try h.store.write { try CorrectionService.apply([request], context: context, in: $0) }.first?.auditId)
    }

    func subscribed(_ backend: Backend) throws -> Harness {
        let h = try Harness(backend: backend)
        try h.createOrder(no: alice, user: "alice")
        try h.apply(buy)
        try h.apply(renew)
        return h
    }

    @Test(arguments: Backend.available)
    func anOlderPeriodsRefundKeepsTheHandRevokeAndReplayingChangesNothing(backend: Backend) throws {
        let h = try subscribed(backend)
        _ = try revokeByHand(h)
        let refund = apple("REFUND", at: t0 + 40 * day, period("1000", start: t0, revokedAt: t0 + 40 * day), status: 1)
        let outcome = try h.apply(refund)
        #expect(outcome.verdict == .applied)
        #expect(try h.order(tradeNo: "1000")?.status == .refunded)
        #expect(try h.contract("1000")?.status == .revoked)
        let tables = try h.snapshot()
        for e in [buy, renew, refund] { #expect(try h.apply(e).verdict == .duplicate) }
        #expect(try h.snapshot() == tables)
    }

    @Test(arguments: Backend.available)
    func aReDerivationKeepsTheOverride(backend: Backend) throws {
        let h = try subscribed(backend)
        _ = try revokeByHand(h)
        let changes = try h.store.write {
            try h.engine.rederive(originalTransactionId: "1000", in: $0, context: h.context, reason: "db init")
        }
        #expect(changes.isEmpty)
        #expect(try h.contract("1000")?.status == .revoked)
    }

    @Test(arguments: Backend.available)
    func aNewerPeriodLiftsItAndTheDetailSaysSo(backend: Backend) throws {
        let h = try subscribed(backend)
        let audit = try revokeByHand(h)
        let third = apple("DID_RENEW", at: t0 + 60 * day + hour, period("1002", start: t0 + 60 * day), status: 1)
        let outcome = try h.apply(third)
        #expect(try h.contract("1000")?.status == .active)
        #expect(outcome.detail.contains("override #\(audit) (contract 1000 status set by hand) lifted: Apple signed a newer period"))
        // A dry run of the same lift writes nothing, the override included.
        let h2 = try subscribed(backend)
        _ = try revokeByHand(h2)
        _ = try h2.apply(third, dryRun: true)
        #expect(try h2.contract("1000")?.status == .revoked)
        #expect(try h2.store.read { try $0.overrides(entity: .contract, key: "1000") }.first?.inForce == true)
    }
}
