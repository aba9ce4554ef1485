import AppStoreJWS
import Testing

@testable import AppStoreReceipt

/// Builds receipt payload DER for the decoder tests.
enum DER {
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var v = n
        while v > 0 {
            bytes.insert(UInt8(v & 0xFF), at: 0)
            v >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func integer(_ value: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        var v = value
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v >>= 8
        } while !(v == 0 && bytes[0] < 0x80) && !(v == -1 && bytes[0] >= 0x80)
        return tlv(0x02, bytes)
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }
    static func set(_ attributes: [[UInt8]]) -> [UInt8] { tlv(0x31, attributes.flatMap { $0 }) }

    static func inApp(id: String, product: String = "com.example.pro", extra: [[UInt8]] = []) -> [UInt8] {
        attribute(
            17,
            set(
                [
                    attribute(1701, integer(1)), attribute(1702, utf8(product)), attribute(1703, utf8(id)),
                    attribute(1705, utf8("1000")), attribute(1704, ia5("2024-01-15T12:00:00Z")),
                    attribute(1706, ia5("2024-01-15T12:00:00Z")),
                ] + extra))
    }

    static func receipt(_ attributes: [[UInt8]]) -> [UInt8] {
        set(
            [
                attribute(0, utf8("ProductionSandbox")), attribute(2, utf8("com.example.app")), attribute(3, utf8("7")),
                attribute(12, ia5("2024-08-06T12:00:00Z")), attribute(19, utf8("1.0")),
            ] + attributes)
    }
}

/// The strict DER decoder of the receipt payload: what it reads, and the hostile inputs it refuses
/// (the fuzz target's invariants, Fuzz/FuzzTarget.swift mode `receipt`, on hand-picked inputs).
@Suite("Receipt payload decoder")
struct DecoderTests {
    @Test func everyFieldIsRead() throws {
        let payload = DER.receipt([
            DER.attribute(21, DER.ia5("2030-01-01T00:00:00Z")),
            DER.inApp(
                id: "1001",
                extra: [
                    DER.attribute(1708, DER.ia5("2024-02-15T12:00:00Z")), DER.attribute(1712, DER.ia5("2024-01-20T08:30:00Z")),
                    DER.attribute(1711, DER.integer(1_000_000_054_042_695)), DER.attribute(1713, DER.integer(1)),
                    DER.attribute(1719, DER.integer(0)), DER.attribute(9999, DER.tlv(0x05, [])),
                ]),
            DER.inApp(id: "1002", product: "com.example.coins", extra: [DER.attribute(1708, DER.ia5(""))]),
        ])
        let receipt = try AppReceipt(der: payload)
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.environment == "Sandbox")
        #expect(receipt.bundleId == "com.example.app")
        #expect(receipt.appVersion == "7")
        #expect(receipt.originalAppVersion == "1.0")
        #expect(receipt.creationDate == ms("2024-08-06T12:00:00Z"))
        #expect(receipt.expirationDate == ms("2030-01-01T00:00:00Z"))
        #expect(receipt.inApp.count == 2)
        let first = receipt.inApp[0]
        #expect(first.quantity == 1)
        #expect(first.productId == "com.example.pro")
        #expect(first.transactionId == "1001")
        #expect(first.originalTransactionId == "1000")
        #expect(first.purchaseDate == ms("2024-01-15T12:00:00Z"))
        #expect(first.originalPurchaseDate == ms("2024-01-15T12:00:00Z"))
        #expect(first.expiresDate == ms("2024-02-15T12:00:00Z"))
        #expect(first.cancellationDate == ms("2024-01-20T08:30:00Z"))
        #expect(first.webOrderLineItemId == 1_000_000_054_042_695)
        #expect(first.isTrialPeriod == true)
        #expect(first.isInIntroOfferPeriod == false)
        // An empty date string means absent.
        #expect(receipt.inApp[1].expiresDate == nil)
        #expect(receipt.inApp[1].productId == "com.example.coins")
        #expect(receipt.json["in_app"]?.arrayValue?.first?["web_order_line_item_id"] == .string("1000000054042695"))
    }

    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] { DER.attribute(type, value) }

    static let valid = DER.receipt([DER.inApp(id: "1001")])

    /// Hostile payloads, each with the rule it breaks (the decoder must name it, never crash).
    static let hostile: [(String, [UInt8], String)] = [
        ("indefinite length", [0x31, 0x80, 0x00, 0x00], "indefinite"),
        ("non-minimal long form", [0x31, 0x81, 0x05] + [UInt8](repeating: 0, count: 5), "not minimal"),
        ("leading zero length byte", [0x31, 0x82, 0x00, 0x85] + [UInt8](repeating: 0, count: 0x85), "leading zero"),
        ("five length bytes", [0x31, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00], "too large"),
        ("length past the end", [0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x30], "runs past"),
        ("trailing bytes", valid + [0x00], "trailing"),
        ("empty input", [], "input ends"),
        ("high tag number", [0x3F, 0x01, 0x00], "high-tag-number"),
        ("SEQUENCE at the top", [0x30] + Array(valid.dropFirst()), "tag 0x30"),
        ("twice wrapped", DER.tlv(0x04, DER.tlv(0x04, valid)), "tag 0x4"),
        ("attribute of two elements", DER.set([DER.tlv(0x30, DER.integer(2) + DER.integer(1))]), "3 expected"),
        (
            "non-minimal INTEGER", DER.set([DER.tlv(0x30, DER.tlv(0x02, [0x00, 0x02]) + DER.integer(1) + DER.tlv(0x04, DER.utf8("x")))]),
            "minimally"
        ),
        (
            "INTEGER over 64 bits",
            DER.set([DER.tlv(0x30, DER.tlv(0x02, [UInt8](repeating: 0x11, count: 9)) + DER.integer(1) + DER.tlv(0x04, []))]), "64 bits"
        ),
        ("empty INTEGER", DER.set([DER.tlv(0x30, DER.tlv(0x02, []) + DER.integer(1) + DER.tlv(0x04, []))]), "empty INTEGER"),
        ("invalid UTF-8", DER.set([attribute(2, DER.tlv(0x0C, [0xC3, 0x28]))]), "UTF-8"),
        ("non-ASCII IA5String", DER.set([attribute(12, DER.tlv(0x16, [0xE9]))]), "non-ASCII"),
        ("not a date", DER.set([attribute(12, DER.ia5("yesterday at noon, roughly"))]), "RFC 3339"),
        ("bundle id twice", DER.set([attribute(2, DER.utf8("a")), attribute(2, DER.utf8("b"))]), "twice"),
        ("transaction id twice", DER.set([DER.inApp(id: "1", extra: [attribute(1703, DER.utf8("2"))])]), "twice"),
        ("flag of 2", DER.set([DER.inApp(id: "1", extra: [attribute(1713, DER.integer(2))])]), "0 or 1"),
        ("string value with trailing byte", DER.set([attribute(2, DER.utf8("a") + [0x00])]), "trailing"),
        ("in-app value not a SET", DER.set([attribute(17, DER.utf8("x"))]), "tag 0xc"),
        ("value not an OCTET STRING", DER.set([DER.tlv(0x30, DER.integer(2) + DER.integer(1) + DER.utf8("x"))]), "tag 0xc"),
    ]

    @Test(arguments: hostile.indices)
    func hostilePayloadIsRefusedWithItsRule(index: Int) {
        let (name, bytes, rule) = Self.hostile[index]
        do {
            _ = try AppReceipt(der: bytes)
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.description.contains(rule), "\(name): \(error)")
        }
    }

    @Test func nestingDeeperThanTheLimitIsRefused() {
        var nested: [UInt8] = [0x05, 0x00]
        for _ in 0...DERReader.maxDepth { nested = DER.tlv(0x31, nested) }
        let reader = DERReader(bytes: nested)
        func walk(_ element: DERReader.Element) throws(DERError) {
            for child in try reader.children(of: element) where child.isConstructed { try walk(child) }
        }
        #expect(throws: DERError.self) { try walk(try reader.single(from: 0, to: nested.count, depth: 0)) }
    }

    /// Every truncation and every single-byte flip of a valid payload is decoded or refused, never a
    /// crash; truncations are always refused.
    @Test func truncationsAndFlipsNeverCrash() {
        for end in 0..<Self.valid.count {
            #expect(throws: DERError.self) { try AppReceipt(der: Array(Self.valid[0..<end])) }
        }
        for position in Self.valid.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var bytes = Self.valid
                bytes[position] ^= mask
                _ = try? AppReceipt(der: bytes)
            }
        }
    }

    @Test func oversizedPayloadIsRefusedBeforeParsing() {
        let big = [UInt8](repeating: 0, count: AppReceipt.maxPayloadBytes + 1)
        #expect(throws: DERError.self) { try AppReceipt(der: big) }
    }
}
