import Foundation
import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// Fact bodies are written without `JSONEncoder`; every stored body and digest depends
/// on their bytes, so they must be exactly what `JSONEncoder` with sorted keys writes.
@Suite("Fact bodies: the canonical writer agrees with JSONEncoder byte for byte")
struct CanonicalFactEncodingTests {
    static func foundation<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The canonical writer, and FactCoding through it, write `value` as JSONEncoder does.
    static func expectAgrees<T: Encodable>(_ value: T) throws {
        let expected = try foundation(value)
        #expect(CanonicalFactEncoding.encode(value) == expected)
        #expect(FactCoding.encode(value) == expected)
    }

    static func string(_ rng: inout SplitMix) -> String { CanonicalTransactionBodyTests.strings.randomElement(using: &rng)! }
    static func maybeString(_ rng: inout SplitMix) -> String? { Bool.random(using: &rng) ? string(&rng) : nil }
    static func maybeInt64(_ rng: inout SplitMix) -> Int64? {
        Bool.random(using: &rng) ? CanonicalTransactionBodyTests.integers.randomElement(using: &rng)! : nil
    }
    static func maybeInt(_ rng: inout SplitMix) -> Int? { maybeInt64(&rng).map { Int($0) } }
    static func maybeBool(_ rng: inout SplitMix) -> Bool? { [nil, true, false].randomElement(using: &rng)! }

    @Test func transactionsAreWrittenAsJSONEncoderWritesThem() throws {
        var rng = SplitMix(seed: 2501)
        for _ in 0..<2_000 {
            let value = CanonicalTransactionBodyTests.random(&rng, plain: Bool.random(using: &rng))
            try Self.expectAgrees(value)
        }
    }

    @Test func renewalInfosAreWrittenAsJSONEncoderWritesThem() throws {
        var rng = SplitMix(seed: 2502)
        for _ in 0..<2_000 {
            let value = RenewalFacts(
                originalTransactionId: Self.maybeString(&rng), autoRenewStatus: Self.maybeInt(&rng),
                autoRenewProductId: Self.maybeString(&rng), productId: Self.maybeString(&rng),
                gracePeriodExpiresDate: Self.maybeInt64(&rng), isInBillingRetryPeriod: Self.maybeBool(&rng),
                expirationIntent: Self.maybeInt(&rng), signedDate: Self.maybeInt64(&rng), renewalDate: Self.maybeInt64(&rng),
                offerType: Self.maybeInt(&rng), offerIdentifier: Self.maybeString(&rng), offerPeriod: Self.maybeString(&rng))
            try Self.expectAgrees(value)
        }
    }

    @Test func notificationsAreWrittenAsJSONEncoderWritesThem() throws {
        var rng = SplitMix(seed: 2503)
        for _ in 0..<500 {
            let value = NotificationFact(
                notificationType: Self.maybeString(&rng).map(NotificationType.init(rawValue:)),
                subtype: Self.maybeString(&rng).map(NotificationSubtype.init(rawValue:)), status: Self.maybeInt(&rng),
                transactionId: Self.maybeString(&rng))
            try Self.expectAgrees(value)
        }
    }

    /// Any other type is left to JSONEncoder.
    @Test func otherTypesAreNotWrittenHere() {
        #expect(CanonicalFactEncoding.encode(["b": 1, "a": 2]) == nil)
        #expect(FactCoding.encode(["b": 1, "a": 2]) == #"{"a":2,"b":1}"#)
    }
}
