import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The digest a fact is kept under: SHA-256 of its identity, 128 bits as 22 characters of base64url.
@Suite("StoreSQL: the facts' digest")
struct FactDigestTests {
    static func fact(source: EventSource = .client, body: String = #"{"productId":"a"}"#) -> Fact {
        Fact(kind: .transaction, key: "t-1", originalTransactionId: "o-1", signedDate: 1_700_000_000_000, source: source, body: body)
    }

    @Test func theDigestIsTheSHA256OfTheFactsIdentity() {
        let fact = Self.fact()
        #expect(fact.identity == #"transaction|t-1|o-1|1700000000000|app|{"productId":"a"}"#)
        // sha256(identity), first 16 bytes (computed with Python's hashlib: 52c918d1b797cfc4957920af816a4f2c),
        // in unpadded base64url (Python's base64.urlsafe_b64encode).
        #expect(FactDigest.of(fact) == "UskY0beXz8SVeSCvgWpPLA")
    }

    @Test func theAppAndARestoreAreOneSourceAndApplesTwoOthers() {
        #expect(FactDigest.of(Self.fact(source: .client)) == FactDigest.of(Self.fact(source: .restore)))
        #expect(Self.fact(source: .client).isSameFact(as: Self.fact(source: .restore)))
        let digests = Set([EventSource.client, .apple, .appleAPI].map { FactDigest.of(Self.fact(source: $0)) })
        #expect(digests.count == 3)
        #expect(!Self.fact(source: .apple).isSameFact(as: Self.fact(source: .appleAPI)))
        #expect(FactDigest.of(Self.fact(body: "{}")) != FactDigest.of(Self.fact()))
        #expect(!Self.fact(body: "{}").isSameFact(as: Self.fact()))
    }
}
