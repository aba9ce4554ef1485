import SubscriptionModel

/// A value bound to a `?` placeholder or read from a result column, in every backend.
public enum SQLValue: Equatable, Sendable {
    case null
    case int(Int64)
    case text(String)
    /// A binary column (`BLOB`, `VARBINARY`): bytes, never decoded as text.
    case bytes([UInt8])

    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    public init(_ value: Int64?) { self = value.map { .int($0) } ?? .null }
}

/// One fetched row: values by column position (positional reads are for aggregates and schema
/// probes; model rows are read by name through an ``SQLTable``).
public struct SQLRow: Sendable {
    public let values: [SQLValue]
    /// For messages: which query produced the row.
    public let source: String

    public init(values: [SQLValue], source: String) {
        self.values = values
        self.source = source
    }

    public func optionalText(_ index: Int) throws(StoreError) -> String? {
        try String?(column: values[index].columnValue, name: "\(index + 1)", source: source)
    }

    public func text(_ index: Int) throws(StoreError) -> String {
        try String(column: values[index].columnValue, name: "\(index + 1)", source: source)
    }

    public func optionalInt(_ index: Int) throws(StoreError) -> Int64? {
        try Int64?(column: values[index].columnValue, name: "\(index + 1)", source: source)
    }

    public func int(_ index: Int) throws(StoreError) -> Int64 {
        try Int64(column: values[index].columnValue, name: "\(index + 1)", source: source)
    }

    public func optionalBytes(_ index: Int) throws(StoreError) -> [UInt8]? {
        try [UInt8]?(column: values[index].columnValue, name: "\(index + 1)", source: source)
    }

    public func value<T: RawRepresentable>(_ type: T.Type, _ index: Int) throws(StoreError) -> T
    where T.RawValue == String {
        let raw = try text(index)
        guard let value = T(rawValue: raw) else {
            throw .failure("column \(index + 1) holds unknown \(T.self) '\(raw.prefix(40))' [\(source)]")
        }
        return value
    }
}

/// What a query returned: the result's column names (as the engine reports them) and its rows.
public struct SQLResult: Sendable {
    public let columns: [String]
    public let rows: [SQLRow]

    public init(columns: [String], rows: [SQLRow]) {
        self.columns = columns
        self.rows = rows
    }
}

extension SQLValue {
    /// The stored value as the engine's column tables hold it.
    public var columnValue: ColumnValue {
        switch self {
        case .null: return .null
        case .int(let number): return .int(number)
        case .text(let text): return .text(text)
        case .bytes(let bytes): return .bytes(bytes)
        }
    }

    /// A column table's value as SQL binds it: a boolean as 0 or 1.
    public init(_ value: ColumnValue) {
        switch value {
        case .null: self = .null
        case .int(let number): self = .int(number)
        case .text(let text): self = .text(text)
        case .bool(let flag): self = .int(flag ? 1 : 0)
        case .bytes(let bytes): self = .bytes(bytes)
        }
    }
}
