import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import StoreSQL

/// The packed form of the store's texts is exact, smaller, refers to the
/// row's own values, and refuses damage.
@Suite("StoreSQL: packed texts")
struct TextPackingTests {
    static let json =
        #"{"autoRenew":true,"contractId":"2000000000000200","createdAt":1796177619156,"environment":"Sandbox","#
        + #""expiresDate":1738281799000,"id":200,"lastEventDate":1735689804000,"productId":"com.example.app.monthly","#
        + #""status":"active","updatedAt":1796177619156,"userId":"user-200"}"#

    @Test func textsPackSmallerAndBackExactly() throws {
        let texts: [String?] = [Self.json, nil, "", "été \u{1}\u{1}€ \u{0} ✓", "{\"autoRenew\":false," + Self.json.dropFirst(18)]
        for kind in TextPacking.Kind.allCases {
            let packed = try #require(TextPacking.pack(texts, kind))
            #expect(packed.count < texts.compactMap { $0?.utf8.count }.reduce(0, +) / 2)
            #expect(try TextPacking.unpack(packed, kind, count: texts.count) == texts)
        }
    }

    @Test func theRowsOwnValuesAreReferredToAndNeededBack() throws {
        let context: [String?] = ["2000000000000200", nil, "abc", "user-200"]
        let with = try #require(TextPacking.pack([Self.json], .audit, context: context))
        let without = try #require(TextPacking.pack([Self.json], .audit))
        #expect(with.count < without.count)
        #expect(try TextPacking.unpack(with, .audit, count: 1, context: context) == [Self.json])
        // Other values would rebuild another text: the frame refers to them, it does not hold them.
        let other = try TextPacking.unpack(with, .audit, count: 1, context: ["2000000000000999", nil, "abc", "user-201"])
        #expect(other != [Self.json])
        #expect(throws: LedgerPacking.UnpackError.self) { try TextPacking.unpack(with, .audit, count: 1, context: []) }
        // A packed form without references reads back under any context.
        #expect(try TextPacking.unpack(without, .audit, count: 1, context: context) == [Self.json])
    }

    @Test func shortTextsAndDamageAreRefused() throws {
        #expect(TextPacking.pack(["{}"], .factBody) == nil)
        #expect(TextPacking.pack([nil, nil], .audit) == nil)
        var packed = try #require(TextPacking.pack([Self.json], .audit))
        #expect(throws: LedgerPacking.UnpackError.self) { try TextPacking.unpack(packed, .audit, count: 2) }
        #expect(throws: LedgerPacking.UnpackError.self) { try TextPacking.unpack(Array(packed.dropLast(3)), .audit, count: 1) }
        packed[0] = 9
        #expect(throws: LedgerPacking.UnpackError.self) { try TextPacking.unpack(packed, .audit, count: 1) }
    }

    @Test func aV7DigestBecomesTheSameBytesInBase64URL() {
        #expect(FactDigest.hexToBase64URL("52c918d1b797cfc4957920af816a4f2c") == "UskY0beXz8SVeSCvgWpPLA")
        #expect(FactDigest.hexToBase64URL("52C918D1B797CFC4957920AF816A4F2C") == nil)
        #expect(FactDigest.hexToBase64URL("UskY0beXz8SVeSCvgWpPLA") == nil)
        #expect(FactDigest.hexToBase64URL("") == nil)
    }
}

/// An applied item's detail kept as a reference to its audit rows.
@Suite("StoreSQL: ledger details by reference")
struct DetailReferenceTests {
    static let insert = AuditEntry(
        at: 1, actor: "engine", command: "notify", entity: .order, key: "o-1", before: nil,
        after: #"{"createdAt":1,"id":3,"no":"o-1","price":9990,"productId":"p\/1","purchaseDate":1735689600000,"#
            + #""status":"paid","userId":"u-1"}"#)
    static let update = AuditEntry(
        at: 1, actor: "engine", command: "notify", entity: .contract, key: "c-1",
        before: #"{"autoRenew":true,"contractId":"c-1","status":"active","userId":"u-1"}"#,
        after: #"{"autoRenew":false,"contractId":"c-1","nextProductId":"p2","status":"active","userId":"u-1"}"#)
    static let detail =
        "order o-1 created: no ∅ → o-1, user_id ∅ → u-1, product_id ∅ → p/1, status ∅ → paid, purchase_date ∅ → "
        + "2025-01-01T00:00:00Z, price ∅ → 9990; contract c-1 updated: auto_renew true → false, next_product_id ∅ → p2"

    @Test func theChangesSummariesRebuildTheDetail() throws {
        #expect(DetailReference.summaries([Self.insert, Self.update]) == Self.detail)
        for rest in ["", "; order x was created for a; Apple charged for b"] {
            let stored = try #require(DetailReference.reference(Self.detail + rest, audits: [Self.insert, Self.update]))
            #expect(stored.count == 2 + rest.utf8.count)
            #expect(try DetailReference.detail(stored, audits: [Self.insert, Self.update, Self.insert], row: 1) == Self.detail + rest)
            #expect(throws: StoreError.self) { try DetailReference.detail(stored, audits: [Self.insert], row: 1) }
        }
        // With the first audit row's id (where the store knows it): read from that id on.
        let from = try #require(DetailReference.reference(Self.detail, audits: [Self.insert, Self.update], firstAuditId: 300))
        #expect(from.first == DetailReference.markerFrom)
        let parsed = try DetailReference.parse(from)
        #expect(parsed.count == 2 && parsed.firstAuditId == 300 && parsed.rest.isEmpty)
        #expect(try DetailReference.detail(from, audits: [Self.insert, Self.update], row: 1) == Self.detail)
        #expect(DetailReference.reference(Self.detail, audits: [Self.insert, Self.update], firstAuditId: 0) == nil)
    }

    @Test func aDetailThatIsNotTheirSummariesIsNotAReference() {
        let audits = [Self.insert, Self.update]
        #expect(DetailReference.reference(Self.detail + " and more", audits: audits) == nil)
        #expect(DetailReference.reference("x" + Self.detail, audits: audits) == nil)
        #expect(DetailReference.reference(Self.detail, audits: [Self.update, Self.insert]) == nil)
        #expect(DetailReference.reference(Self.detail, audits: []) == nil)
        var odd = Self.update
        odd.after = "[1]"
        #expect(DetailReference.reference(Self.detail, audits: [Self.insert, odd]) == nil)
    }
}
