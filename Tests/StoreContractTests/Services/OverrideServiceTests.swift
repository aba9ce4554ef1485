import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Hand overrides on every backend: a hand change of a derived field holds over the
/// facts until it is removed (`audit undo`, clearing it) or Apple signs a newer period.
@Suite("Services: hand overrides")
struct OverrideServiceTests {
    /// Period `n`'s renewal of subscription 1000, as Apple notifies it.
    static func renew(_ store: any Store, period n: Int64) throws -> Outcome {
        try T.engine.apply(
            T.notification("DID_RENEW", signed: T.start + n * 30 * T.day, tx: T.tx("100\(n)", period: n)), to: store,
            context: T.context)
    }

    /// Apple refunds period `n` (signed at `signed`).
    static func refund(_ store: any Store, period n: Int64, signed: Int64) throws -> Outcome {
        var tx = T.tx(n == 0 ? "1000" : "100\(n)", period: n)
        tx.revocationDate = signed
        tx.revocationReason = 0
        return try T.engine.apply(T.notification("REFUND", signed: signed, tx: tx), to: store, context: T.context)
    }

    /// Subscription 1000 bought and renewed, then revoked by hand (at day 35); the correction's audit id.
    static func revokedByHandAfterARenewal(_ store: any Store) throws -> Int64 {
        try T.purchase(store)
        _ = try renew(store, period: 1)
        return try #require(try T.correctContract(store, .status(.revoked), at: T.start + 35 * T.day).first?.auditId)
    }

    /// `orders update ord-1 --status refunded` at `time`.
    static func refundByHand(_ store: any Store, at time: Int64) throws -> CorrectionResult {
        let context = CorrectionContext(actor: "support", command: "orders update", now: time)
        let request = CorrectionRequest<Order>(
            line: nil, key: "ord-1", keyField: "", values: [.set(.status(.refunded))], reason: "chargeback", ticket: "T-9")
        return try #require(try store.write { try CorrectionService.apply([request], context: context, in: $0) }.first)
    }

    @Test(arguments: StoreBackend.available)
    func aHandRevokeSurvivesARefundOfAnOlderPeriod(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let revoke = try Self.revokedByHandAfterARenewal(store)
            let overrides = try store.read { try $0.overrides(entity: .contract, key: "1000") }
            let override = try #require(overrides.first)
            #expect(overrides.count == 1)
            #expect(override.field == "status" && override.value == "revoked" && override.auditId == revoke)
            #expect(override.actor == "support" && override.reason == "r" && override.inForce)
            #expect(override.seenPeriod == T.start + 30 * T.day && override.seenFacts > 0)

            // Apple refunds the first (older) period: the order is refunded, the hand revoke holds.
            let outcome = try Self.refund(store, period: 0, signed: T.start + 40 * T.day)
            #expect(outcome.verdict == .applied)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .refunded)
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .revoked)
            #expect(try store.read { try $0.overrides(entity: .contract, key: "1000") }.first?.inForce == true)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aHandRefundOfAnOrderSurvivesTheNextRenewal(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try Self.refundByHand(store, at: T.start + 10 * T.day)
            let outcome = try Self.renew(store, period: 1)
            #expect(outcome.verdict == .applied)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .refunded)
            #expect(try store.read { try $0.order(tradeNo: "1001") }?.status == .paid)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aNewerPeriodLiftsAContractOverrideAndSaysSo(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let revoke = try #require(try T.correctContract(store, .status(.revoked), at: T.start + 5 * T.day).first?.auditId)
            let outcome = try Self.renew(store, period: 1)
            #expect(outcome.verdict == .applied)
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .active)
            #expect(outcome.detail.contains("override #\(revoke) (contract 1000 status set by hand) lifted: Apple signed a newer period"))
            let override = try #require(try store.read { try $0.overrides(entity: .contract, key: "1000") }.first)
            #expect(!override.inForce && override.liftedAt == T.now)
            #expect(override.liftedBy?.contains("transaction 1001") == true)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aNewerVersionOfTheSameTransactionLiftsAnOrderOverrideAnOlderOneDoesNot(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try Self.refundByHand(store, at: T.start + 10 * T.day)
            // A version of the same transaction signed before the hand change (delivered late): holds.
            var late = T.tx("1000", token: "ord-1")
            late.signedDate = T.start + 5 * T.day
            _ = try T.engine.apply(
                T.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: T.start + 5 * T.day, tx: late),
                to: store, context: T.context)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .refunded)
            // A version signed after it: Apple's newer word about that transaction lifts it, even
            // though the facts alone derive the same rows as before.
            var newer = T.tx("1000", token: "ord-1")
            newer.signedDate = T.start + 20 * T.day
            let outcome = try T.engine.apply(
                T.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: T.start + 20 * T.day, tx: newer),
                to: store, context: T.context)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .paid)
            #expect(outcome.detail.contains("lifted: Apple signed a newer version of transaction 1000"))
        }
    }

    @Test(arguments: StoreBackend.available)
    func applesLaterRefundOfTheSameTransactionLiftsAHandRefundThatAgreesWithIt(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let hand = try Self.refundByHand(store, at: T.start + 10 * T.day)
            let outcome = try Self.refund(store, period: 0, signed: T.start + 20 * T.day)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .refunded)
            #expect(outcome.detail.contains("override #\(hand.auditId ?? 0) (order ord-1 status set by hand) lifted"))
            #expect(try store.read { try $0.overrides(entity: .order, key: "ord-1") }.allSatisfy { !$0.inForce })
        }
    }

    @Test(arguments: StoreBackend.available)
    func auditUndoRemovesTheOverrideAndTheRowFollowsTheFactsAgain(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let revoke = try Self.revokedByHandAfterARenewal(store)
            let undone = try store.write {
                try AuditUndoService.undo(revoke, reason: "wrong user", ticket: nil, actor: "lead", now: T.now, in: $0)
            }
            let undoId = try #require(undone.first?.auditId)
            let override = try #require(try store.read { try $0.overrides(entity: .contract, key: "1000") }.first)
            #expect(!override.inForce && override.liftedBy == "removed by audit undo (audit #\(undoId))")
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .active)
            // The undo made no override of its own: an older period's refund leaves the facts' state.
            #expect(try store.read { try $0.overrides(entity: .contract, key: "1000") }.count == 1)
            _ = try Self.refund(store, period: 0, signed: T.start + 40 * T.day)
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .active)
        }
    }

    @Test(arguments: StoreBackend.available)
    func clearingAnOverrideReDerivesTheField(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try T.correctContract(store, .status(.revoked), at: T.start + 5 * T.day)
            let context = CorrectionContext(actor: "lead", command: "contracts update", now: T.now)
            #expect(throws: OverrideError.noOverride(entity: .contract, key: "1000", field: "auto_renew")) {
                _ = try store.write {
                    try OverrideService.clear(Contract.self, key: "1000", fields: ["auto_renew"], reason: "r", context: context, in: $0)
                }
            }
            let cleared = try store.write {
                try OverrideService.clear(
                    Contract.self, key: "1000", fields: ["status"], reason: "fraud ruled out", context: context, in: $0)
            }
            #expect(cleared.lifted.map(\.field) == ["status"])
            #expect(cleared.rederived.map(\.fields) == [[FieldChange(column: "status", before: "revoked", after: "active")]])
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .active)
            let override = try #require(try store.read { try $0.overrides(entity: .contract, key: "1000") }.first)
            #expect(override.liftedBy == "cleared by lead: fraud ruled out")
        }
    }

    @Test(arguments: StoreBackend.available)
    func entitledFollowsAHandRevokeFromWhenItWasMadeUntilItWasCleared(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let revoke = try Self.revokedByHandAfterARenewal(store)
            let entitled = { (time: Int64) in
                try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: time, in: $0) }
            }
            #expect(try entitled(T.start + 34 * T.day).entitled, "before the hand revoke")
            let revoked = try entitled(T.start + 36 * T.day)
            #expect(!revoked.entitled && revoked.best?.answer.status == "revoked")
            #expect(revoked.best?.answer.reason == "status revoked by hand (#\(revoke)); Apple's facts say active")
            let context = CorrectionContext(actor: "lead", command: "contracts update", now: T.start + 37 * T.day)
            _ = try store.write {
                try OverrideService.clear(Contract.self, key: "1000", fields: ["status"], reason: "r", context: context, in: $0)
            }
            #expect(try entitled(T.start + 38 * T.day).entitled, "after it was cleared")
            #expect(try !entitled(T.start + 36 * T.day).entitled, "while it held")
        }
    }

    @Test(arguments: StoreBackend.available)
    func anOverrideOfAPendingOrderJoinsItsSubscriptionAndTheFirstPaymentSignedAfterItLiftsIt(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write {
                try $0.insertOrder(Order(no: "ord-1", userId: "alice", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
            }
            let context = CorrectionContext(actor: "support", command: "orders update", now: T.start - T.day)
            let request = CorrectionRequest<Order>(
                line: nil, key: "ord-1", keyField: "", values: [.set(.status(.revoked))], reason: "blocked", ticket: nil)
            _ = try store.write { try CorrectionService.apply([request], context: context, in: $0) }
            let outcome = try T.engine.apply(
                T.notification("SUBSCRIBED", "INITIAL_BUY", signed: T.start, tx: T.tx("1000", token: "ord-1")), to: store,
                context: T.context)
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .paid)
            #expect(outcome.detail.contains("(order ord-1 status set by hand) lifted"))
            let override = try #require(try store.read { try $0.overrides(entity: .order, key: "ord-1") }.first)
            #expect(override.originalTransactionId == "1000" && !override.inForce)
        }
    }

    @Test(arguments: StoreBackend.available)
    func ownershipFieldsAreNotOverrides(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try T.correctContract(store, .userId("bob"))
            #expect(try store.read { try $0.overrides(entity: .contract, key: "1000") }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.available)
    func showSaysWhatTheFactsSayBesideTheOverride(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try T.correctContract(store, .status(.revoked), at: T.start + 5 * T.day)
            let shown = try store.read {
                try OverrideService.shown(
                    entity: .contract, key: "1000", tradeNo: nil, originalTransactionId: "1000", now: T.now, in: $0)
            }
            #expect(shown.map(\.override.value) == ["revoked"])
            #expect(shown.map(\.derivedValue) == ["active"])
        }
    }
}
