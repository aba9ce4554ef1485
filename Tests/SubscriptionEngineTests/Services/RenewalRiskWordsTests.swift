import IAPFoundation
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// ``RenewalRisk`` reads the newest renewal info the facts keep and says only what it states: an
/// older version is not read, and a field Apple did not send (or that was kept before iapctl kept
/// it) gives no sentence.
@Suite("Renewal risk: the newest renewal info, nothing guessed")
struct RenewalRiskWordsTests {
    static let t0: Int64 = 1_735_689_600_000
    static let day: Int64 = 86_400_000

    func renewal(_ r: RenewalFacts, signed: Int64, source: EventSource = .apple) -> Fact {
        Fact(kind: .renewal, key: "9000", originalTransactionId: "9000", signedDate: signed, source: source, body: FactBody.encode(r))
    }

    var contract: Contract {
        Contract(contractId: "9000", userId: "u", productId: "pro.monthly", status: .active, expiresDate: Self.t0 + 30 * Self.day)
    }

    @Test func theNewestRenewalInfoDecides() {
        let older = renewal(RenewalFacts(autoRenewStatus: 1, priceIncreaseStatus: 0), signed: Self.t0)
        let newer = renewal(RenewalFacts(autoRenewStatus: 1, priceIncreaseStatus: 1), signed: Self.t0 + Self.day)
        // Arrival order does not matter: the newest signed version decides.
        for facts in [[older, newer], [newer, older]] {
            let risk = RenewalRisk.of(contract, facts: facts, now: Self.t0)
            #expect(risk.kinds.isEmpty, "\(risk)")
            #expect(risk.priceIncreaseStatus == 1)
            #expect(risk.renewalInfoSignedDate == Self.t0 + Self.day)
        }
        let consent = RenewalRisk.of(contract, facts: [older], now: Self.t0)
        #expect(consent.kinds == [.priceConsent])
    }

    @Test func aFieldNotKeptGivesNoSentence() {
        // A renewal info kept before priceIncreaseStatus was kept: its body has no such key.
        let body = #"{"autoRenewProductId":"pro.monthly","autoRenewStatus":1,"productId":"pro.monthly"}"#
        let old = Fact(kind: .renewal, key: "9000", originalTransactionId: "9000", signedDate: Self.t0, source: .apple, body: body)
        let risk = RenewalRisk.of(contract, facts: [old], now: Self.t0)
        #expect(risk.kinds.isEmpty && risk.sentences.isEmpty, "\(risk)")
        #expect(risk.priceIncreaseStatus == nil)
        // No renewal info at all: nothing known, and the summary says so.
        #expect(RenewalRisk.of(contract, facts: [], now: Self.t0).summary == "none known")
    }

    @Test func newFieldsRoundTripThroughTheCanonicalBody() throws {
        let r = RenewalFacts(autoRenewStatus: 1, priceIncreaseStatus: 0, renewalPrice: 12990, currency: "EUR")
        let body = FactBody.encode(r)
        #expect(body.contains(#""priceIncreaseStatus":0"#) && body.contains(#""renewalPrice":12990"#), "\(body)")
        #expect(try FactBody.renewal(body) == r)
    }
}
