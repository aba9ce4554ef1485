import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The audit trail's before/after JSON of orders and contracts, byte for byte what `JSONEncoder`
/// with `.sortedKeys` writes for them (keys in sorted order, nil members left out, `/` written as
/// `\/`, control characters escaped: ``JSONWriter/Escaping/foundation``), without its generic
/// machinery: the encoder was about half of the engine's time per notification. The one writer and
/// the one typed reader of that JSON (``AuditRows`` reads it as columns for display).
enum EngineAuditJSON {
    /// Any row as the audit trail stores it: orders and contracts from their column tables, anything
    /// else with `JSONEncoder` and sorted keys (the same bytes either way).
    static func encode<T: Encodable>(_ value: T) -> String? {
        if let order = value as? Order { return encode(order) }
        if let contract = value as? Contract { return encode(contract) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A row (or the members of one a caller declares) from its audit JSON; nil when there is none
    /// or it does not decode.
    static func decode<T: Decodable>(_ json: String?, as _: T.Type = T.self) -> T? {
        guard let json else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    /// An order row as sorted-keys JSON.
    static func encode(_ o: Order) -> String { encode(o, orderColumns) }

    /// A contract row as sorted-keys JSON.
    static func encode(_ c: Contract) -> String { encode(c, contractColumns) }

    /// The column tables sorted by JSON key (the property's name), as `.sortedKeys` orders them.
    private static let orderColumns = Order.columns.sorted { $0.property < $1.property }
    private static let contractColumns = Contract.columns.sorted { $0.property < $1.property }

    private static func encode<Row>(_ row: Row, _ columns: [ModelColumn<Row>]) -> String {
        var w = JSONObjectWriter(escaping: .foundation, capacity: 384)
        // By index: iterating would copy each column (its closures and names retained and released).
        for index in columns.indices {
            switch columns[index].value(of: row) {
            case .null, .bytes: continue  // nil members are left out
            case .int(let number): w.add(columns[index].property, number)
            case .text(let text): w.add(columns[index].property, text)
            case .bool(let flag): w.add(columns[index].property, flag)
            }
        }
        return w.json
    }
}
