import Foundation
import IAPFoundation
import StoreTestSupport
import SubscriptionDerivation
import SubscriptionModel
import Testing

/// The real Sandbox subscription 2000001024993299 (files 02–16): no appAccountToken anywhere,
/// RESUBSCRIBE with the same originalTransactionId, a refund of an older period.
@Suite("Real Apple lifecycle (decoded)")
struct RealLifecycleTests {
    static let original = "2000001024993299"

    static func events() throws -> [SubscriptionEvent] {
        let dir = try #require(Bundle.module.url(forResource: "loki", withExtension: nil, subdirectory: "Fixtures"))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".payload.json") }.sorted()
        return try names.map { name in
            let stem = String(name.dropLast(".payload.json".count))
            let payload = try object(dir.appendingPathComponent(name))
            let t = try object(dir.appendingPathComponent(stem + ".signedTransactionInfo.json"))
            let r = try? object(dir.appendingPathComponent(stem + ".signedRenewalInfo.json"))
            let transaction = transactionFacts(t)
            let renewal = r.map {
                RenewalFacts(
                    originalTransactionId: $0["originalTransactionId"] as? String,
                    autoRenewStatus: ($0["autoRenewStatus"] as? NSNumber)?.intValue,
                    autoRenewProductId: $0["autoRenewProductId"] as? String, productId: $0["productId"] as? String,
                    signedDate: int($0["signedDate"]))
            }
            return SubscriptionEvent(
                source: .apple, notificationUUID: payload["notificationUUID"] as? String,
                notificationType: (payload["notificationType"] as? String).map(NotificationType.init(rawValue:)),
                subtype: (payload["subtype"] as? String).map(NotificationSubtype.init(rawValue:)),
                signedDate: int(payload["signedDate"]), environment: "Sandbox",
                bundleId: "com.loki-project.loki-messenger", transaction: transaction, renewal: renewal, raw: stem,
                status: ((payload["data"] as? [String: Any])?["status"] as? NSNumber)?.intValue)
        }
    }

    /// The engine's view of a decoded transaction payload.
    static func transactionFacts(_ t: [String: Any]) -> TransactionFacts {
        TransactionFacts(
            transactionId: t["transactionId"] as! String, originalTransactionId: t["originalTransactionId"] as! String,
            productId: t["productId"] as! String, appAccountToken: t["appAccountToken"] as? String,
            purchaseDate: int(t["purchaseDate"]), originalPurchaseDate: int(t["originalPurchaseDate"]),
            expiresDate: int(t["expiresDate"]), revocationDate: int(t["revocationDate"]),
            revocationReason: (t["revocationReason"] as? NSNumber)?.intValue, type: (t["type"] as? String).map(ProductType.init(rawValue:)),
            environment: t["environment"] as? String, price: int(t["price"]), currency: t["currency"] as? String,
            signedDate: int(t["signedDate"]), isUpgraded: t["isUpgraded"] as? Bool,
            inAppOwnershipType: (t["inAppOwnershipType"] as? String).map(OwnershipType.init(rawValue:)),
            appTransactionId: t["appTransactionId"] as? String)
    }

    static func object(_ url: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    static func int(_ any: Any?) -> Int64? { (any as? NSNumber)?.int64Value }

    /// A harness where support has linked the subscription to carol (as `restore --apply` does).
    static func harness(_ backend: Backend = .sqlite) throws -> Harness {
        let h = try Harness(backend: backend)
        try h.store.write { s in
            _ = try s.insertContract(
                Contract(
                    contractId: original, userId: "carol", productId: "com.getsession.org.pro_sub", status: .active, createdAt: 1,
                    updatedAt: 1))
        }
        return h
    }

    /// Apple signed the genuine DID_RENEW (03) 34 s before its period's purchaseDate: in that window
    /// the period before it still runs, so the customer is entitled.
    @Test(arguments: Backend.available)
    func inTheRenewAheadWindowThePreviousPaidPeriodStillEntitles(backend: Backend) throws {
        let events = try Self.events().sorted { $0.signedDate! < $1.signedDate! }
        let renewal = try #require(events.first { $0.raw == "03-loki-did-renew" })
        let signed = try #require(renewal.signedDate)
        let starts = try #require(renewal.transaction?.purchaseDate)
        #expect(signed < starts, "the fixture's DID_RENEW is signed ahead of its period")
        let h = try Self.harness(backend)
        // The fixtures start with this renewal; the period it renews (the subscription's first, 3
        // Sandbox minutes ending when the renewal starts) is sent by the app, as after a purchase.
        let renewed = try #require(renewal.transaction)
        var first = renewed
        first.transactionId = Self.original
        first.purchaseDate = starts - 180_000
        first.expiresDate = starts
        first.signedDate = starts - 180_000
        try h.apply(client(first))
        for event in events where event.signedDate! <= signed { try h.apply(event) }
        let inWindow = signed + (starts - signed) / 2
        let answer = try h.entitlement(Self.original, at: inWindow)
        #expect(answer.entitled, "\(answer.reason)")
        let covering = try #require(answer.covering)
        #expect(covering.tradeNo == Self.original)
        #expect((covering.purchaseDate ?? .max) <= inWindow && inWindow < (covering.expiresDate ?? 0))
        #expect(answer.reason.contains("starts"), "\(answer.reason)")
        // Once the period starts, the renewal itself covers.
        #expect(try h.entitlement(Self.original, at: starts + 1).covering?.tradeNo == renewal.transaction?.transactionId)
    }

    @Test func replayInSignedDateOrder() throws {
        let events = try Self.events().sorted { $0.signedDate! < $1.signedDate! }
        #expect(events.count == 15)
        let h = try Self.harness()
        let verdicts = try events.map { try h.apply($0).verdict }
        #expect(!verdicts.contains(.unmatched))
        let c = try #require(try h.contract(Self.original))
        // The last state change (RESUBSCRIBE of 2025-10-16) left it active; the refund that
        // followed was of an older period.
        #expect(c.status == .active)
        #expect(c.expiresDate == 1_760_592_314_000)
        #expect(c.productId == "com.getsession.org.pro_sub_3_months")
        #expect(try h.order(tradeNo: "2000001032604840")?.status == .refunded)
        // Every distinct transaction became exactly one order of carol's.
        let txIds = Set(events.compactMap { $0.transaction?.transactionId })
        let orders = try h.orders()
        #expect(orders.count == txIds.count)
        #expect(Set(orders.compactMap(\.tradeNo)) == txIds)
        #expect(orders.allSatisfy { $0.userId == "carol" })
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func shuffledReplayConvergesToTheSameTables(seed: UInt64) throws {
        let sorted = try Self.events().sorted { $0.signedDate! < $1.signedDate! }
        let reference = try Self.harness()
        for e in sorted { try reference.apply(e) }

        var rng = SplitMix(seed: seed)
        let shuffled = sorted.shuffled(using: &rng)
        let h = try Self.harness()
        for e in shuffled { try h.apply(e) }
        #expect(try h.snapshot() == reference.snapshot())
    }

    @Test func replayingTheWholeLifecycleTwiceChangesNothingTheSecondTime() throws {
        let events = try Self.events()
        let h = try Self.harness()
        for e in events { try h.apply(e) }
        let before = try h.snapshot()
        let second = try events.map { try h.apply($0).verdict }
        #expect(second.allSatisfy { $0 == .duplicate })
        #expect(try h.snapshot() == before)
    }

    static func numbered(_ prefix: String, in events: [SubscriptionEvent]) -> SubscriptionEvent {
        events.first { $0.raw.hasPrefix(prefix + "-") }!
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[T]] in
            var rest = items
            let head = rest.remove(at: i)
            return permutations(rest).map { [head] + $0 }
        }
    }

    /// 06 (DID_CHANGE_RENEWAL_PREF/UPGRADE) moves the subscription to pro_sub at once, with the
    /// upgrade transaction's expiry, whatever order 02–06 arrive in (all 120 orders).
    @Test func afterTheUpgradeTheContractIsOnProSubWithTheUpgradesExpiryInEveryOrder() throws {
        let all = try Self.events()
        let first = ["02", "03", "04", "05", "06"].map { Self.numbered($0, in: all) }
        let upgrade = try #require(first.last?.transaction)
        var tables: Set<[String]> = []
        for order in Self.permutations(first) {
            let h = try Self.harness()
            for e in order { try h.apply(e) }
            let c = try #require(try h.contract(Self.original))
            #expect(c.productId == "com.getsession.org.pro_sub")
            #expect(c.expiresDate == upgrade.expiresDate)
            #expect(c.expiresDate == 1_759_727_970_000)
            #expect(c.status == .active)
            tables.insert(try h.snapshot(withFacts: true))
        }
        #expect(tables.count == 1)
    }

    /// 14 (EXPIRED/VOLUNTARY of the upgraded pro_sub period): not entitled from then on, in every
    /// order of delivery; entitled on pro_sub just before the upgrade period ended.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7] as [UInt64], Backend.available)
    func notEntitledAfterTheUpgradedPeriodExpiredInAnyOrder(seed: UInt64, backend: Backend) throws {
        let all = try Self.events()
        let expired = Self.numbered("14", in: all)
        let upTo14 = all.filter { $0.signedDate! <= expired.signedDate! }
        var rng = SplitMix(seed: seed)
        for events in [seed == 0 ? upTo14 : upTo14.shuffled(using: &rng), all.shuffled(using: &rng)] {
            let h = try Self.harness(backend)
            for e in events { try h.apply(e) }
            let after14 = try h.entitlement(Self.original, at: expired.signedDate!)
            #expect(!after14.entitled, "\(after14.reason)")
            #expect(after14.contract.productId == "com.getsession.org.pro_sub")
            let during = try h.entitlement(Self.original, at: 1_759_727_969_000)
            #expect(during.entitled, "\(during.reason)")
            #expect(during.contract.productId == "com.getsession.org.pro_sub")
        }
    }

    @Test(arguments: Backend.available)
    func everyAdjacentSwapOfTheWholeLifecycleGivesTheSameTables(backend: Backend) throws {
        let sorted = try Self.events().sorted { $0.signedDate! < $1.signedDate! }
        let reference = try Self.harness(backend)
        for e in sorted { try reference.apply(e) }
        for i in 0..<(sorted.count - 1) {
            var swapped = sorted
            swapped.swapAt(i, i + 1)
            let h = try Self.harness(backend)
            for e in swapped { try h.apply(e) }
            #expect(try h.snapshot(withFacts: true) == reference.snapshot(withFacts: true))
        }
    }

    /// The app restored 38 (the 2025-10-01 pro_sub period, freshly signed): it adds a fact and
    /// changes no row: Apple's newest facts already decide.
    @Test(arguments: Backend.available)
    func restoringAnOldPeriodChangesNothing(backend: Backend) throws {
        let dir = try #require(Bundle.module.url(forResource: "loki", withExtension: nil, subdirectory: "Fixtures"))
        let restored = Self.transactionFacts(try Self.object(dir.appendingPathComponent("38-loki-transaction.json")))
        let h = try Self.harness(backend)
        for e in try Self.events() { try h.apply(e) }
        let before = try h.snapshot()
        let out = try h.apply(
            SubscriptionEvent(
                source: .restore, signedDate: restored.signedDate, environment: "Sandbox", transaction: restored,
                raw: "38-loki-transaction"))
        #expect(out.changes.isEmpty, "\(out.detail)")
        #expect(try h.snapshot() == before)
    }
}
