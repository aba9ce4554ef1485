import IAPFoundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `Explanation`, `EntitlementQuery`, `RecordHistory` and `NotificationGaps` on every backend.
@Suite("Services: explanation, entitlement, history, notification gaps")
struct QueryServiceTests {
    @Test(arguments: StoreBackend.available)
    func explanationNamesTheRuleOfEachEventAndWhatMadeALateOneStale(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let purchase = T.tx("1000", token: "ord-1")
            let off = try T.engine.apply(
                T.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: T.start + 2 * T.day, tx: purchase, autoRenew: 0),
                to: store, context: T.context)
            #expect(off.verdict == .applied)
            let late = try T.engine.apply(
                T.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", signed: T.start + T.day, tx: purchase, autoRenew: 1),
                to: store, context: T.context)
            #expect(late.verdict == .stale)
            try T.correctContract(store, .status(.expired))

            let explanation = try #require(try store.read { try Explanation.explain("1000", now: T.now, in: $0) })
            #expect(explanation.contract.status == .expired)
            #expect(explanation.factCount > 0)
            #expect(explanation.fields.contains { $0.field == "status" })
            #expect(explanation.fields.first { $0.field == "auto_renew" }?.signedDate == T.start + 2 * T.day)
            let summary = explanation.steps.map { step -> String in
                switch step {
                case .event(let event, let rule, let audits, let decidedBy):
                    return "\(event.verdict.rawValue) \(rule.name) audits:\(audits.count) decidedBy:\(decidedBy?.id == off.ledgerId)"
                case .manual(let audit):
                    return "manual \(audit.command)"
                }
            }
            #expect(
                summary == [
                    "applied purchase audits:2 decidedBy:false",
                    "stale auto-renew on audits:0 decidedBy:true",
                    "applied auto-renew off audits:1 decidedBy:false",
                    "manual contracts update",
                ])
            #expect(explanation.steps.map(\.decides) == [true, false, true, true])
            #expect(try store.read { try Explanation.explain("nope", now: T.now, in: $0) } == nil)
        }
    }

    /// After the paid period ended with nothing from Apple signed since, `entitled` says "lapsed"
    /// (not entitled) instead of guessing; once Apple's EXPIRED is signed, from then on it says expired.
    @Test(arguments: StoreBackend.available)
    func entitlementAfterAnEndedPeriodWithNothingSinceIsLapsed(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let end = T.start + 30 * T.day
            let answer = { (time: Int64) in
                try #require(
                    try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: time, in: $0) }.best
                ).answer
            }
            let during = try answer(end - T.day)
            #expect(during.entitled && during.status == "active" && during.lapse == nil)
            let after = try answer(end + T.day)
            #expect(!after.entitled && after.status == "lapsed" && after.lapse == Lapse(paidUntil: end))
            #expect(after.reason.hasPrefix("lapsed: paid until \(Timestamp.iso8601(end)), nothing from Apple since"))
            // The contract row still says active: the lapse is derived, not stored.
            #expect(after.contract.status == .active)

            _ = try T.engine.apply(
                T.notification("EXPIRED", "VOLUNTARY", signed: end + 2 * T.day, tx: T.tx("1000", token: "ord-1")), to: store,
                context: T.context)
            #expect(try answer(end + T.day).status == "lapsed")
            let expired = try answer(end + 3 * T.day)
            #expect(!expired.entitled && expired.status == "expired" && expired.lapse == nil)
        }
    }

    /// A database without facts (rows from before them) answers from the rows and the audit trail:
    /// an active contract whose one paid order ended is lapsed there too.
    @Test(arguments: StoreBackend.available)
    func entitlementWithoutFactsSaysLapsedToo(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let end = T.start + 30 * T.day
            _ = try store.write { s in
                _ = try s.insertContract(
                    Contract(
                        contractId: "9000", userId: "alice", productId: "pro.monthly", status: .active, expiresDate: end,
                        environment: "Sandbox", createdAt: 1, updatedAt: 1))
                return try s.insertOrder(
                    Order(
                        no: "ord-9", userId: "alice", productId: "pro.monthly", status: .paid, tradeNo: "9000",
                        originNo: "9000", purchaseDate: T.start, expiresDate: end, environment: "Sandbox", createdAt: 1,
                        updatedAt: 1))
            }
            #expect(try store.read { try $0.facts(originalTransactionId: "9000") }.isEmpty)
            let during = try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: end - T.day, in: $0) }
            #expect(during.entitled && during.best?.answer.lapse == nil)
            let after = try #require(
                try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: end + T.day, in: $0) }.best
            ).answer
            #expect(!after.entitled && after.status == "lapsed" && after.lapse == Lapse(paidUntil: end))
            #expect(after.reason.hasPrefix("lapsed: paid until \(Timestamp.iso8601(end)), nothing from Apple since"))
            #expect(after.reason.contains("9000"))
        }
    }

    @Test(arguments: StoreBackend.available)
    func entitlementAtAPastMomentFollowsWhoHeldTheContractThen(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let during = T.start + T.day
            let yes = try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: during, in: $0) }
            #expect(yes.entitled)
            #expect(yes.best?.answer.contract.contractId == "1000")
            let before = try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: T.start - T.day, in: $0) }
            #expect(!before.entitled && before.best?.answer.status == "not-yet")
            let other = try store.read {
                try EntitlementQuery.entitled(user: "alice", product: "other.product", at: during, in: $0)
            }
            #expect(other.subjects.isEmpty && other.best == nil && !other.entitled)

            // Moved to bob today: at `during` it was still alice's.
            try T.correctContract(store, .userId("bob"))
            #expect(try store.read { try EntitlementQuery.entitled(user: "alice", product: nil, at: during, in: $0) }.entitled)
            #expect(try !store.read { try EntitlementQuery.entitled(user: "bob", product: nil, at: during, in: $0) }.entitled)

            let asOf = try #require(try store.read { try EntitlementQuery.contract("1000", at: during, in: $0) })
            #expect(asOf.subject.answer.contract.userId == "alice")
            #expect(asOf.events.count == 1 && asOf.lastEventDate == T.start)
            #expect(asOf.changes.allSatisfy { $0.command != "contracts update" })
            #expect(try store.read { try EntitlementQuery.contract("nope", at: during, in: $0) } == nil)

            let orders = try store.read { try EntitlementQuery.orders(user: "alice", status: .paid, product: nil, at: during, in: $0) }
            #expect(orders.map(\.no) == ["ord-1"])
            // Before Apple's purchase was signed the order existed, pending.
            let earlier = try store.read { try EntitlementQuery.orders(user: nil, status: nil, product: nil, at: T.start - 1, in: $0) }
            #expect(earlier.map(\.status) == [.pending] && earlier.first?.tradeNo == nil)
            #expect(try store.read { try EntitlementQuery.orders(user: nil, status: .paid, product: nil, at: T.start - 1, in: $0) }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.available)
    func historyOfAnOrderKeyOrASubscriptionKey(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try T.engine.apply(
                T.notification("DID_RENEW", signed: T.start + 30 * T.day, tx: T.tx("1001", period: 1)), to: store,
                context: T.context)
            let subscription = try #require(try store.read { try RecordHistory.order("1000", in: $0) })
            #expect(subscription.orders.count == 2 && subscription.contract?.contractId == "1000")
            #expect(subscription.events.count == 2)
            #expect(subscription.audit.map(\.at) == subscription.audit.map(\.at).sorted())
            let one = try #require(try store.read { try RecordHistory.order("1001", in: $0) })
            #expect(one.orders.map(\.tradeNo) == ["1001"])
            #expect(try store.read { try RecordHistory.order("ord-1", in: $0) }?.orders.map(\.no) == ["ord-1"])
            #expect(try store.read { try RecordHistory.contract("1000", in: $0) }?.orders.count == 2)
            #expect(try store.read { try RecordHistory.order("nope", in: $0) } == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func notificationGapsAreTheOnesTheLedgerNeverApplied(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write {
                try $0.insertOrder(Order(no: "ord-1", userId: "alice", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
            }
            let applied = T.notification("SUBSCRIBED", "INITIAL_BUY", uuid: "n-applied", signed: T.start, tx: T.tx("1000", token: "ord-1"))
            #expect(try T.engine.apply(applied, to: store, context: T.context).verdict == .applied)
            let orphan = T.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: "n-orphan", signed: T.start, tx: T.tx("2000", original: "2000", token: "nobody"))
            #expect(try T.engine.apply(orphan, to: store, context: T.context).verdict == .unmatched)
            let missed = T.notification("DID_RENEW", uuid: "n-missed", signed: T.start + 30 * T.day, tx: T.tx("1001", period: 1))
            let attempts = [NotificationGaps.SendAttempt(date: T.start + 30 * T.day, result: "TIMED_OUT")]
            let items: [NotificationGaps.Item] = [
                .notification(applied, attempts: []), .notification(missed, attempts: attempts),
                .notification(missed, attempts: attempts), .rejected(notificationUUID: "n-bad", message: "bad signature"),
                .skipped, .notification(orphan, attempts: []),
            ]
            let compare = { (apply: Bool, dryRun: Bool) in
                try NotificationGaps.compare(
                    items, store: store, apply: apply, engine: T.engine, context: T.context, dryRun: dryRun)
            }
            #expect(
                try compare(false, false) == [
                    .missing(missed, notificationUUID: "n-missed", ledger: .neverReceived, attempts: attempts, outcome: nil),
                    .rejected(notificationUUID: "n-bad", message: "bad signature"),
                    .missing(orphan, notificationUUID: "n-orphan", ledger: .unmatched, attempts: [], outcome: nil),
                ])
            let dry = try compare(true, true)
            guard case .missing(_, "n-missed", _, _, let outcome?) = dry.first else {
                Issue.record("no dry-run outcome: \(dry)")
                return
            }
            #expect(outcome.verdict == .applied)
            #expect(try store.read { try $0.processedLedgerEntry(notificationUUID: "n-missed") } == nil)
            _ = try compare(true, false)
            #expect(try store.read { try $0.processedLedgerEntry(notificationUUID: "n-missed") }?.verdict == .applied)
            let after = try compare(false, false)
            #expect(after.count == 2)
            #expect(after.first == .rejected(notificationUUID: "n-bad", message: "bad signature"))
        }
    }
}
