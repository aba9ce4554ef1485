// Measures the project's hand-written JSON readers against FoundationEssentials' JSONDecoder, and
// shows what JSONDecoder accepts that the strict parser refuses. Built in release by
// scripts/json-measure-run, which runs each mode under callgrind and prints instructions per item.
//
//   json-measure MODE COUNT FILE   decodes FILE's JSON COUNT times in MODE (see `modes`)
//   json-measure accepts           runs both readers over edge-case inputs and prints what each does
//   json-measure fact-body FILE    prints the stored fact body of FILE's transaction payload
import AppStoreJWS
import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Apple's JWSTransactionDecodedPayload fields, as `JSONDecoder` reads them.
struct DecodableTransaction: Decodable {
    var originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId: String?
    var subscriptionGroupIdentifier: String?
    var purchaseDate, originalPurchaseDate, expiresDate: Int64?
    var quantity: Int32?
    var type, appAccountToken, inAppOwnershipType: String?
    var signedDate: Int64?
    var revocationReason: Int32?
    var revocationDate: Int64?
    var isUpgraded: Bool?
    var offerType: Int32?
    var offerIdentifier, environment, storefront, storefrontId, transactionReason, currency: String?
    var price: Int64?
    var offerDiscountType, appTransactionId, offerPeriod, revocationType: String?
    var revocationPercentage: Int32?
    var billingPlanType: String?
}

/// A fact body's members, as `JSONDecoder` reads them (unknown members ignored: it cannot refuse them
/// without a hand-written `init(from:)`).
struct DecodableFactBody: Decodable {
    var appAccountToken, appTransactionId, currency, environment: String?
    var expiresDate: Int64?
    var inAppOwnershipType: String?
    var isFromReceipt: Bool
    var isUpgraded: Bool?
    var offerIdentifier, offerPeriod: String?
    var offerType: Int?
    var originalPurchaseDate: Int64?
    var originalTransactionId: String
    var price: Int64?
    var productId: String
    var purchaseDate, revocationDate: Int64?
    var revocationPercentage, revocationReason: Int?
    var revocationType: String?
    var signedDate: Int64?
    var transactionId: String
    var transactionReason, type: String?

    var facts: TransactionFacts {
        var tx = TransactionFacts(
            transactionId: transactionId, originalTransactionId: originalTransactionId, productId: productId,
            appAccountToken: appAccountToken, purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, revocationDate: revocationDate, revocationReason: revocationReason,
            type: type.map(ProductType.init(rawValue:)), environment: environment, price: price, currency: currency,
            signedDate: signedDate, transactionReason: transactionReason.map(TransactionReason.init(rawValue:)),
            isUpgraded: isUpgraded, revocationType: revocationType.map(RevocationType.init(rawValue:)),
            revocationPercentage: revocationPercentage, inAppOwnershipType: inAppOwnershipType.map(OwnershipType.init(rawValue:)),
            offerType: offerType, offerIdentifier: offerIdentifier, offerPeriod: offerPeriod, appTransactionId: appTransactionId)
        tx.isFromReceipt = isFromReceipt
        return tx
    }
}

struct MappingError: Error { var field: String }

/// `TransactionFacts` from a parsed body, members by name (what replacing the byte reader with
/// `JSONParser` would do; strictness checks included: unknown and wrong-typed members refused).
func transactionFacts(_ value: JSONValue) throws(MappingError) -> TransactionFacts {
    guard case .object(let members) = value else { throw MappingError(field: "") }
    var tx = TransactionFacts(transactionId: "", originalTransactionId: "", productId: "")
    var required = 0
    func string(_ v: JSONValue, _ f: String) throws(MappingError) -> String? {
        switch v {
        case .null: return nil
        case .string(let s): return s
        default: throw MappingError(field: f)
        }
    }
    func integer(_ v: JSONValue, _ f: String) throws(MappingError) -> Int64? {
        switch v {
        case .null: return nil
        case .int(let i): return i
        default: throw MappingError(field: f)
        }
    }
    func int(_ v: JSONValue, _ f: String) throws(MappingError) -> Int? { try integer(v, f).map { Int($0) } }
    func bool(_ v: JSONValue, _ f: String) throws(MappingError) -> Bool? {
        switch v {
        case .null: return nil
        case .bool(let b): return b
        default: throw MappingError(field: f)
        }
    }
    for (key, v) in members {
        switch key {
        case "appAccountToken": tx.appAccountToken = try string(v, key)
        case "appTransactionId": tx.appTransactionId = try string(v, key)
        case "currency": tx.currency = try string(v, key)
        case "environment": tx.environment = try string(v, key)
        case "expiresDate": tx.expiresDate = try integer(v, key)
        case "inAppOwnershipType": tx.inAppOwnershipType = try string(v, key).map(OwnershipType.init(rawValue:))
        case "isFromReceipt":
            guard let b = try bool(v, key) else { throw MappingError(field: key) }
            tx.isFromReceipt = b
            required |= 1
        case "isUpgraded": tx.isUpgraded = try bool(v, key)
        case "offerIdentifier": tx.offerIdentifier = try string(v, key)
        case "offerPeriod": tx.offerPeriod = try string(v, key)
        case "offerType": tx.offerType = try int(v, key)
        case "originalPurchaseDate": tx.originalPurchaseDate = try integer(v, key)
        case "originalTransactionId":
            guard let s = try string(v, key) else { throw MappingError(field: key) }
            tx.originalTransactionId = s
            required |= 2
        case "price": tx.price = try integer(v, key)
        case "productId":
            guard let s = try string(v, key) else { throw MappingError(field: key) }
            tx.productId = s
            required |= 4
        case "purchaseDate": tx.purchaseDate = try integer(v, key)
        case "revocationDate": tx.revocationDate = try integer(v, key)
        case "revocationPercentage": tx.revocationPercentage = try int(v, key)
        case "revocationReason": tx.revocationReason = try int(v, key)
        case "revocationType": tx.revocationType = try string(v, key).map(RevocationType.init(rawValue:))
        case "signedDate": tx.signedDate = try integer(v, key)
        case "transactionId":
            guard let s = try string(v, key) else { throw MappingError(field: key) }
            tx.transactionId = s
            required |= 8
        case "transactionReason": tx.transactionReason = try string(v, key).map(TransactionReason.init(rawValue:))
        case "type": tx.type = try string(v, key).map(ProductType.init(rawValue:))
        default: throw MappingError(field: key)
        }
    }
    guard required == 15 else { throw MappingError(field: "required") }
    return tx
}

@inline(never) func sink<T>(_ value: T) { withExtendedLifetime(value) {} }

let modes = [
    "parser": "JSONParser.parse of the text",
    "parser-payload": "JSONParser.parse + TransactionPayload(json:)",
    "decoder-payload": "JSONDecoder into the payload's fields",
    "factbody": "FactBody.transaction (the byte reader)",
    "parser-facts": "JSONParser.parse + TransactionFacts by name",
    "decoder-facts": "JSONDecoder into the body's fields + TransactionFacts",
    "none": "reading the file only (the baseline)",
]

func run(_ mode: String, _ count: Int, _ text: String) throws {
    let bytes = Array(text.utf8)
    let data = Data(bytes)
    let decoder = JSONDecoder()
    for _ in 0..<count {
        switch mode {
        case "parser": sink(try JSONParser.parse(bytes))
        case "parser-payload": sink(try TransactionPayload(json: JSONParser.parse(bytes)))
        case "decoder-payload": sink(try decoder.decode(DecodableTransaction.self, from: data))
        case "factbody": sink(try FactBody.transaction(text))
        case "parser-facts": sink(try transactionFacts(JSONParser.parse(bytes)))
        case "decoder-facts": sink(try decoder.decode(DecodableFactBody.self, from: data).facts)
        case "none": break
        default: fatalError("unknown mode \(mode); modes: \(modes)")
        }
    }
}

/// Arrays in arrays, read to any depth (for the nesting probe).
struct Nest: Decodable {
    var items: [Nest] = []
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { items.append(try container.decode(Nest.self)) }
    }
}

func describe(_ bundleId: String?, _ price: Int64?, _ quantity: Int32?) -> String {
    "bundleId \(bundleId.map { "\"\($0)\"" } ?? "nil"), price \(price.map(String.init) ?? "nil"), "
        + "quantity \(quantity.map(String.init) ?? "nil")"
}

func accepts() {
    struct Probe: Decodable { var bundleId: String?; var price: Int64?; var quantity: Int32? }
    let cases: [(String, [UInt8])] = [
        ("duplicate key", Array(#"{"bundleId":"com.a","bundleId":"com.b"}"#.utf8)),
        ("lone high surrogate escape", Array(#"{"bundleId":"\ud800"}"#.utf8)),
        ("lone low surrogate escape", Array(#"{"bundleId":"\udc00x"}"#.utf8)),
        ("invalid UTF-8 byte", Array(#"{"bundleId":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8)),
        ("overlong UTF-8 (C0 AF)", Array(#"{"bundleId":"a"#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)),
        ("UTF-8 BOM", [0xEF, 0xBB, 0xBF] + Array(#"{"price":1}"#.utf8)),
        ("integer above Int64", Array(#"{"price":9223372036854775808}"#.utf8)),
        ("integer above Int32 for an Int32", Array(#"{"quantity":2147483648}"#.utf8)),
        ("2.0 for an integer", Array(#"{"price":2.0}"#.utf8)),
        ("1.5 for an integer", Array(#"{"price":1.5}"#.utf8)),
        ("1e3 for an integer", Array(#"{"price":1e3}"#.utf8)),
        ("-0", Array(#"{"price":-0}"#.utf8)),
        ("leading zero 007", Array(#"{"price":007}"#.utf8)),
        ("number 1e400", Array(#"{"price":1e400}"#.utf8)),
        ("trailing comma", Array(#"{"price":1,}"#.utf8)),
        ("comment", Array(#"{"price":1 /* c */}"#.utf8)),
        ("NaN", Array(#"{"price":NaN}"#.utf8)),
        ("unescaped control character", Array(#"{"bundleId":"a"#.utf8) + [0x01] + Array(#""}"#.utf8)),
        ("data after the value", Array(#"{"price":1} x"#.utf8)),
    ]
    for (name, bytes) in cases {
        let strict: String
        do {
            let p = try TransactionPayload(json: JSONParser.parse(bytes))
            strict = "accepts (\(describe(p.bundleId, p.price, p.quantity)))"
        } catch {
            strict = "refuses (\(error))"
        }
        let lenient: String
        do {
            let value = try JSONDecoder().decode(Probe.self, from: Data(bytes))
            lenient = "accepts (\(describe(value.bundleId, value.price, value.quantity)))"
        } catch {
            lenient = "refuses (\(String(describing: error).prefix(100)))"
        }
        print("\(name):\n  JSONParser + TransactionPayload: \(strict)\n  JSONDecoder:                     \(lenient)")
    }
    for depth in [65, 600, 10_000] {
        let nested = Array(String(repeating: "[", count: depth).utf8) + Array(String(repeating: "]", count: depth).utf8)
        let strict = (try? JSONParser.parse(nested)) == nil ? "refuses" : "accepts"
        let lenient = (try? JSONDecoder().decode(Nest.self, from: Data(nested))) == nil ? "refuses" : "accepts"
        print("arrays nested \(depth) deep: JSONParser \(strict), JSONDecoder \(lenient)")
    }
    let scalar = (try? JSONDecoder().decode(Int64.self, from: Data("5".utf8))).map { "accepts (\($0))" } ?? "refuses"
    print("a top-level number: JSONParser accepts, JSONDecoder \(scalar)")
}

/// The stored fact body (``FactBody/encode``) of a signed transaction's payload.
func factBody(_ p: TransactionPayload) -> String {
    guard let id = p.transactionId, let original = p.originalTransactionId, let product = p.productId else {
        fatalError("the payload lacks transactionId, originalTransactionId or productId")
    }
    return FactBody.encode(
        TransactionFacts(
            transactionId: id, originalTransactionId: original, productId: product, appAccountToken: p.appAccountToken,
            purchaseDate: p.purchaseDate, originalPurchaseDate: p.originalPurchaseDate, expiresDate: p.expiresDate,
            revocationDate: p.revocationDate, revocationReason: p.revocationReason.map(Int.init), type: p.type,
            environment: p.environment, price: p.price, currency: p.currency, signedDate: p.signedDate,
            transactionReason: p.transactionReason, isUpgraded: p.isUpgraded, revocationType: p.revocationType,
            revocationPercentage: p.revocationPercentage.map(Int.init), inAppOwnershipType: p.inAppOwnershipType,
            offerType: p.offerType.map { Int($0.rawValue) }, offerIdentifier: p.offerIdentifier, offerPeriod: p.offerPeriod,
            appTransactionId: p.appTransactionId))
}

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "accepts" {
    accepts()
} else if arguments.count == 3, arguments[1] == "fact-body" {
    guard let bytes = try? BoundedFile.read(arguments[2], maxBytes: 1 << 20) else { fatalError("cannot read \(arguments[2])") }
    print(factBody(try TransactionPayload(json: JSONParser.parse(bytes))))
} else if arguments.count == 4, let count = Int(arguments[2]) {
    let file = arguments[3]
    guard let bytes = try? BoundedFile.read(file, maxBytes: 1 << 20) else { fatalError("cannot read \(file)") }
    try run(arguments[1], count, String(decoding: bytes, as: UTF8.self))
} else {
    print("usage: json-measure MODE COUNT FILE | json-measure accepts\nmodes:")
    for (mode, what) in modes.sorted(by: { $0.key < $1.key }) { print("  \(mode): \(what)") }
}
