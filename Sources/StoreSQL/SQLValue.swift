import SubscriptionEngine

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
        try String?(sql: values[index], column: "\(index + 1)", source: source)
    }

    public func text(_ index: Int) throws(StoreError) -> String {
        try String(sql: values[index], column: "\(index + 1)", source: source)
    }

    public func optionalInt(_ index: Int) throws(StoreError) -> Int64? {
        try Int64?(sql: values[index], column: "\(index + 1)", source: source)
    }

    public func int(_ index: Int) throws(StoreError) -> Int64 {
        try Int64(sql: values[index], column: "\(index + 1)", source: source)
    }

    public func optionalBytes(_ index: Int) throws(StoreError) -> [UInt8]? {
        try [UInt8]?(sql: values[index], column: "\(index + 1)", source: source)
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

/// A Swift type a column holds: how it is bound and how it is read back (naming the column when
/// the stored value does not fit).
public protocol SQLColumnValue {
    init(sql value: SQLValue, column: String, source: String) throws(StoreError)
    var sqlValue: SQLValue { get }
}

extension String: SQLColumnValue {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        switch value {
        case .text(let text): self = text
        case .int(let number): self = String(number)
        case .null: throw .failure("unexpected NULL in column \(column) [\(source)]")
        case .bytes: throw .failure("column \(column) holds bytes, not text [\(source)]")
        }
    }
    public var sqlValue: SQLValue { .text(self) }
}

extension Int64: SQLColumnValue {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        switch value {
        case .int(let number): self = number
        case .null: throw .failure("unexpected NULL in column \(column) [\(source)]")
        case .bytes: throw .failure("column \(column) holds bytes, not an integer [\(source)]")
        case .text(let text):
            guard let number = Int64(text) else {
                throw .failure("column \(column) holds '\(text.prefix(40))', not an integer [\(source)]")
            }
            self = number
        }
    }
    public var sqlValue: SQLValue { .int(self) }
}

/// Stored as 0 or 1.
extension Bool: SQLColumnValue {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        self = try Int64(sql: value, column: column, source: source) != 0
    }
    public var sqlValue: SQLValue { .int(self ? 1 : 0) }
}

extension Array: SQLColumnValue where Element == UInt8 {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        switch value {
        case .bytes(let bytes): self = bytes
        case .null: throw .failure("unexpected NULL in column \(column) [\(source)]")
        case .text, .int: throw .failure("column \(column) holds text, not bytes [\(source)]")
        }
    }
    public var sqlValue: SQLValue { .bytes(self) }
}

extension Optional: SQLColumnValue where Wrapped: SQLColumnValue {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        if case .null = value {
            self = nil
        } else {
            self = try Wrapped(sql: value, column: column, source: source)
        }
    }
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// An enum stored as its raw text; an unknown value fails naming the column.
public protocol SQLTextEnum: SQLColumnValue, RawRepresentable where RawValue == String {}

extension SQLTextEnum {
    public init(sql value: SQLValue, column: String, source: String) throws(StoreError) {
        let raw = try String(sql: value, column: column, source: source)
        guard let decoded = Self(rawValue: raw) else {
            throw .failure("column \(column) holds unknown \(Self.self) '\(raw.prefix(40))' [\(source)]")
        }
        self = decoded
    }
    public var sqlValue: SQLValue { .text(rawValue) }
}

extension OrderStatus: SQLTextEnum {}
extension ContractStatus: SQLTextEnum {}
extension EventSource: SQLTextEnum {}
extension Verdict: SQLTextEnum {}
extension EntityKind: SQLTextEnum {}
extension Fact.Kind: SQLTextEnum {}
