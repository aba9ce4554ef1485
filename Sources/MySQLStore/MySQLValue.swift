import SubscriptionEngine

/// A value bound to a `?` placeholder or read from a result column.
enum MySQLValue: Equatable, Sendable {
    case null
    case int(Int64)
    case text(String)
    /// A binary column (`BLOB`, `VARBINARY`): bytes, never decoded as text.
    case bytes([UInt8])

    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .int($0) } ?? .null }
}

/// One fetched row: values by column position, with typed accessors that report what was wrong.
struct MySQLRow {
    let values: [MySQLValue]
    /// For messages: which query produced the row.
    let source: String

    func optionalText(_ index: Int) throws(StoreError) -> String? {
        switch values[index] {
        case .null: return nil
        case .text(let text): return text
        case .int(let number): return String(number)
        case .bytes: throw .failure("column \(index + 1) holds bytes, not text [\(source)]")
        }
    }

    func text(_ index: Int) throws(StoreError) -> String {
        guard let text = try optionalText(index) else {
            throw .failure("unexpected NULL in column \(index + 1) [\(source)]")
        }
        return text
    }

    func optionalInt(_ index: Int) throws(StoreError) -> Int64? {
        switch values[index] {
        case .null: return nil
        case .int(let number): return number
        case .bytes: throw .failure("column \(index + 1) holds bytes, not an integer [\(source)]")
        case .text(let text):
            guard let number = Int64(text) else {
                throw .failure("column \(index + 1) holds '\(text.prefix(40))', not an integer [\(source)]")
            }
            return number
        }
    }

    func optionalBytes(_ index: Int) throws(StoreError) -> [UInt8]? {
        switch values[index] {
        case .null: return nil
        case .bytes(let bytes): return bytes
        case .text, .int: throw .failure("column \(index + 1) holds text, not bytes [\(source)]")
        }
    }

    func int(_ index: Int) throws(StoreError) -> Int64 {
        guard let number = try optionalInt(index) else {
            throw .failure("unexpected NULL in column \(index + 1) [\(source)]")
        }
        return number
    }

    func value<T: RawRepresentable>(_ type: T.Type, _ index: Int) throws(StoreError) -> T where T.RawValue == String {
        let raw = try text(index)
        guard let value = T(rawValue: raw) else {
            throw .failure("column \(index + 1) holds unknown \(T.self) '\(raw.prefix(40))' [\(source)]")
        }
        return value
    }
}
