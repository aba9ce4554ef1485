// Why fact bodies are read from their bytes rather than through JSONParser's tree or JSONDecoder
// (scripts/json-measure-run measures all three: callgrind instruction counts of a release build):
//
// - A renewal's `notify` decodes 8 transaction bodies, whether the subscription has renewed 10 times
//   or 120 (`scripts/json-measure-run --bodies 10 120` counts the calls): the engine's snapshot keeps
//   the few it needs.
// - The stored body of a real renewal (458 bytes, from AppStoreJWSTests' fixture real/03-loki-did-renew)
//   is 27,664 instructions here, 53,144 through `JSONParser.parse` + a by-name mapping into
//   `TransactionFacts` with the same checks, 121,222 through JSONDecoder (which checks less). The
//   mapping would add about 204,000 instructions (8 × 25,480) to each notification: 6 % of notify's
//   main thread (scripts/budgets.json's reference, 3.24 M, allows 3 % more).
// - A `JSONValue` no longer says what this reader refuses: `2.0`, `1e3` and an integer beyond `Int64`
//   all become `.double`, `-0` becomes `.int(0)`, and a syntax error is not placed in a member.
//
// The bytes of strings (escapes, UTF-8), integers and literals are read by IAPFoundation's `JSONBytes`,
// the code JSONParser reads them with; the object, its members by name and the messages are here.

import IAPFoundation

/// Why a fact's stored body cannot be read: which fact, which member, and what is wrong with it.
public struct FactBodyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var kind: Fact.Kind
    /// The fact's key (its transaction id, or its original transaction id); nil when the reader was
    /// given the body alone.
    public var key: String?
    /// The member at fault; nil when the body as a whole is (not JSON, not an object).
    public var field: String?
    public var problem: String

    public init(kind: Fact.Kind, key: String? = nil, field: String? = nil, problem: String) {
        self.kind = kind
        self.key = key
        self.field = field
        self.problem = problem
    }

    /// `the transaction fact 2000000123: its body's "price" is not an integer`.
    public var description: String {
        let fact = key.map { "the \(kind.rawValue) fact \($0)" } ?? "a \(kind.rawValue) fact"
        let what = field.map { "its body's \"\($0)\"" } ?? "its body"
        return "\(fact): \(what) \(problem)"
    }
}

/// The one codec of a fact's stored body (`iap_facts.body`): canonical JSON, an object of the
/// value's members in sorted key order, nil members left out, strings escaped as `JSONEncoder`
/// escapes them (``JSONWriter/Escaping/foundation``), no whitespace.
///
/// The reader matches members by name (each kind's ``FactBodyKey`` cases), in any order, and is
/// strict: an unknown member, one given twice, a required one missing or `null`, a value of the
/// wrong type (a string for a number, a fraction, a number out of range) or anything that is not
/// one JSON object throws a ``FactBodyError`` naming the fact and the member; nothing is defaulted.
/// It reads the UTF-8 bytes directly, without a JSON tree or `Decoder` containers (the figures are in
/// this file's top comment).
public enum FactBody {
    // MARK: writing

    /// A transaction's body: every stored property of `TransactionFacts`.
    public static func encode(_ t: TransactionFacts) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 512)
        w.addIfPresent("appAccountToken", t.appAccountToken)
        w.addIfPresent("appTransactionId", t.appTransactionId)
        w.addIfPresent("currency", t.currency)
        w.addIfPresent("environment", t.environment)
        w.addIfPresent("expiresDate", t.expiresDate)
        w.addIfPresent("inAppOwnershipType", t.inAppOwnershipType?.rawValue)
        w.add("isFromReceipt", t.isFromReceipt)
        w.addIfPresent("isUpgraded", t.isUpgraded)
        w.addIfPresent("offerIdentifier", t.offerIdentifier)
        w.addIfPresent("offerPeriod", t.offerPeriod)
        w.addIfPresent("offerType", t.offerType.map(Int64.init))
        w.addIfPresent("originalPurchaseDate", t.originalPurchaseDate)
        w.add("originalTransactionId", t.originalTransactionId)
        w.addIfPresent("price", t.price)
        w.add("productId", t.productId)
        w.addIfPresent("purchaseDate", t.purchaseDate)
        w.addIfPresent("revocationDate", t.revocationDate)
        w.addIfPresent("revocationPercentage", t.revocationPercentage.map(Int64.init))
        w.addIfPresent("revocationReason", t.revocationReason.map(Int64.init))
        w.addIfPresent("revocationType", t.revocationType?.rawValue)
        w.addIfPresent("signedDate", t.signedDate)
        w.add("transactionId", t.transactionId)
        w.addIfPresent("transactionReason", t.transactionReason?.rawValue)
        w.addIfPresent("type", t.type?.rawValue)
        return w.json
    }

    /// A renewal info's body: every stored property of `RenewalFacts`.
    public static func encode(_ r: RenewalFacts) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 256)
        w.addIfPresent("autoRenewProductId", r.autoRenewProductId)
        w.addIfPresent("autoRenewStatus", r.autoRenewStatus.map(Int64.init))
        w.addIfPresent("currency", r.currency)
        w.addIfPresent("expirationIntent", r.expirationIntent.map(Int64.init))
        w.addIfPresent("gracePeriodExpiresDate", r.gracePeriodExpiresDate)
        w.addIfPresent("isInBillingRetryPeriod", r.isInBillingRetryPeriod)
        w.addIfPresent("offerIdentifier", r.offerIdentifier)
        w.addIfPresent("offerPeriod", r.offerPeriod)
        w.addIfPresent("offerType", r.offerType.map(Int64.init))
        w.addIfPresent("originalTransactionId", r.originalTransactionId)
        w.addIfPresent("priceIncreaseStatus", r.priceIncreaseStatus.map(Int64.init))
        w.addIfPresent("productId", r.productId)
        w.addIfPresent("renewalDate", r.renewalDate)
        w.addIfPresent("renewalPrice", r.renewalPrice)
        w.addIfPresent("signedDate", r.signedDate)
        return w.json
    }

    /// A notification's (or status answer's) body: every stored property of `NotificationFact`.
    public static func encode(_ n: NotificationFact) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 128)
        w.addIfPresent("notificationType", n.notificationType?.rawValue)
        w.addIfPresent("status", n.status.map(Int64.init))
        w.addIfPresent("subtype", n.subtype?.rawValue)
        w.addIfPresent("transactionId", n.transactionId)
        return w.json
    }

    // MARK: reading

    /// A transaction fact's body; `key` (the fact's) is named in the error.
    public static func transaction(_ body: String, key: String? = nil) throws(FactBodyError) -> TransactionFacts {
        try read(body, .transaction, key: key) { (reader) throws(FactBodyError) in try reader.transaction(olderShapes: false) }
    }

    /// A renewal fact's body.
    public static func renewal(_ body: String, key: String? = nil) throws(FactBodyError) -> RenewalFacts {
        try read(body, .renewal, key: key) { (reader) throws(FactBodyError) in try reader.renewal() }
    }

    /// A notification fact's body.
    public static func notification(_ body: String, key: String? = nil) throws(FactBodyError) -> NotificationFact {
        try read(body, .notification, key: key) { (reader) throws(FactBodyError) in try reader.notification() }
    }

    /// The body in its one stored form, from a body of this form or of an earlier one: a transaction
    /// written before `isFromReceipt` existed (no such member: it was not from a receipt), members
    /// in another order, whitespace, `null` for a nil member, other escapes. What the reader refuses
    /// otherwise is refused here too. For the schema migration that rewrites stored bodies.
    package static func canonical(_ kind: Fact.Kind, _ body: String, key: String? = nil) throws(FactBodyError) -> String {
        switch kind {
        case .transaction:
            return encode(try read(body, kind, key: key) { (reader) throws(FactBodyError) in try reader.transaction(olderShapes: true) })
        case .renewal: return encode(try renewal(body, key: key))
        case .notification: return encode(try notification(body, key: key))
        }
    }

    private static func read<T>(
        _ body: String, _ kind: Fact.Kind, key: String?, _ value: (inout FactBodyReader) throws(FactBodyError) -> T
    ) throws(FactBodyError) -> T {
        var body = body
        let result: Result<T, FactBodyError> = body.withUTF8 { bytes in
            var reader = FactBodyReader(bytes: bytes, kind: kind)
            do throws(FactBodyError) {
                let read = try value(&reader)
                try reader.end()
                return .success(read)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(var error):
            error.key = key
            throw error
        }
    }
}

/// The members a kind of fact body has, each case named as its JSON key.
protocol FactBodyKey: RawRepresentable<String>, CaseIterable {}

enum TransactionKey: String, FactBodyKey {
    case appAccountToken, appTransactionId, currency, environment, expiresDate, inAppOwnershipType, isFromReceipt
    case isUpgraded, offerIdentifier, offerPeriod, offerType, originalPurchaseDate, originalTransactionId, price
    case productId, purchaseDate, revocationDate, revocationPercentage, revocationReason, revocationType, signedDate
    case transactionId, transactionReason, type
}

enum RenewalKey: String, FactBodyKey {
    case autoRenewProductId, autoRenewStatus, currency, expirationIntent, gracePeriodExpiresDate, isInBillingRetryPeriod
    case offerIdentifier, offerPeriod, offerType, originalTransactionId, priceIncreaseStatus, productId, renewalDate
    case renewalPrice, signedDate
}

enum NotificationKey: String, FactBodyKey {
    case notificationType, status, subtype, transactionId
}

/// A kind's members by name: each key's UTF-8 bytes with its case. Looked up by comparing names
/// (from the entry after the last one found: canonical bodies list members in this, sorted, order).
struct FactBodyKeys<Key: FactBodyKey>: Sendable where Key: Sendable {
    let names: [[UInt8]]
    let keys: [Key]

    init() {
        let sorted = Key.allCases.sorted { $0.rawValue < $1.rawValue }
        keys = sorted
        names = sorted.map { Array($0.rawValue.utf8) }
    }

    /// The key named by `bytes[range]` and its place in the table (a bit in the reader's `seen`).
    func find(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, from hint: Int) -> Int? {
        func matches(_ index: Int) -> Bool {
            let name = names[index]
            guard name.count == range.count else { return false }
            var i = 0
            while i < name.count {
                if name[i] != bytes[range.lowerBound + i] { return false }
                i += 1
            }
            return true
        }
        var index = hint
        while index < names.count {
            if matches(index) { return index }
            index += 1
        }
        index = 0
        while index < hint && index < names.count {
            if matches(index) { return index }
            index += 1
        }
        return nil
    }
}

private let transactionKeys = FactBodyKeys<TransactionKey>()
private let renewalKeys = FactBodyKeys<RenewalKey>()
private let notificationKeys = FactBodyKeys<NotificationKey>()

/// Reads one body's UTF-8 bytes: the object and its members by name here, the bytes of strings,
/// integers and literals by IAPFoundation's ``JSONBytes`` (what ``JSONParser`` reads them with).
struct FactBodyReader {
    var json: JSONBytes
    let kind: Fact.Kind

    init(bytes: UnsafeBufferPointer<UInt8>, kind: Fact.Kind) {
        json = JSONBytes(bytes)
        self.kind = kind
    }

    var bytes: UnsafeBufferPointer<UInt8> { json.bytes }
    var at: Int { json.pos }

    func failure(_ field: String?, _ problem: String) -> FactBodyError {
        FactBodyError(kind: kind, field: field, problem: problem)
    }

    // MARK: the object

    /// Reads `{ "name": value, … }`, calling `member` with each key (its value next in the input).
    mutating func object<Key: FactBodyKey & Sendable>(
        _ table: FactBodyKeys<Key>, _ member: (inout FactBodyReader, Key) throws(FactBodyError) -> Void
    ) throws(FactBodyError) {
        json.skipWhitespace()
        guard json.take(0x7B) else { throw failure(nil, "is not a JSON object") }
        json.skipWhitespace()
        if json.take(0x7D) { return }
        var seen: UInt64 = 0
        var hint = 0
        repeat {
            json.skipWhitespace()
            let name = try keyName()
            guard let index = table.find(bytes, name, from: hint) else {
                throw failure(json.text(name), "is not a member of a \(kind.rawValue) body")
            }
            let key = table.keys[index]
            guard seen & (1 << UInt64(index)) == 0 else { throw failure(key.rawValue, "is given twice") }
            seen |= 1 << UInt64(index)
            hint = index + 1
            json.skipWhitespace()
            guard json.take(0x3A) else { throw failure(key.rawValue, "is not followed by ':'") }
            json.skipWhitespace()
            try member(&self, key)
            json.skipWhitespace()
        } while json.take(0x2C)
        guard json.take(0x7D) else { throw failure(nil, "is not valid JSON at byte \(at) (a ',' or '}' was expected)") }
    }

    /// Nothing but whitespace after the object.
    mutating func end() throws(FactBodyError) {
        json.skipWhitespace()
        guard json.atEnd else { throw failure(nil, "has more after its object (at byte \(at))") }
    }

    /// A member's name: a string without escapes (no member's name has one).
    mutating func keyName() throws(FactBodyError) -> Range<Int> {
        guard json.take(0x22) else { throw failure(nil, "is not valid JSON at byte \(at) (a member's name was expected)") }
        let start = at
        while json.pos < bytes.count {
            let byte = bytes[json.pos]
            if byte == 0x22 {
                json.pos += 1
                return start..<(json.pos - 1)
            }
            if byte == 0x5C || byte < 0x20 {
                throw failure(nil, "has a member name that is not one of a \(kind.rawValue) body (at byte \(start))")
            }
            json.pos += 1
        }
        throw failure(nil, "breaks off inside a member's name")
    }

    // MARK: values

    mutating func null() -> Bool { json.take(literal: "null") }

    mutating func string(_ field: String) throws(FactBodyError) -> String {
        guard json.pos < bytes.count, bytes[json.pos] == 0x22 else { throw failure(field, "is not a string") }
        do throws(JSONBytes.Failure) {
            return try json.string()
        } catch {
            let problem =
                switch error.kind {
                case .controlCharacter: "has a control character that is not escaped"
                case .unpairedSurrogate: "has a lone surrogate escape"
                case .invalidEscape: "has an unknown escape"
                case .truncatedHexEscape, .invalidHexEscape: "has an invalid \\u escape"
                case .invalidUTF8, .truncatedUTF8: "is not valid UTF-8"
                default: "breaks off inside its string"
                }
            throw failure(field, problem)
        }
    }

    /// A JSON integer that fits an `Int64`: no fraction, exponent, `-0` or leading zeros.
    mutating func integer(_ field: String) throws(FactBodyError) -> Int64 {
        let number: JSONBytes.Number
        do throws(JSONBytes.Failure) {
            number = try json.number()
        } catch {
            switch error.kind {
            case .fractionWithoutDigit, .exponentWithoutDigit:
                throw failure(field, "is not an integer (it has a fraction or an exponent)")
            default: throw failure(field, "is not an integer")
            }
        }
        guard number.isInteger else { throw failure(field, "is not an integer (it has a fraction or an exponent)") }
        guard let value = number.int64 else { throw failure(field, "is out of range for a 64-bit integer") }
        guard !(number.isNegative && value == 0) else { throw failure(field, "is not an integer") }
        return value
    }

    mutating func bool(_ field: String) throws(FactBodyError) -> Bool {
        if json.take(literal: "true") { return true }
        if json.take(literal: "false") { return false }
        throw failure(field, "is not true or false")
    }

    mutating func optionalString(_ field: String) throws(FactBodyError) -> String? { null() ? nil : try string(field) }
    mutating func optionalInteger(_ field: String) throws(FactBodyError) -> Int64? { null() ? nil : try integer(field) }
    mutating func optionalInt(_ field: String) throws(FactBodyError) -> Int? {
        guard !null() else { return nil }
        guard let value = Int(exactly: try integer(field)) else { throw failure(field, "is out of range") }
        return value
    }
    mutating func optionalBool(_ field: String) throws(FactBodyError) -> Bool? { null() ? nil : try bool(field) }

    // MARK: the three kinds

    /// `olderShapes`: a body without `isFromReceipt` (written before it existed) is not from a receipt.
    mutating func transaction(olderShapes: Bool) throws(FactBodyError) -> TransactionFacts {
        var tx = TransactionFacts(transactionId: "", originalTransactionId: "", productId: "")
        var transactionId: String?
        var originalTransactionId: String?
        var productId: String?
        var isFromReceipt: Bool?
        try object(transactionKeys) { (r, key) throws(FactBodyError) in
            let f = key.rawValue
            switch key {
            case .appAccountToken: tx.appAccountToken = try r.optionalString(f)
            case .appTransactionId: tx.appTransactionId = try r.optionalString(f)
            case .currency: tx.currency = try r.optionalString(f)
            case .environment: tx.environment = try r.optionalString(f)
            case .expiresDate: tx.expiresDate = try r.optionalInteger(f)
            case .inAppOwnershipType: tx.inAppOwnershipType = try r.optionalString(f).map(OwnershipType.init(rawValue:))
            case .isFromReceipt: isFromReceipt = try r.bool(f)
            case .isUpgraded: tx.isUpgraded = try r.optionalBool(f)
            case .offerIdentifier: tx.offerIdentifier = try r.optionalString(f)
            case .offerPeriod: tx.offerPeriod = try r.optionalString(f)
            case .offerType: tx.offerType = try r.optionalInt(f)
            case .originalPurchaseDate: tx.originalPurchaseDate = try r.optionalInteger(f)
            case .originalTransactionId: originalTransactionId = try r.string(f)
            case .price: tx.price = try r.optionalInteger(f)
            case .productId: productId = try r.string(f)
            case .purchaseDate: tx.purchaseDate = try r.optionalInteger(f)
            case .revocationDate: tx.revocationDate = try r.optionalInteger(f)
            case .revocationPercentage: tx.revocationPercentage = try r.optionalInt(f)
            case .revocationReason: tx.revocationReason = try r.optionalInt(f)
            case .revocationType: tx.revocationType = try r.optionalString(f).map(RevocationType.init(rawValue:))
            case .signedDate: tx.signedDate = try r.optionalInteger(f)
            case .transactionId: transactionId = try r.string(f)
            case .transactionReason: tx.transactionReason = try r.optionalString(f).map(TransactionReason.init(rawValue:))
            case .type: tx.type = try r.optionalString(f).map(ProductType.init(rawValue:))
            }
        }
        guard let transactionId else { throw failure(TransactionKey.transactionId.rawValue, "is missing") }
        guard let originalTransactionId else { throw failure(TransactionKey.originalTransactionId.rawValue, "is missing") }
        guard let productId else { throw failure(TransactionKey.productId.rawValue, "is missing") }
        if isFromReceipt == nil, olderShapes { isFromReceipt = false }
        guard let isFromReceipt else { throw failure(TransactionKey.isFromReceipt.rawValue, "is missing") }
        tx.transactionId = transactionId
        tx.originalTransactionId = originalTransactionId
        tx.productId = productId
        tx.isFromReceipt = isFromReceipt
        return tx
    }

    mutating func renewal() throws(FactBodyError) -> RenewalFacts {
        var r = RenewalFacts()
        try object(renewalKeys) { (reader, key) throws(FactBodyError) in
            let f = key.rawValue
            switch key {
            case .autoRenewProductId: r.autoRenewProductId = try reader.optionalString(f)
            case .autoRenewStatus: r.autoRenewStatus = try reader.optionalInt(f)
            case .currency: r.currency = try reader.optionalString(f)
            case .expirationIntent: r.expirationIntent = try reader.optionalInt(f)
            case .gracePeriodExpiresDate: r.gracePeriodExpiresDate = try reader.optionalInteger(f)
            case .isInBillingRetryPeriod: r.isInBillingRetryPeriod = try reader.optionalBool(f)
            case .offerIdentifier: r.offerIdentifier = try reader.optionalString(f)
            case .offerPeriod: r.offerPeriod = try reader.optionalString(f)
            case .offerType: r.offerType = try reader.optionalInt(f)
            case .originalTransactionId: r.originalTransactionId = try reader.optionalString(f)
            case .priceIncreaseStatus: r.priceIncreaseStatus = try reader.optionalInt(f)
            case .productId: r.productId = try reader.optionalString(f)
            case .renewalDate: r.renewalDate = try reader.optionalInteger(f)
            case .renewalPrice: r.renewalPrice = try reader.optionalInteger(f)
            case .signedDate: r.signedDate = try reader.optionalInteger(f)
            }
        }
        return r
    }

    mutating func notification() throws(FactBodyError) -> NotificationFact {
        var n = NotificationFact(notificationType: nil)
        try object(notificationKeys) { (reader, key) throws(FactBodyError) in
            let f = key.rawValue
            switch key {
            case .notificationType: n.notificationType = try reader.optionalString(f).map(NotificationType.init(rawValue:))
            case .status: n.status = try reader.optionalInt(f)
            case .subtype: n.subtype = try reader.optionalString(f).map(NotificationSubtype.init(rawValue:))
            case .transactionId: n.transactionId = try reader.optionalString(f)
            }
        }
        return n
    }
}
