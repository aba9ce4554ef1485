/// A stored column's value, as the store keeps it (no SQL here: the store maps it to its engine's).
public enum ColumnValue: Sendable, Equatable {
    case null
    case int(Int64)
    case text(String)
    case bool(Bool)
    case bytes([UInt8])

    /// As text for change lists: numbers in decimal, booleans `1`/`0`, NULL as nil.
    public var text: String? {
        switch self {
        case .null, .bytes: return nil
        case .int(let number): return String(number)
        case .text(let text): return text
        case .bool(let flag): return flag ? "1" : "0"
        }
    }
}

/// A Swift type a column holds: its stored value, and back (naming the column when it does not fit).
public protocol ColumnConvertible {
    init(column value: ColumnValue, name: String, source: String) throws(StoreError)
    var columnValue: ColumnValue { get }
}

extension String: ColumnConvertible {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        switch value {
        case .text(let text): self = text
        case .int(let number): self = String(number)
        case .bool(let flag): self = flag ? "1" : "0"
        case .null: throw .failure("unexpected NULL in column \(name) [\(source)]")
        case .bytes: throw .failure("column \(name) holds bytes, not text [\(source)]")
        }
    }
    public var columnValue: ColumnValue { .text(self) }
}

extension Int64: ColumnConvertible {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        switch value {
        case .int(let number): self = number
        case .bool(let flag): self = flag ? 1 : 0
        case .null: throw .failure("unexpected NULL in column \(name) [\(source)]")
        case .bytes: throw .failure("column \(name) holds bytes, not an integer [\(source)]")
        case .text(let text):
            guard let number = Int64(text) else {
                throw .failure("column \(name) holds '\(text.prefix(40))', not an integer [\(source)]")
            }
            self = number
        }
    }
    public var columnValue: ColumnValue { .int(self) }
}

/// A flag; stores that have no boolean keep 0 or 1.
extension Bool: ColumnConvertible {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        if case .bool(let flag) = value {
            self = flag
        } else {
            self = try Int64(column: value, name: name, source: source) != 0
        }
    }
    public var columnValue: ColumnValue { .bool(self) }
}

extension Array: ColumnConvertible where Element == UInt8 {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        switch value {
        case .bytes(let bytes): self = bytes
        case .null: throw .failure("unexpected NULL in column \(name) [\(source)]")
        case .text, .int, .bool: throw .failure("column \(name) holds text, not bytes [\(source)]")
        }
    }
    public var columnValue: ColumnValue { .bytes(self) }
}

extension Optional: ColumnConvertible where Wrapped: ColumnConvertible {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        if case .null = value {
            self = nil
        } else {
            self = try Wrapped(column: value, name: name, source: source)
        }
    }
    public var columnValue: ColumnValue { self?.columnValue ?? .null }
}

/// An enum stored as its raw text; an unknown value fails naming the column.
public protocol ColumnTextEnum: ColumnConvertible, RawRepresentable where RawValue == String {}

extension ColumnTextEnum {
    public init(column value: ColumnValue, name: String, source: String) throws(StoreError) {
        let raw = try String(column: value, name: name, source: source)
        guard let decoded = Self(rawValue: raw) else {
            throw .failure("column \(name) holds unknown \(Self.self) '\(raw.prefix(40))' [\(source)]")
        }
        self = decoded
    }
    public var columnValue: ColumnValue { .text(rawValue) }
}

extension OrderStatus: ColumnTextEnum {}
extension ContractStatus: ColumnTextEnum {}
extension EventSource: ColumnTextEnum {}
extension Verdict: ColumnTextEnum {}
extension EntityKind: ColumnTextEnum {}
extension Fact.Kind: ColumnTextEnum {}

/// One column of a row type: its name (the store's column, the records' key), the property that
/// holds it, and whether it is one of the row's audited values. Storing, showing and auditing a row
/// all go through its column table, so a column is declared once.
public struct ModelColumn<Row>: @unchecked Sendable {
    public let name: String
    /// The property's name (`created_at` → `createdAt`): the key of the audit trail's JSON.
    public let property: String
    /// Part of the row's values that changes are recorded and shown for (not ids or bookkeeping times).
    public let isAudited: Bool
    private let get: (Row) -> ColumnValue
    private let set: (inout Row, ColumnValue, String) throws(StoreError) -> Void

    public init<V: ColumnConvertible>(_ name: String, _ path: WritableKeyPath<Row, V>, audited: Bool = true) {
        self.name = name
        var words = name.split(separator: "_").map(String.init)
        for index in words.indices.dropFirst() { words[index] = words[index].prefix(1).uppercased() + words[index].dropFirst() }
        property = words.joined()
        isAudited = audited
        if let offset = MemoryLayout<Row>.offset(of: path) {
            // A stored property (every column table's): read at its offset. A key path applied at
            // run time goes through the runtime's generic projection, ~550 instructions a value, and
            // rows are read column by column at every write and audit.
            get = { row in
                withUnsafePointer(to: row) {
                    UnsafeRawPointer($0).advanced(by: offset).assumingMemoryBound(to: V.self).pointee.columnValue
                }
            }
        } else {
            get = { $0[keyPath: path].columnValue }
        }
        set = { row, value, source throws(StoreError) in
            row[keyPath: path] = try V(column: value, name: name, source: source)
        }
    }

    /// The value `row` holds in this column.
    public func value(of row: Row) -> ColumnValue { get(row) }

    /// Sets this column of `row` from a stored value; `source` names the query in messages.
    public func read(_ value: ColumnValue, into row: inout Row, source: String) throws(StoreError) {
        try set(&row, value, source)
    }
}

/// A row type with a column table: `id` first, then in the schema's order (the store's schema
/// description gives each column its type; a test checks the two agree).
public protocol ColumnTable {
    static var columns: [ModelColumn<Self>] { get }
}

extension ColumnTable {
    /// The audited columns as text, in schema order (no ids or timestamps). Inlinable: called from
    /// other modules for every audited change, it is specialised there; unspecialised, its generic
    /// filter and map cost ~110 heap allocations per notification (scripts/budgets).
    @inlinable public var columnValues: [(String, String?)] {
        var values: [(String, String?)] = []
        values.reserveCapacity(Self.columns.count)
        for column in Self.columns where column.isAudited { values.append((column.name, column.value(of: self).text)) }
        return values
    }
}

extension Order: ColumnTable {
    public static let columns: [ModelColumn<Order>] = [
        ModelColumn("id", \.id, audited: false),
        ModelColumn("no", \.no), ModelColumn("user_id", \.userId), ModelColumn("product_id", \.productId),
        ModelColumn("status", \.status), ModelColumn("trade_no", \.tradeNo), ModelColumn("origin_no", \.originNo),
        ModelColumn("purchase_date", \.purchaseDate), ModelColumn("expires_date", \.expiresDate),
        ModelColumn("environment", \.environment), ModelColumn("price", \.price), ModelColumn("currency", \.currency),
        ModelColumn("created_at", \.createdAt, audited: false), ModelColumn("updated_at", \.updatedAt, audited: false),
    ]
}

extension Contract: ColumnTable {
    public static let columns: [ModelColumn<Contract>] = [
        ModelColumn("id", \.id, audited: false),
        ModelColumn("contract_id", \.contractId), ModelColumn("user_id", \.userId), ModelColumn("product_id", \.productId),
        ModelColumn("status", \.status), ModelColumn("auto_renew", \.autoRenew), ModelColumn("expires_date", \.expiresDate),
        ModelColumn("environment", \.environment), ModelColumn("next_product_id", \.nextProductId),
        ModelColumn("last_event_date", \.lastEventDate, audited: false),
        ModelColumn("created_at", \.createdAt, audited: false), ModelColumn("updated_at", \.updatedAt, audited: false),
    ]
}
