import AppStoreJWS
import AppleFlows
import ClientSubmissions
import Foundation
import ItemInput
import PersonalData
import SubscriptionDerivation
import SubscriptionModel
import Testing

@testable import IAPOperations

/// The mapping from Apple's payloads to the engine's facts, including Apple's newer fields and
/// notification shapes (decoded from stored JWS, as the in-place upgrade reads the ledger).
@Suite("Event mapping: Apple's payloads to facts")
struct EventMappingTests {
    static func jws(_ object: [String: Any]) throws -> String {
        let payload = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return "eyJhbGciOiJFUzI1NiJ9." + Base64.encodeURL(Array(payload)) + ".c2ln"
    }

    static var transaction: [String: Any] {
        [
            "transactionId": "2000000000000002", "originalTransactionId": "2000000000000001", "productId": "pro.monthly",
            "type": "Auto-Renewable Subscription", "purchaseDate": 1_750_000_000_000, "expiresDate": 1_752_592_000_000,
            "revocationDate": 1_751_000_000_000, "revocationReason": 0, "revocationType": "REFUND_PRORATED",
            "revocationPercentage": 50000, "appTransactionId": "704897469903383919", "offerPeriod": "P1M",
            "offerType": 2, "offerIdentifier": "winback", "inAppOwnershipType": "PURCHASED", "signedDate": 1_751_000_000_500,
            "environment": "Sandbox",
        ]
    }

    @Test func newerTransactionFieldsAndDataStatusBecomeFacts() throws {
        let raw = try Self.jws([
            "notificationType": "REFUND", "notificationUUID": "u-1", "signedDate": 1_751_000_001_000,
            "data": [
                "environment": "Sandbox", "bundleId": "com.example", "status": 5,
                "signedTransactionInfo": try Self.jws(Self.transaction),
                "signedRenewalInfo": try Self.jws([
                    "originalTransactionId": "2000000000000001", "autoRenewStatus": 0, "autoRenewProductId": "pro.monthly",
                    "renewalDate": 1_752_592_000_000, "offerPeriod": "P1M", "signedDate": 1_751_000_000_900,
                ]),
            ],
        ])
        let entry = LedgerEntry(receivedAt: 0, source: .apple, verdict: .applied, raw: raw)
        let event = try #require(FactRebuild.event(entry))
        #expect(event.status == 5)
        let tx = try #require(event.transaction)
        #expect(tx.revocationType?.rawValue == "REFUND_PRORATED")
        #expect(tx.revocationPercentage == 50000)
        #expect(tx.appTransactionId == "704897469903383919")
        #expect(tx.offerPeriod == "P1M")
        #expect(tx.offerType == 2)
        #expect(event.renewal?.renewalDate == 1_752_592_000_000)
        let kinds = event.facts.map(\.kind)
        #expect(kinds == [.transaction, .renewal, .notification])
        // Nested payloads are dated by the notification that carried them.
        #expect(event.facts.allSatisfy { $0.signedDate == 1_751_000_001_000 })
        let derived = Derivation.derive(FactSet(event.facts))
        #expect(derived.orders.first?.status == .refunded)
        #expect(derived.contract?.status == .revoked)
    }

    /// RESCIND_CONSENT carries a top-level `appData` instead of `data`: recorded, no transaction, no facts.
    @Test func rescindConsentCarriesNoTransaction() throws {
        let raw = try Self.jws([
            "notificationType": "RESCIND_CONSENT", "notificationUUID": "u-2", "signedDate": 1_751_000_001_000,
            "appData": ["appAppleId": 1_234_567_890, "bundleId": "com.example", "environment": "Sandbox"],
        ])
        let event = try #require(FactRebuild.event(LedgerEntry(receivedAt: 0, source: .apple, verdict: .ignored, raw: raw)))
        #expect(event.notificationType?.rawValue == "RESCIND_CONSENT")
        #expect(event.transaction == nil)
        #expect(event.facts.isEmpty)
    }

    @Test func aFamilyRevocationIsRevokedNotRefunded() throws {
        var family = Self.transaction
        family["revocationType"] = "FAMILY_REVOKE"
        family["inAppOwnershipType"] = "FAMILY_SHARED"
        let event = try #require(
            FactRebuild.event(LedgerEntry(receivedAt: 0, source: .client, verdict: .applied, raw: try Self.jws(family))))
        #expect(Derivation.derive(FactSet(event.facts)).orders.first?.status == .revoked)
    }
}
