#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// The decoded payload of a StoreKit 1 app receipt (the ASN.1 `SET OF ReceiptAttribute`).
///
/// Field numbers are Apple's ("Receipt Fields"): 0 receipt type, 2 bundle id, 3 app version,
/// 12 creation date, 17 in-app purchase (repeated), 19 original app version, 21 expiration date.
/// Dates are milliseconds since the Unix epoch. Fields Apple documents as private are skipped.
public struct AppReceipt: Sendable, Equatable {
    /// Field 0: `Production`, `ProductionSandbox`, `ProductionVPP`, `ProductionVPPSandbox`, `Xcode`…
    public var receiptType: String?
    /// Field 2.
    public var bundleId: String?
    /// Field 3 (`CFBundleVersion`).
    public var appVersion: String?
    /// Field 19: the version first purchased.
    public var originalAppVersion: String?
    /// Field 12: when the receipt was made and signed.
    public var creationDate: Int64?
    /// Field 21: Volume Purchase Program receipts only.
    public var expirationDate: Int64?
    /// Field 4: opaque value (used with the device GUID for the hash).
    public var opaqueValue: [UInt8]?
    /// Field 5: SHA-1 hash of device GUID ‖ opaque value ‖ bundle id bytes.
    public var sha1Hash: [UInt8]?
    /// Field 2's value bytes as signed (the DER UTF8String), which the hash covers.
    public var bundleIdData: [UInt8]?
    /// Field 17, in receipt order.
    public var inApp: [InAppPurchase]

    public init(
        receiptType: String? = nil, bundleId: String? = nil, appVersion: String? = nil, originalAppVersion: String? = nil,
        creationDate: Int64? = nil, expirationDate: Int64? = nil, inApp: [InAppPurchase] = []
    ) {
        self.receiptType = receiptType
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.originalAppVersion = originalAppVersion
        self.creationDate = creationDate
        self.expirationDate = expirationDate
        self.inApp = inApp
    }

    /// The environment the receipt type means, in the words of `--environment`: Production (also VPP),
    /// Sandbox (`ProductionSandbox`, `ProductionVPPSandbox`), Xcode; the raw type when unknown.
    public var environment: String? {
        switch receiptType {
        case nil: return nil
        case "Production", "ProductionVPP": return EnvironmentName.production.rawValue
        case "ProductionSandbox", "ProductionVPPSandbox": return EnvironmentName.sandbox.rawValue
        case let other?: return other
        }
    }

    /// Largest payload decoded (receipts of apps with long purchase histories reach a few hundred KB).
    public static let maxPayloadBytes = 8 << 20
    /// Most in-app entries accepted in one receipt.
    public static let maxInAppEntries = 100_000

    /// Decodes the payload strictly; throws where it is not the DER a receipt is. A payload wrapped
    /// in one extra OCTET STRING (as Xcode and Apple's receipt_utility write it) is unwrapped once.
    public init(der payload: [UInt8]) throws(DERError) {
        guard payload.count <= Self.maxPayloadBytes else {
            throw DERError(offset: 0, "payload is \(payload.count) bytes; the limit is \(Self.maxPayloadBytes)")
        }
        let reader = DERReader(bytes: payload)
        var root = try reader.single(from: 0, to: payload.count, depth: 0)
        if root.tag == DERReader.Tag.octetString {
            // Xcode-style double wrapping: the SET inside one extra OCTET STRING, unwrapped once.
            root = try reader.single(from: root.contentStart, to: root.contentEnd, depth: 1)
        }
        self.init()
        var seen = Set<Int64>()
        for (type, value) in try Self.attributes(of: root, reader, "receipt") {
            if type != 17 {
                guard seen.insert(type).inserted || !Self.receiptFields.contains(type) else {
                    throw DERError(offset: value.offset, "receipt field \(type) appears twice")
                }
            }
            let what = "receipt field \(type)"
            switch type {
            case 0: receiptType = try Self.text(value, reader, what)
            case 2:
                bundleId = try Self.text(value, reader, what)
                bundleIdData = reader.content(value)
            case 3: appVersion = try Self.text(value, reader, what)
            case 4: opaqueValue = reader.content(value)
            case 5: sha1Hash = reader.content(value)
            case 12: creationDate = try Self.date(value, reader, what)
            case 17:
                guard inApp.count < Self.maxInAppEntries else {
                    throw DERError(offset: value.offset, "more than \(Self.maxInAppEntries) in-app entries")
                }
                let set = try reader.single(from: value.contentStart, to: value.contentEnd, depth: value.depth + 1)
                inApp.append(try InAppPurchase(set, reader, index: inApp.count))
            case 19: originalAppVersion = try Self.text(value, reader, what)
            case 21: expirationDate = try Self.date(value, reader, what)
            default: break
            }
        }
    }

    static let receiptFields: Set<Int64> = [0, 2, 3, 4, 5, 12, 19, 21]

    /// The `(type, value OCTET STRING)` pairs of a `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    static func attributes(
        of set: DERReader.Element, _ reader: DERReader, _ what: String
    ) throws(DERError) -> [(Int64, DERReader.Element)] {
        try reader.expect(set, DERReader.Tag.set, what)
        var out: [(Int64, DERReader.Element)] = []
        for attribute in try reader.children(of: set) {
            try reader.expect(attribute, DERReader.Tag.sequence, "\(what) attribute")
            let parts = try reader.children(of: attribute)
            guard parts.count == 3 else {
                throw DERError(offset: attribute.offset, "\(what) attribute has \(parts.count) elements; 3 expected (type, version, value)")
            }
            let type = try reader.integer(parts[0], "\(what) attribute type")
            _ = try reader.integer(parts[1], "\(what) attribute version")
            try reader.expect(parts[2], DERReader.Tag.octetString, "\(what) field \(type) value")
            out.append((type, parts[2]))
        }
        return out
    }

    /// The string held by an attribute value (exactly one UTF8String or IA5String).
    static func text(_ value: DERReader.Element, _ reader: DERReader, _ what: String) throws(DERError) -> String {
        let inner = try reader.single(from: value.contentStart, to: value.contentEnd, depth: value.depth + 1)
        return try reader.string(inner, what)
    }

    /// The INTEGER held by an attribute value.
    static func number(_ value: DERReader.Element, _ reader: DERReader, _ what: String) throws(DERError) -> Int64 {
        let inner = try reader.single(from: value.contentStart, to: value.contentEnd, depth: value.depth + 1)
        return try reader.integer(inner, what)
    }

    /// A 0/1 INTEGER flag.
    static func flag(_ value: DERReader.Element, _ reader: DERReader, _ what: String) throws(DERError) -> Bool {
        let n = try number(value, reader, what)
        guard n == 0 || n == 1 else { throw DERError(offset: value.offset, "\(what): flag is \(n), 0 or 1 expected") }
        return n == 1
    }

    /// An RFC 3339 date (IA5String) in ms; an empty string means absent.
    static func date(_ value: DERReader.Element, _ reader: DERReader, _ what: String) throws(DERError) -> Int64? {
        let text = try Self.text(value, reader, what)
        if text.isEmpty { return nil }
        guard text.utf8.count >= 20, text.utf8.count <= 40, text.contains("T"), let ms = Timestamp.parseISO8601(text) else {
            throw DERError(offset: value.offset, "\(what): \"\(text.prefix(40))\" is not an RFC 3339 date")
        }
        return ms
    }
}

/// One in-app purchase entry of a receipt (field 17), Apple's fields 1701–1719.
public struct InAppPurchase: Sendable, Equatable {
    /// 1701.
    public var quantity: Int64?
    /// 1702.
    public var productId: String?
    /// 1703.
    public var transactionId: String?
    /// 1705.
    public var originalTransactionId: String?
    /// 1704 (ms).
    public var purchaseDate: Int64?
    /// 1706 (ms).
    public var originalPurchaseDate: Int64?
    /// 1708 (ms): auto-renewable subscriptions only.
    public var expiresDate: Int64?
    /// 1712 (ms): refunded or revoked when the receipt was made.
    public var cancellationDate: Int64?
    /// 1711.
    public var webOrderLineItemId: Int64?
    /// 1713.
    public var isTrialPeriod: Bool?
    /// 1719.
    public var isInIntroOfferPeriod: Bool?

    public init() {}

    static let fields: Set<Int64> = [1701, 1702, 1703, 1704, 1705, 1706, 1708, 1711, 1712, 1713, 1719]

    init(_ set: DERReader.Element, _ reader: DERReader, index: Int) throws(DERError) {
        self.init()
        var seen = Set<Int64>()
        let entry = "in-app entry \(index + 1)"
        for (type, value) in try AppReceipt.attributes(of: set, reader, entry) {
            guard seen.insert(type).inserted || !Self.fields.contains(type) else {
                throw DERError(offset: value.offset, "\(entry) field \(type) appears twice")
            }
            let what = "\(entry) field \(type)"
            switch type {
            case 1701: quantity = try AppReceipt.number(value, reader, what)
            case 1702: productId = try AppReceipt.text(value, reader, what)
            case 1703: transactionId = try AppReceipt.text(value, reader, what)
            case 1704: purchaseDate = try AppReceipt.date(value, reader, what)
            case 1705: originalTransactionId = try AppReceipt.text(value, reader, what)
            case 1706: originalPurchaseDate = try AppReceipt.date(value, reader, what)
            case 1708: expiresDate = try AppReceipt.date(value, reader, what)
            case 1711: webOrderLineItemId = try AppReceipt.number(value, reader, what)
            case 1712: cancellationDate = try AppReceipt.date(value, reader, what)
            case 1713: isTrialPeriod = try AppReceipt.flag(value, reader, what)
            case 1719: isInIntroOfferPeriod = try AppReceipt.flag(value, reader, what)
            default: break
            }
        }
    }
}
