import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// A transaction's canonical body is read straight into `TransactionFacts`; what that
/// reader accepts must decode to exactly what `FactBodyDecoder` gives, and what it does not accept
/// it must leave to `FactBodyDecoder` (nil), never decode differently.
@Suite("Transaction bodies: the canonical reader agrees with FactBodyDecoder")
struct CanonicalTransactionBodyTests {
    static let strings = [
        "", "1", "2000000123", "com.example.pro.monthly", "0F8FAD5B-D9CB-469F-A165-70867728950E", "é ü 😀 \u{2028}",
        "say \"hi\"", "back\\slash", "a/b", "tab\there", "Sandbox", "Auto-Renewable Subscription", "PURCHASE", "REFUND_PRORATED",
        "FAMILY_SHARED", "A_VALUE_APPLE_ADDS_LATER",
    ]
    static let integers: [Int64] = [0, 1, -1, 9_990, 1_700_000_000_000, Int64.max, Int64.min, -42]

    /// The strings JSONEncoder writes without an escape.
    static let plainStrings = strings.filter { !$0.contains(where: { "\"\\/\t".contains($0) }) }

    static func random(_ rng: inout SplitMix, plain: Bool) -> TransactionFacts {
        func string() -> String { (plain ? plainStrings : strings).randomElement(using: &rng)! }
        func maybeString() -> String? { Bool.random(using: &rng) ? string() : nil }
        func maybeInt64() -> Int64? { Bool.random(using: &rng) ? integers.randomElement(using: &rng)! : nil }
        func maybeInt() -> Int? { maybeInt64().map { Int($0) } }
        var tx = TransactionFacts(
            transactionId: string(), originalTransactionId: string(), productId: string(), appAccountToken: maybeString(),
            purchaseDate: maybeInt64(), originalPurchaseDate: maybeInt64(), expiresDate: maybeInt64(), revocationDate: maybeInt64(),
            revocationReason: maybeInt(), type: maybeString().map(ProductType.init(rawValue:)), environment: maybeString(),
            price: maybeInt64(), currency: maybeString(), signedDate: maybeInt64(),
            transactionReason: maybeString().map(TransactionReason.init(rawValue:)),
            isUpgraded: [nil, true, false].randomElement(using: &rng)!,
            revocationType: maybeString().map(RevocationType.init(rawValue:)), revocationPercentage: maybeInt(),
            inAppOwnershipType: maybeString().map(OwnershipType.init(rawValue:)), offerType: maybeInt(),
            offerIdentifier: maybeString(), offerPeriod: maybeString(), appTransactionId: maybeString())
        tx.isFromReceipt = Bool.random(using: &rng)
        return tx
    }

    @Test func canonicalBodiesDecodeToTheValueFactBodyDecoderGives() {
        var rng = SplitMix(seed: 25)
        var fast = 0
        var plain = 0
        for _ in 0..<2_000 {
            let isPlain = Bool.random(using: &rng)
            if isPlain { plain += 1 }
            let value = Self.random(&rng, plain: isPlain)
            let body = FactCoding.encode(value)
            let read = CanonicalTransactionBody.decode(body)
            // A body with no escape takes the canonical reader; one with an escape is left to FactBodyDecoder.
            #expect((read != nil) == !body.contains("\\"), "\(body)")
            if let read {
                fast += 1
                #expect(read == value, "\(body)")
                #expect(read == FactBodyDecoder.decode(TransactionFacts.self, body), "\(body)")
            }
            #expect(FactCoding.decode(TransactionFacts.self, body) == value, "\(body)")
        }
        #expect(fast >= plain && plain > 800)
    }

    /// Bodies outside the canonical shape: the reader gives nil or exactly what FactBodyDecoder gives.
    @Test func otherBodiesAreLeftToFactBodyDecoder() {
        let tx = #""originalTransactionId":"1","productId":"p","transactionId":"1""#
        let bodies = [
            "{\"isFromReceipt\":false,\(tx)}",
            "{\(tx)}",
            "{\"isFromReceipt\":null,\(tx)}",
            "{\"isFromReceipt\":0,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":null,\(tx),\"type\":null}",
            "{\"isFromReceipt\":false,\"price\":1.5,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":2.0,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":1e3,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":-0,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":007,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":99999999999999999999,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":-9223372036854775809,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":-9223372036854775808,\(tx)}",
            "{\"isFromReceipt\":false,\"price\":\"5\",\(tx)}",
            "{\"isFromReceipt\":false,\"offerType\":9223372036854775807,\(tx)}",
            "{\"isFromReceipt\":false,\(tx),\"type\":5}",
            "{\"isFromReceipt\":false,\(tx),\"productId\":\"q\"}",
            "{\"isFromReceipt\":false,\(tx),\"extra\":1}",
            "{\"isFromReceipt\":false,\"originalTransactionId\":\"1\",\"productId\":\"p\",\"transactionId\":1}",
            "{\"isFromReceipt\":false,\"originalTransactionId\":\"1\",\"productId\":null,\"transactionId\":\"1\"}",
            "{\"isFromReceipt\":false,\"offerIdentifier\":\"\\u00e9\\/\",\(tx)}",
            "{ \"isFromReceipt\":false,\(tx)}",
            "{\"isFromReceipt\":false,\(tx)} ",
            "{\"isFromReceipt\":false,\(tx)}x",
            "{\(tx),\"isFromReceipt\":true,\"currency\":\"EUR\",\"appAccountToken\":\"T\"}",
            "{\"isFromReceipt\":false,\(tx),}",
            "{\"isFromReceipt\":false,,\(tx)}",
            "{}", "[]", "null", "", "{", "{\"isFromReceipt\":false", "{\"isFromReceipt\":fals,\(tx)}",
        ]
        for body in bodies {
            let read = CanonicalTransactionBody.decode(body)
            #expect(read == nil || read == FactBodyDecoder.decode(TransactionFacts.self, body), "\(body)")
        }
        // Keys in another order than the canonical one still read (looked up from the start).
        #expect(CanonicalTransactionBody.decode("{\(tx),\"isFromReceipt\":true,\"currency\":\"EUR\"}")?.currency == "EUR")
    }
}
