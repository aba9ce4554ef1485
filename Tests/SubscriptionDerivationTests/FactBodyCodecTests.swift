import IAPFoundation
import StoreTestSupport
import Testing

@testable import SubscriptionDerivation
@testable import SubscriptionModel

/// The one fact codec (`FactBody`): what it writes it reads back as the same value, members are
/// matched by name in any order, and anything else is refused naming the fact and the member.
@Suite("Fact bodies: one codec, members by name, strict")
struct FactBodyCodecTests {
    static let strings = [
        "", "1", "2000000123", "com.example.pro/monthly", "0F8FAD5B-D9CB-469F-A165-70867728950E", "é ü 😀 \u{2028}",
        "say \"hi\"", "back\\slash", "tab\there", "nul\u{0}bell\u{7}", "Auto-Renewable Subscription", "A_VALUE_APPLE_ADDS_LATER",
    ]
    static let integers: [Int64] = [0, 1, -1, 9_990, 1_700_000_000_000, Int64.max, Int64.min]

    static func transaction(_ rng: inout SplitMix) -> TransactionFacts {
        func string() -> String { strings.randomElement(using: &rng)! }
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

    @Test func whatItWritesReadsBackAsTheSameValue() throws {
        var rng = SplitMix(seed: 3601)
        for _ in 0..<1_000 {
            let tx = Self.transaction(&rng)
            let body = FactBody.encode(tx)
            #expect(try FactBody.transaction(body) == tx, "\(body)")
            #expect(try FactBody.canonical(.transaction, body) == body, "already canonical: \(body)")
            func s() -> String? { Bool.random(using: &rng) ? Self.strings.randomElement(using: &rng)! : nil }
            func i() -> Int? { Bool.random(using: &rng) ? Int(Self.integers.randomElement(using: &rng)!) : nil }
            func l() -> Int64? { Bool.random(using: &rng) ? Self.integers.randomElement(using: &rng)! : nil }
            let renewal = RenewalFacts(
                originalTransactionId: s(), autoRenewStatus: i(), autoRenewProductId: s(), productId: s(),
                gracePeriodExpiresDate: l(), isInBillingRetryPeriod: [nil, true, false].randomElement(using: &rng)!,
                expirationIntent: i(), signedDate: l(), renewalDate: l(), offerType: i(), offerIdentifier: s(), offerPeriod: s())
            #expect(try FactBody.renewal(FactBody.encode(renewal)) == renewal)
            let note = NotificationFact(
                notificationType: s().map(NotificationType.init(rawValue:)), subtype: s().map(NotificationSubtype.init(rawValue:)),
                status: i(), transactionId: s())
            #expect(try FactBody.notification(FactBody.encode(note)) == note)
        }
    }

    /// Byte for byte what the stores hold (the form `JSONEncoder` with sorted keys once wrote).
    @Test func itWritesTheStoredForm() {
        var tx = TransactionFacts(
            transactionId: "2000000000000399", originalTransactionId: "2000000000000200", productId: "com.example.app.monthly",
            appAccountToken: "a/b", purchaseDate: 1_738_281_799_000, type: .init(rawValue: "Auto-Renewable Subscription"),
            price: 9_990, offerIdentifier: "é \u{1}\"")
        tx.isFromReceipt = true
        #expect(
            FactBody.encode(tx)
                == #"{"appAccountToken":"a\/b","isFromReceipt":true,"offerIdentifier":"é \u0001\"","#
                + #""originalTransactionId":"2000000000000200","price":9990,"productId":"com.example.app.monthly","#
                + #""purchaseDate":1738281799000,"transactionId":"2000000000000399","type":"Auto-Renewable Subscription"}"#)
        #expect(FactBody.encode(RenewalFacts()) == "{}")
        #expect(
            FactBody.encode(NotificationFact(notificationType: .init(rawValue: "DID_RENEW"), status: 1))
                == #"{"notificationType":"DID_RENEW","status":1}"#)
    }

    static let tx = #""originalTransactionId":"1","productId":"p","transactionId":"1""#

    /// Members are found by their name, in any order; escapes of every kind read as their text.
    @Test func membersAreMatchedByName() throws {
        let sorted = try FactBody.transaction(#"{"currency":"EUR","isFromReceipt":true,"price":5,\#(Self.tx)}"#)
        let reversed = try FactBody.transaction(
            #"{"transactionId":"1","productId":"p","price":5,"originalTransactionId":"1","#
                + #""isFromReceipt":true,"currency":"EUR"}"#)
        #expect(sorted == reversed && sorted.price == 5 && sorted.currency == "EUR" && sorted.isFromReceipt)
        let escaped = try FactBody.transaction(
            #"{"isFromReceipt":false,"offerIdentifier":"\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t",\#(Self.tx)}"#)
        #expect(escaped.offerIdentifier == "é😀/\"\\\u{8}\u{c}\n\r\t")
        let spaced = try FactBody.notification(#" { "status" : 2 , "notificationType" : null } "#)
        #expect(spaced == NotificationFact(notificationType: nil, status: 2))
    }

    /// Every body outside the shape is refused, naming the member and what is wrong; nothing is defaulted.
    @Test func anythingElseIsRefusedNamingTheMember() {
        let cases: [(String, String?, String)] = [
            (#"{\#(Self.tx)}"#, "isFromReceipt", "is missing"),
            (#"{"isFromReceipt":false,"originalTransactionId":"1","productId":"p"}"#, "transactionId", "is missing"),
            (#"{"isFromReceipt":null,\#(Self.tx)}"#, "isFromReceipt", "is not true or false"),
            (#"{"isFromReceipt":0,\#(Self.tx)}"#, "isFromReceipt", "is not true or false"),
            (#"{"isFromReceipt":false,"productId":null,"originalTransactionId":"1","transactionId":"1"}"#, "productId", "is not a string"),
            (#"{"isFromReceipt":false,"price":"5",\#(Self.tx)}"#, "price", "is not an integer"),
            (#"{"isFromReceipt":false,"price":1.5,\#(Self.tx)}"#, "price", "fraction"),
            (#"{"isFromReceipt":false,"price":2.0,\#(Self.tx)}"#, "price", "fraction"),
            (#"{"isFromReceipt":false,"price":1e3,\#(Self.tx)}"#, "price", "exponent"),
            (#"{"isFromReceipt":false,"price":-0,\#(Self.tx)}"#, "price", "is not an integer"),
            (#"{"isFromReceipt":false,"price":007,\#(Self.tx)}"#, "price", "is not an integer"),
            (#"{"isFromReceipt":false,"price":99999999999999999999,\#(Self.tx)}"#, "price", "out of range"),
            (#"{"isFromReceipt":false,"type":5,\#(Self.tx)}"#, "type", "is not a string"),
            (#"{"isFromReceipt":false,\#(Self.tx),"productId":"q"}"#, "productId", "is given twice"),
            (#"{"isFromReceipt":false,\#(Self.tx),"extra":1}"#, "extra", "is not a member of a transaction body"),
            (#"{"isFromReceipt":false,"offerIdentifier":"\ud83d",\#(Self.tx)}"#, "offerIdentifier", "lone surrogate"),
            (#"{"isFromReceipt":false,"offerIdentifier":"\x",\#(Self.tx)}"#, "offerIdentifier", "unknown escape"),
            (#"{"isFromReceipt":false,\#(Self.tx)} x"#, nil, "has more after its object"),
            (#"{"isFromReceipt":false,\#(Self.tx),}"#, nil, "a member's name was expected"),
            ("[]", nil, "is not a JSON object"), ("", nil, "is not a JSON object"), ("{", nil, "a member's name was expected"),
            (#"{"isFromReceipt":false"#, nil, "a ',' or '}' was expected"),
        ]
        for (body, field, problem) in cases {
            #expect(throws: FactBodyError.self, "\(body)") { try FactBody.transaction(body) }
            do {
                _ = try FactBody.transaction(body, key: "2000000123")
            } catch {
                #expect(error.field == field && error.problem.contains(problem), "\(body): \(error)")
                #expect(error.key == "2000000123" && error.kind == .transaction)
                #expect(error.description.hasPrefix("the transaction fact 2000000123: its body"), "\(error)")
            }
        }
        #expect(throws: FactBodyError(kind: .renewal, key: "9", field: "autoRenewStatus", problem: "is not an integer")) {
            try FactBody.renewal(#"{"autoRenewStatus":true}"#, key: "9")
        }
        #expect(throws: FactBodyError(kind: .notification, field: "notificationType", problem: "is not a string")) {
            try FactBody.notification(#"{"notificationType":["REFUND"]}"#)
        }
        let error = FactBodyError(kind: .transaction, key: "2000000123", field: "price", problem: "is not an integer")
        #expect(error.description == #"the transaction fact 2000000123: its body's "price" is not an integer"#)
    }

    /// The migration's reading: a transaction written before `isFromReceipt` existed, members in
    /// another order, whitespace or other escapes become the one stored form; the reader alone refuses them.
    @Test func earlierShapesBecomeTheStoredForm() throws {
        let old = #"{"productId":"p", "transactionId":"1","originalTransactionId":"1","offerIdentifier":"\u00e9/"}"#
        #expect(throws: FactBodyError.self) { try FactBody.transaction(old) }
        #expect(
            try FactBody.canonical(.transaction, old)
                == #"{"isFromReceipt":false,"offerIdentifier":"é\/","originalTransactionId":"1","productId":"p","transactionId":"1"}"#)
        #expect(
            try FactBody.canonical(.notification, #"{"status":1,"notificationType":"DID_RENEW"}"#)
                == #"{"notificationType":"DID_RENEW","status":1}"#)
        #expect(throws: FactBodyError.self) { try FactBody.canonical(.transaction, #"{"isFromReceipt":false}"#) }
        #expect(throws: FactBodyError.self) { try FactBody.canonical(.renewal, #"{"extra":1}"#) }
    }

    /// The derivation leaves an unreadable body out and says which (never silently).
    @Test func theDerivationReportsAnUnreadableBody() {
        let good = TransactionFacts(
            transactionId: "1", originalTransactionId: "1", productId: "p", purchaseDate: 1_000, expiresDate: 2_000,
            type: .init(rawValue: "Auto-Renewable Subscription"))
        let facts = [
            Fact(kind: .transaction, key: "1", originalTransactionId: "1", signedDate: 1_000, source: .apple, body: FactBody.encode(good)),
            Fact(
                kind: .transaction, key: "2", originalTransactionId: "1", signedDate: 1_500, source: .apple,
                body: #"{"isFromReceipt":false,"price":"5","originalTransactionId":"1","productId":"p","transactionId":"2"}"#),
            Fact(kind: .renewal, key: "1", originalTransactionId: "1", signedDate: 1_600, source: .apple, body: "{broken"),
        ]
        let derived = Derivation.derive(FactSet(facts))
        #expect(derived.orders.map(\.transaction.transactionId) == ["1"])
        #expect(derived.unreadable.map(\.key) == ["2", "1"])
        #expect(derived.unreadable.map(\.kind) == [.transaction, .renewal])
        #expect(derived.unreadable.first?.field == "price")
    }
}
