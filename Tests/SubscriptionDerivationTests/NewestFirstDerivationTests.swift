import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionDerivation
@testable import SubscriptionModel

/// The derivation decodes renewal infos and notifications newest first and stops once no older one
/// can decide. It must give exactly what deciding among all of them gives — rows,
/// statuses and every reason (which fact, its source) — whatever the history: out-of-order
/// signedDates, several statements at the same moment (ties broken by content, then by arrival
/// order), refunds and revocations, receipts, unreadable bodies.
@Suite("Derivation: newest-first decoding agrees with decoding everything")
struct NewestFirstDerivationTests {
    static let original = "7000"
    static let t0: Int64 = 1_700_000_000_000
    static let day: Int64 = 86_400_000

    @Test(arguments: 0..<200 as Range<UInt64>)
    func randomHistoriesDeriveTheSameAsDecodingEverything(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let facts = Self.history(&rng)
        for now in [nil, Self.t0 + 20 * Self.day] as [Int64?] {
            let set = FactSet(facts)
            let lazy = Derivation.derive(set, now: now)
            let everything = Derivation.derive(set, now: now, decodingEverything: true)
            #expect(lazy == everything, "seed \(seed), \(facts.count) facts")
            #expect(set.newestSignedDate == facts.filter(Self.readable).map(\.signedDate).max())
            // What was known at each moment (`entitled --at`): the same agreement on every prefix.
            for cutoff in Set(facts.map(\.signedDate)) {
                let then = FactSet(facts, signedBy: cutoff)
                #expect(
                    Derivation.derive(then, now: cutoff) == Derivation.derive(then, now: cutoff, decodingEverything: true),
                    "seed \(seed), signed by \(cutoff)")
            }
        }
    }

    /// The newest-first reading decodes only the newest few of a long history: old bodies that
    /// could never decide are not even read (an unreadable old body changes nothing and costs nothing).
    @Test func aLongHistoryDecidesFromItsNewestStatements() {
        var facts: [Fact] = []
        for period in 0..<120 {
            let signed = Self.t0 + Int64(period) * 30 * Self.day
            facts.append(Self.transaction("\(8000 + period)", purchase: signed, signed: signed, source: .apple))
            facts.append(Self.fact(.renewal, signed: signed, source: .apple, body: FactBody.encode(RenewalFacts(autoRenewStatus: 1))))
            facts.append(
                Self.fact(
                    .notification, signed: signed, source: .apple,
                    body: FactBody.encode(NotificationFact(notificationType: .init(rawValue: "DID_RENEW"), status: 1))))
        }
        // Old statements whose bodies cannot be read: deciding among everything leaves them out;
        // the newest-first reading never reaches them.
        facts.insert(Self.fact(.renewal, signed: Self.t0 + Self.day, source: .apple, body: "{broken"), at: 0)
        facts.insert(Self.fact(.notification, signed: Self.t0 + Self.day, source: .apple, body: "{broken"), at: 0)
        let set = FactSet(facts)
        var renewals = VersionReader(set.storedRenewals)
        let bound = renewals.newestSignedDate { $0.value.autoRenewStatus != nil }
        #expect(bound == Self.t0 + 119 * 30 * Self.day)
        #expect(renewals.versions(signedSince: bound).count == 1)
        let derived = Derivation.derive(set)
        #expect(derived == Derivation.derive(set, now: nil, decodingEverything: true))
        #expect(derived.contract?.status == .active)
        #expect(derived.contract?.reason("status")?.fact == "DID_RENEW: Apple's data.status 1")
        #expect(derived.orders.count == 120)
    }

    // MARK: random histories

    static func readable(_ fact: Fact) -> Bool {
        switch fact.kind {
        case .transaction: (try? FactBody.transaction(fact.body)) != nil
        case .renewal: (try? FactBody.renewal(fact.body)) != nil
        case .notification: (try? FactBody.notification(fact.body)) != nil
        }
    }

    static func fact(_ kind: Fact.Kind, key: String = original, signed: Int64, source: EventSource, body: String) -> Fact {
        Fact(kind: kind, key: key, originalTransactionId: original, signedDate: signed, source: source, body: body)
    }

    static func transaction(
        _ id: String, purchase: Int64, signed: Int64, source: EventSource, revoked: Bool = false, family: Bool = false,
        upgraded: Bool? = nil, product: String = "pro.monthly", receipt: Bool = false
    ) -> Fact {
        var tx = TransactionFacts(
            transactionId: id, originalTransactionId: original, productId: product, purchaseDate: purchase,
            expiresDate: purchase + 30 * day, revocationDate: revoked ? purchase + day : nil, revocationReason: revoked ? 1 : nil,
            type: receipt ? nil : .init(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox", price: 9_990,
            currency: "EUR", isUpgraded: upgraded, revocationType: family ? .init(rawValue: "FAMILY_REVOKE") : nil)
        tx.isFromReceipt = receipt
        return fact(.transaction, key: id, signed: signed, source: source, body: FactBody.encode(tx))
    }

    /// A history of 1–40 facts signed on few distinct days (so many share a moment), delivered in
    /// a random order, from random sources; the same statement sometimes arrives twice by two paths.
    static func history(_ rng: inout SplitMix) -> [Fact] {
        let sources: [EventSource] = [.apple, .appleAPI, .client, .restore]
        let types: [(String?, String?)] = [
            ("SUBSCRIBED", "INITIAL_BUY"), ("DID_RENEW", nil), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"), ("DID_CHANGE_RENEWAL_STATUS", nil), ("EXPIRED", "VOLUNTARY"),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("DID_FAIL_TO_RENEW", nil), ("GRACE_PERIOD_EXPIRED", nil), ("REFUND", nil),
            ("REVOKE", nil), ("REFUND_REVERSED", nil), ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), ("CONSUMPTION_REQUEST", nil),
            (nil, nil),
        ]
        let days = Int64.random(in: 1...6, using: &rng)
        let periods = Int.random(in: 1...5, using: &rng)
        let ids = (0..<periods).map { "\(7000 + $0)" }
        func signed() -> Int64 { t0 + Int64.random(in: 0..<days, using: &rng) * day }
        var facts: [Fact] = []
        for _ in 0..<Int.random(in: 1...40, using: &rng) {
            let source = sources.randomElement(using: &rng)!
            let at = signed()
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...2:
                let index = Int.random(in: 0..<periods, using: &rng)
                facts.append(
                    transaction(
                        ids[index], purchase: t0 + Int64(index) * 30 * day - day, signed: at, source: source,
                        revoked: Int.random(in: 0..<5, using: &rng) == 0, family: Bool.random(using: &rng),
                        upgraded: [nil, true, false].randomElement(using: &rng)!,
                        product: ["pro.monthly", "pro.yearly"].randomElement(using: &rng)!,
                        receipt: Int.random(in: 0..<6, using: &rng) == 0))
            case 3...5:
                let renewal = RenewalFacts(
                    autoRenewStatus: [nil, 0, 1].randomElement(using: &rng)!,
                    autoRenewProductId: [nil, "pro.monthly", "pro.yearly"].randomElement(using: &rng)!,
                    gracePeriodExpiresDate: Bool.random(using: &rng) ? at + 3 * day : nil)
                let body = Int.random(in: 0..<12, using: &rng) == 0 ? "{\"autoRenewStatus\":" : FactBody.encode(renewal)
                facts.append(fact(.renewal, signed: at, source: source, body: body))
            default:
                let (type, subtype) = types.randomElement(using: &rng)!
                let note = NotificationFact(
                    notificationType: type.map { NotificationType(rawValue: $0) },
                    subtype: subtype.map { NotificationSubtype(rawValue: $0) },
                    status: [nil, nil, 1, 2, 3, 4, 5, 9].randomElement(using: &rng)!,
                    transactionId: ids.randomElement(using: &rng)!)
                let body = Int.random(in: 0..<12, using: &rng) == 0 ? "[]" : FactBody.encode(note)
                facts.append(fact(.notification, signed: at, source: type == nil ? .appleAPI : .apple, body: body))
            }
            // The same statement by another path, at the same moment.
            if Int.random(in: 0..<4, using: &rng) == 0, var twin = facts.last, twin.kind != .transaction {
                twin.source = twin.source == .apple ? .appleAPI : .apple
                facts.append(twin)
            }
        }
        return facts.shuffled(using: &rng)
    }
}
