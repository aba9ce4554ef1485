import IAPFoundation
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Apple's enumerations: known values typed, values Apple adds later kept as sent, and stored as sent.
@Suite("Apple's values")
struct AppleValueTests {
    @Test func aKnownValueIsTypedAndAnUnknownOneIsKeptAsSent() {
        #expect(NotificationType(rawValue: "DID_RENEW") == .known(.didRenew))
        #expect(NotificationType(rawValue: "SOMETHING_NEW") == .unknown("SOMETHING_NEW"))
        #expect(NotificationType(rawValue: "SOMETHING_NEW").rawValue == "SOMETHING_NEW")
        #expect(ProductType(rawValue: "Auto-Renewable Subscription") == .known(.autoRenewable))
        #expect(RevocationType(rawValue: "FAMILY_REVOKE") == .known(.familyRevoke))
        #expect(OfferType(rawValue: 4) == .known(.winBack))
        #expect(OfferType(rawValue: 9) == .unknown(9))
    }

    @Test func everyKnownValueRoundTripsThroughItsRawValue() {
        for name in NotificationTypeName.allCases { #expect(NotificationType(rawValue: name.rawValue) == .known(name)) }
        for name in NotificationSubtypeName.allCases {
            #expect(NotificationSubtype(rawValue: name.rawValue) == .known(name))
        }
        for name in TransactionReasonName.allCases { #expect(TransactionReason(rawValue: name.rawValue) == .known(name)) }
    }

    private struct Stored: Codable, Equatable {
        var type: NotificationType
        var subtype: NotificationSubtype?
        var offer: OfferType?
    }

    /// Facts are stored as JSON: a value is written exactly as Apple sent it and read back equal,
    /// known or not.
    @Test func valuesAreEncodedAsAppleSentThem() throws {
        let stored = Stored(
            type: NotificationType(rawValue: "DID_RENEW"), subtype: NotificationSubtype(rawValue: "NOT_YET_DOCUMENTED"), offer: 2)
        let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
        #expect(json.contains(#""type":"DID_RENEW""#))
        #expect(json.contains(#""subtype":"NOT_YET_DOCUMENTED""#))
        #expect(json.contains(#""offer":2"#))
        #expect(try JSONDecoder().decode(Stored.self, from: Data(json.utf8)) == stored)
    }
}
