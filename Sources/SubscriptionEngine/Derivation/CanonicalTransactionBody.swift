import IAPFoundation
import SubscriptionModel

/// Reads a transaction fact's body in the one shape ``FactCoding/encode(_:)`` writes it — an object
/// of known keys, each once, with no whitespace, strings without escapes, integers without a
/// fraction or exponent — straight into ``TransactionFacts``, without building a `JSONValue` tree
/// or going through the `Decoder` protocol. Every event decodes every transaction of its
/// subscription (each is an order row), so this is the engine's largest per-period cost after
/// reading the rows.
///
/// Anything else (an unknown key, `null` for a required field, an escape, a number with a fraction,
/// whitespace, broken JSON) gives nil, and ``FactBodyDecoder`` then reads the body as before: what
/// this reader accepts it decodes to exactly the value ``FactBodyDecoder`` gives
/// (`CanonicalTransactionBodyTests` holds it to that).
enum CanonicalTransactionBody {
    static func decode(_ body: String) -> TransactionFacts? {
        var body = body
        return body.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.transaction()
        }
    }

    /// The keys `TransactionFacts` has, in the order its canonical JSON sorts them.
    static let keys: [[UInt8]] = [
        "appAccountToken", "appTransactionId", "currency", "environment", "expiresDate", "inAppOwnershipType", "isFromReceipt",
        "isUpgraded", "offerIdentifier", "offerPeriod", "offerType", "originalPurchaseDate", "originalTransactionId", "price",
        "productId", "purchaseDate", "revocationDate", "revocationPercentage", "revocationReason", "revocationType",
        "signedDate", "transactionId", "transactionReason", "type",
    ].map { Array($0.utf8) }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0
        /// Where the next key is looked for first (canonical bodies list them in `keys`' order).
        var cursor = 0

        mutating func take(_ byte: UInt8) -> Bool {
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        mutating func take(_ word: StaticString) -> Bool {
            word.withUTF8Buffer { w in
                guard at + w.count <= bytes.count, w.indices.allSatisfy({ bytes[at + $0] == w[$0] }) else { return false }
                at += w.count
                return true
            }
        }

        /// The bytes of a string without escapes or control characters (nil otherwise).
        mutating func stringBytes() -> Range<Int>? {
            guard take(0x22) else { return nil }
            let start = at
            while at < bytes.count {
                let byte = bytes[at]
                if byte == 0x22 {
                    at += 1
                    return start..<(at - 1)
                }
                if byte == 0x5C || byte < 0x20 { return nil }
                at += 1
            }
            return nil
        }

        mutating func string() -> String? {
            guard let range = stringBytes() else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        /// A JSON integer that fits an `Int64` (nil for a fraction, an exponent, `-0`, leading zeros or overflow).
        mutating func integer() -> Int64? {
            let negative = take(0x2D)
            let start = at
            var value: Int64 = 0
            while at < bytes.count, (0x30...0x39).contains(bytes[at]) {
                let digit = Int64(bytes[at] - 0x30)
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                guard !o1, !o2 else { return nil }
                value = sum
                at += 1
            }
            guard at > start, !(bytes[start] == 0x30 && at - start > 1), !(negative && value == 0) else { return nil }
            if at < bytes.count, [0x2E, 0x65, 0x45].contains(bytes[at]) { return nil }
            return value
        }

        mutating func bool() -> Bool? {
            if take("true") { return true }
            if take("false") { return false }
            return nil
        }

        /// Which of `keys` the string at `range` is.
        mutating func key(_ range: Range<Int>) -> Int? {
            let keys = CanonicalTransactionBody.keys
            let found = (cursor..<keys.count).first { matches(range, keys[$0]) } ?? (0..<cursor).first { matches(range, keys[$0]) }
            if let found { cursor = found + 1 }
            return found
        }

        func matches(_ range: Range<Int>, _ key: [UInt8]) -> Bool {
            range.count == key.count && key.indices.allSatisfy { bytes[range.lowerBound + $0] == key[$0] }
        }

        /// An optional value: `null` is nil; `read` gives nil for anything it does not accept.
        mutating func optional<T>(_ read: (inout Reader) -> T?) -> T?? {
            if take("null") { return .some(nil) }
            return read(&self).map { .some($0) }
        }

        mutating func transaction() -> TransactionFacts? {
            var transactionId: String?
            var originalTransactionId: String?
            var productId: String?
            var isFromReceipt: Bool?
            var tx = TransactionFacts(transactionId: "", originalTransactionId: "", productId: "")
            var seen: UInt32 = 0
            guard take(0x7B) else { return nil }
            if !take(0x7D) {
                repeat {
                    guard let name = stringBytes(), take(0x3A), let key = key(name), seen & (1 << key) == 0 else { return nil }
                    seen |= 1 << key
                    switch key {
                    case 0: guard let v = optional({ $0.string() }) else { return nil }; tx.appAccountToken = v
                    case 1: guard let v = optional({ $0.string() }) else { return nil }; tx.appTransactionId = v
                    case 2: guard let v = optional({ $0.string() }) else { return nil }; tx.currency = v
                    case 3: guard let v = optional({ $0.string() }) else { return nil }; tx.environment = v
                    case 4: guard let v = optional({ $0.integer() }) else { return nil }; tx.expiresDate = v
                    case 5:
                        guard let v = optional({ $0.string() }) else { return nil }
                        tx.inAppOwnershipType = v.map(OwnershipType.init(rawValue:))
                    case 6: isFromReceipt = bool()
                    case 7: guard let v = optional({ $0.bool() }) else { return nil }; tx.isUpgraded = v
                    case 8: guard let v = optional({ $0.string() }) else { return nil }; tx.offerIdentifier = v
                    case 9: guard let v = optional({ $0.string() }) else { return nil }; tx.offerPeriod = v
                    case 10: guard let v = optional({ $0.integer().flatMap(Int.init(exactly:)) }) else { return nil }; tx.offerType = v
                    case 11: guard let v = optional({ $0.integer() }) else { return nil }; tx.originalPurchaseDate = v
                    case 12: originalTransactionId = string()
                    case 13: guard let v = optional({ $0.integer() }) else { return nil }; tx.price = v
                    case 14: productId = string()
                    case 15: guard let v = optional({ $0.integer() }) else { return nil }; tx.purchaseDate = v
                    case 16: guard let v = optional({ $0.integer() }) else { return nil }; tx.revocationDate = v
                    case 17:
                        guard let v = optional({ $0.integer().flatMap(Int.init(exactly:)) }) else { return nil }
                        tx.revocationPercentage = v
                    case 18:
                        guard let v = optional({ $0.integer().flatMap(Int.init(exactly:)) }) else { return nil }
                        tx.revocationReason = v
                    case 19:
                        guard let v = optional({ $0.string() }) else { return nil }
                        tx.revocationType = v.map(RevocationType.init(rawValue:))
                    case 20: guard let v = optional({ $0.integer() }) else { return nil }; tx.signedDate = v
                    case 21: transactionId = string()
                    case 22:
                        guard let v = optional({ $0.string() }) else { return nil }
                        tx.transactionReason = v.map(TransactionReason.init(rawValue:))
                    default:
                        guard let v = optional({ $0.string() }) else { return nil }
                        tx.type = v.map(ProductType.init(rawValue:))
                    }
                } while take(0x2C)
                guard take(0x7D) else { return nil }
            }
            // Required fields present (and not null), and nothing after the object.
            guard at == bytes.count, let transactionId, let originalTransactionId, let productId, let isFromReceipt else {
                return nil
            }
            tx.transactionId = transactionId
            tx.originalTransactionId = originalTransactionId
            tx.productId = productId
            tx.isFromReceipt = isFromReceipt
            return tx
        }
    }
}
