import Foundation
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel
import Testing

// The order-independence properties with hand overrides in the stream: each lifecycle is
// cut in two, support corrects the contract's status and the first order's status by hand in
// between, and the facts of each half arrive in every adjacent swap and in reverse. The final rows
// depend on which facts the overrides saw (the first half), never on the order the facts arrived in.

extension SpecificationTests {
    /// The first half of `s`'s items, then the hand corrections, then the second half.
    func runWithHandChanges(_ first: [SubscriptionEvent], _ second: [SubscriptionEvent], on backend: Backend) throws -> Harness? {
        let h = try run(first, on: backend)
        guard let contract = try h.contract("1000"), let order = try h.order(tradeNo: "1000") else { return nil }
        let context = CorrectionContext(actor: "support", command: "contracts update", now: 1_800_000_000_000)
        let status: ContractStatus = contract.status == .revoked ? .expired : .revoked
        _ = try h.store.write { session in
            try CorrectionService.apply(
                [
                    CorrectionRequest<Contract>(
                        line: nil, key: "1000", keyField: "", values: [.set(.status(status))], reason: "r", ticket: "T-1")
                ],
                context: context, in: session)
            try CorrectionService.apply(
                [
                    CorrectionRequest<Order>(
                        line: nil, key: order.no, keyField: "", values: [.set(.status(order.status == .paid ? .refunded : .paid))],
                        reason: "r", ticket: nil)
                ], context: context, in: session)
        }
        for e in second { try h.apply(e) }
        return h
    }

    /// Every adjacent swap of `events`, and the reverse (the events themselves first).
    func reorderings(_ events: [SubscriptionEvent]) -> [[SubscriptionEvent]] {
        var result = [events]
        guard events.count > 1 else { return result }
        result.append(events.reversed())
        for i in 0..<(events.count - 1) {
            var swapped = events
            swapped.swapAt(i, i + 1)
            result.append(swapped)
        }
        return result
    }

    @Test(arguments: scenarios, Backend.available)
    func handOverridesGiveTheSameTablesInAnyFactOrderOnEachSide(_ s: Scenario, backend: Backend) throws {
        let half = (s.events.count + 1) / 2
        let first = Array(s.events[..<half])
        let second = Array(s.events[half...])
        guard let reference = try runWithHandChanges(first, second, on: backend) else { return }
        let tables = try reference.snapshot(withFacts: true)
        // A hand status holds unless the second half brings a newer period than the first half knew.
        let seen = first.compactMap { $0.transaction?.purchaseDate }.max() ?? 0
        let newerPeriod = second.contains { ($0.transaction?.purchaseDate ?? 0) > seen }
        let handStatus = try reference.store.read { try $0.overrides(entity: .contract, key: "1000") }.first?.value
        if !newerPeriod {
            #expect(try reference.contract("1000")?.status.rawValue == handStatus, "the hand status held")
        }
        for before in reorderings(first) {
            for after in reorderings(second) {
                let h = try #require(try runWithHandChanges(before, after, on: backend))
                #expect(
                    try h.snapshot(withFacts: true) == tables,
                    "\((before + after).map { $0.notificationType?.rawValue ?? "client" })")
            }
        }
    }

    @Test(arguments: scenarios, Backend.available)
    func clearingTheOverridesLeavesTheRowsTheFactsAloneGive(_ s: Scenario, backend: Backend) throws {
        let half = (s.events.count + 1) / 2
        guard let h = try runWithHandChanges(Array(s.events[..<half]), Array(s.events[half...]), on: backend) else { return }
        let context = CorrectionContext(actor: "lead", command: "contracts update", now: 1_800_000_000_001)
        _ = try h.store.write { session in
            for (entity, key) in [(EntityKind.contract, "1000"), (.order, try #require(try session.order(tradeNo: "1000")).no)] {
                guard try session.overrides(entity: entity, key: key).contains(where: \.inForce) else { continue }
                if entity == .contract {
                    _ = try OverrideService.clear(Contract.self, key: key, fields: ["status"], reason: "r", context: context, in: session)
                } else {
                    _ = try OverrideService.clear(Order.self, key: key, fields: ["status"], reason: "r", context: context, in: session)
                }
            }
        }
        #expect(try h.snapshot(withFacts: true) == run(s.events, on: backend).snapshot(withFacts: true))
    }
}
