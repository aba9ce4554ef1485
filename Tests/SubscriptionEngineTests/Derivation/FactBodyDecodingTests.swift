import IAPFoundation
import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// Stored fact bodies are decoded through IAPFoundation's parser (`FactBodyDecoder`) instead of
/// Foundation's `JSONDecoder`: every body must decode to exactly what `JSONDecoder` gave, and the
/// canonical bodies the engine writes must take the fast path.
@Suite("Fact bodies: decoded as JSONDecoder decodes them")
struct FactBodyDecodingTests {
    static let transactions: [TransactionFacts] = [
        TransactionFacts(transactionId: "1", originalTransactionId: "1", productId: "p"),
        TransactionFacts(
            transactionId: "2000000123", originalTransactionId: "2000000100", productId: "com.example.pro/monthly",
            appAccountToken: "0F8FAD5B-D9CB-469F-A165-70867728950E", purchaseDate: 1_700_000_000_000,
            originalPurchaseDate: 1_600_000_000_000, expiresDate: 1_702_592_000_000, revocationDate: 1_701_000_000_000,
            revocationReason: 1, type: .init(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox", price: 9_990,
            currency: "EUR", signedDate: 1_700_000_000_123, transactionReason: .init(rawValue: "RENEWAL"), isUpgraded: true,
            revocationType: .init(rawValue: "REFUND_PRORATED"), revocationPercentage: 50_000,
            inAppOwnershipType: .init(rawValue: "FAMILY_SHARED"),
            offerType: 2, offerIdentifier: "spring \"sale\" ü \u{2028} \\ /", offerPeriod: "P1M",
            appTransactionId: "704289572311"),
        TransactionFacts(
            transactionId: "3", originalTransactionId: "3", productId: "é", type: .init(rawValue: "A Type Apple Adds Later"),
            price: -1, transactionReason: .init(rawValue: "SOMETHING_NEW"), isUpgraded: false, revocationType: .init(rawValue: "NEW_KIND"),
            inAppOwnershipType: .init(rawValue: "NEW_OWNER"), offerType: Int.max),
    ]

    static let renewals: [RenewalFacts] = [
        RenewalFacts(),
        RenewalFacts(
            originalTransactionId: "9", autoRenewStatus: 0, autoRenewProductId: "com.example.basic", productId: "p",
            gracePeriodExpiresDate: 1_700_000_000_000, isInBillingRetryPeriod: true, expirationIntent: 2,
            signedDate: 1_699_000_000_000, renewalDate: 1_702_000_000_000, offerType: 3, offerIdentifier: "code",
            offerPeriod: "P3M"),
    ]

    static let notifications: [NotificationFact] = [
        NotificationFact(notificationType: nil, status: 1, transactionId: "5"),
        NotificationFact(notificationType: .init(rawValue: "DID_RENEW")),
        NotificationFact(
            notificationType: .init(rawValue: "EXPIRED"), subtype: .init(rawValue: "VOLUNTARY"), status: 2, transactionId: "7"),
        NotificationFact(notificationType: .init(rawValue: "A_NEW_TYPE"), subtype: .init(rawValue: "A_NEW_SUBTYPE"), status: 9),
    ]

    static func agree<T: Decodable & Equatable>(_ type: T.Type, _ body: String) -> Bool {
        FactCoding.decode(type, body) == FactCoding.foundationDecode(type, body)
    }

    @Test func canonicalBodiesDecodeToTheValueTheyWereEncodedFrom() {
        for value in Self.transactions {
            let body = FactCoding.encode(value)
            #expect(FactBodyDecoder.decode(TransactionFacts.self, body) == value, "\(body)")
            #expect(FactCoding.foundationDecode(TransactionFacts.self, body) == value, "\(body)")
        }
        for value in Self.renewals {
            let body = FactCoding.encode(value)
            #expect(FactBodyDecoder.decode(RenewalFacts.self, body) == value, "\(body)")
            #expect(FactCoding.foundationDecode(RenewalFacts.self, body) == value, "\(body)")
        }
        for value in Self.notifications {
            let body = FactCoding.encode(value)
            #expect(FactBodyDecoder.decode(NotificationFact.self, body) == value, "\(body)")
            #expect(FactCoding.foundationDecode(NotificationFact.self, body) == value, "\(body)")
        }
    }

    /// Bodies no encoder of ours writes: nulls, unknown keys, wrong types, missing required keys,
    /// numbers out of range or with a fraction, broken JSON. Each decodes (or fails) as JSONDecoder does.
    @Test func otherBodiesDecodeOrFailAsJSONDecoderDoes() {
        let tx = #""transactionId":"1","originalTransactionId":"1","productId":"p""#
        let transactionBodies = [
            "{\(tx),\"isFromReceipt\":false}",
            "{\(tx),\"isFromReceipt\":true,\"price\":null,\"type\":null,\"extra\":[1,{\"a\":2}]}",
            "{\(tx)}",
            "{\(tx),\"isFromReceipt\":0}",
            "{\(tx),\"isFromReceipt\":false,\"price\":1.5}",
            "{\(tx),\"isFromReceipt\":false,\"price\":2.0}",
            "{\(tx),\"isFromReceipt\":false,\"price\":1e3}",
            "{\(tx),\"isFromReceipt\":false,\"price\":99999999999999999999}",
            "{\(tx),\"isFromReceipt\":false,\"price\":\"5\"}",
            "{\(tx),\"isFromReceipt\":false,\"type\":5}",
            "{\(tx),\"isFromReceipt\":false,\"productId\":\"q\"}",
            "{\"transactionId\":1,\"originalTransactionId\":\"1\",\"productId\":\"p\",\"isFromReceipt\":false}",
            "{\(tx),\"isFromReceipt\":false,\"offerIdentifier\":\"\\u00e9\\ud83d\\ude00\\/\"}",
            "[]", "null", "", "{", "{\(tx),\"isFromReceipt\":false} x",
        ]
        for body in transactionBodies {
            #expect(Self.agree(TransactionFacts.self, body), "\(body)")
        }
        let renewalBodies = [
            "{}", "{\"autoRenewStatus\":1,\"isInBillingRetryPeriod\":null}", "{\"autoRenewStatus\":true}",
            "{\"expirationIntent\":-3,\"signedDate\":-9223372036854775808}", "{\"gracePeriodExpiresDate\":\"1\"}",
        ]
        for body in renewalBodies {
            #expect(Self.agree(RenewalFacts.self, body), "\(body)")
        }
        let notificationBodies = [
            "{}", "{\"notificationType\":\"REFUND\",\"status\":5}", "{\"notificationType\":null,\"status\":1}",
            "{\"notificationType\":[\"REFUND\"]}", "{\"subtype\":\"UPGRADE\",\"status\":2147483648}",
        ]
        for body in notificationBodies {
            #expect(Self.agree(NotificationFact.self, body), "\(body)")
        }
    }

    /// The engine's own facts (of real events) take the fast path and give what JSONDecoder gives.
    @Test func theEnginesFactsTakeTheFastPath() {
        let event = SubscriptionEvent(
            source: .apple, notificationType: .init(rawValue: "DID_RENEW"), signedDate: 1_700_000_000_000,
            transaction: Self.transactions[1], renewal: Self.renewals[1], raw: "{}", status: 1)
        let facts = event.facts
        #expect(facts.count == 3)
        for fact in facts {
            switch fact.kind {
            case .transaction:
                #expect(FactBodyDecoder.decode(TransactionFacts.self, fact.body) != nil)
                #expect(Self.agree(TransactionFacts.self, fact.body))
            case .renewal:
                #expect(FactBodyDecoder.decode(RenewalFacts.self, fact.body) != nil)
                #expect(Self.agree(RenewalFacts.self, fact.body))
            case .notification:
                #expect(FactBodyDecoder.decode(NotificationFact.self, fact.body) != nil)
                #expect(Self.agree(NotificationFact.self, fact.body))
            }
        }
    }
}
