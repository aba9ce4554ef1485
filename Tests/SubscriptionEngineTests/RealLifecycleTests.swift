import Foundation
import SubscriptionEngine
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
            let transaction = TransactionFacts(
                transactionId: t["transactionId"] as! String, originalTransactionId: t["originalTransactionId"] as! String,
                productId: t["productId"] as! String, appAccountToken: t["appAccountToken"] as? String,
                purchaseDate: int(t["purchaseDate"]), originalPurchaseDate: int(t["originalPurchaseDate"]),
                expiresDate: int(t["expiresDate"]), revocationDate: int(t["revocationDate"]),
                revocationReason: (t["revocationReason"] as? NSNumber)?.intValue, type: t["type"] as? String,
                environment: t["environment"] as? String, price: int(t["price"]), currency: t["currency"] as? String,
                signedDate: int(t["signedDate"]))
            let renewal = r.map {
                RenewalFacts(
                    originalTransactionId: $0["originalTransactionId"] as? String,
                    autoRenewStatus: ($0["autoRenewStatus"] as? NSNumber)?.intValue,
                    autoRenewProductId: $0["autoRenewProductId"] as? String, productId: $0["productId"] as? String,
                    signedDate: int($0["signedDate"]))
            }
            return SubscriptionEvent(
                source: .apple, notificationUUID: payload["notificationUUID"] as? String,
                notificationType: payload["notificationType"] as? String, subtype: payload["subtype"] as? String,
                signedDate: int(payload["signedDate"]), environment: "Sandbox",
                bundleId: "com.loki-project.loki-messenger", transaction: transaction, renewal: renewal, raw: stem)
        }
    }

    static func object(_ url: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    static func int(_ any: Any?) -> Int64? { (any as? NSNumber)?.int64Value }

    /// A harness where support has linked the subscription to carol (as `restore --apply` does).
    static func harness() throws -> Harness {
        let h = try Harness()
        try h.store.write { s in
            _ = try s.insertContract(
                Contract(
                    contractId: original, userId: "carol", productId: "com.getsession.org.pro_sub", status: .active, createdAt: 1,
                    updatedAt: 1))
        }
        return h
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
}
