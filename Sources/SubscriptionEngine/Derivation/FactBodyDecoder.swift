import IAPFoundation
import SubscriptionModel

/// Decodes a stored fact body (canonical JSON, as `FactCoding.encode` writes it) through
/// IAPFoundation's parser instead of Foundation's `JSONDecoder`, which cost ~20 µs per fact: every
/// event decodes every fact of its subscription, so that cost grew with the history.
///
/// It runs the types' own `Decodable` conformances, and it is strict: a string is read only from a
/// JSON string, an integer only from a JSON integer that fits, a Bool only from `true`/`false`, and
/// any other type or shape throws. A body it refuses is decoded by `JSONDecoder` as before
/// (``FactCoding/decode(_:_:with:)``), so every body decodes to the value it always did.
struct FactBodyDecoder: Decoder {
    /// Why a body was refused (the caller then falls back to `JSONDecoder`).
    struct Refused: Error {}

    let value: JSONValue
    /// Not tracked: a refused body is decoded again by `JSONDecoder`, whose errors are not shown either.
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue) { self.value = value }

    /// The body decoded, or nil when it is not JSON or not the shape this decoder reads.
    static func decode<T: Decodable>(_ type: T.Type, _ body: String) -> T? {
        guard let value = try? JSONParser.parse(body) else { return nil }
        return try? T(from: FactBodyDecoder(value))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw Refused() }
        return KeyedDecodingContainer(Keyed<Key>(members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Refused() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value) }

    // MARK: reading one value

    static func string(_ value: JSONValue) throws -> String {
        guard case .string(let s) = value else { throw Refused() }
        return s
    }

    static func bool(_ value: JSONValue) throws -> Bool {
        guard case .bool(let b) = value else { throw Refused() }
        return b
    }

    static func integer<T: FixedWidthInteger>(_ value: JSONValue) throws -> T {
        guard case .int(let i) = value, let v = T(exactly: i) else { throw Refused() }
        return v
    }

    struct Single: SingleValueDecodingContainer {
        let value: JSONValue
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { value.isNull }
        func decode(_ type: Bool.Type) throws -> Bool { try FactBodyDecoder.bool(value) }
        func decode(_ type: String.Type) throws -> String { try FactBodyDecoder.string(value) }
        func decode(_ type: Double.Type) throws -> Double { throw Refused() }
        func decode(_ type: Float.Type) throws -> Float { throw Refused() }
        func decode(_ type: Int.Type) throws -> Int { try FactBodyDecoder.integer(value) }
        func decode(_ type: Int8.Type) throws -> Int8 { try FactBodyDecoder.integer(value) }
        func decode(_ type: Int16.Type) throws -> Int16 { try FactBodyDecoder.integer(value) }
        func decode(_ type: Int32.Type) throws -> Int32 { try FactBodyDecoder.integer(value) }
        func decode(_ type: Int64.Type) throws -> Int64 { try FactBodyDecoder.integer(value) }
        func decode(_ type: UInt.Type) throws -> UInt { try FactBodyDecoder.integer(value) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try FactBodyDecoder.integer(value) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try FactBodyDecoder.integer(value) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try FactBodyDecoder.integer(value) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try FactBodyDecoder.integer(value) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: FactBodyDecoder(value)) }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [(key: String, value: JSONValue)]
        var codingPath: [any CodingKey] { [] }

        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        /// The member's value (the parser refuses duplicate keys, so there is at most one).
        func member(_ key: Key) -> JSONValue? {
            let name = key.stringValue
            for member in members where member.key == name { return member.value }
            return nil
        }

        /// The member's value; a missing key is refused.
        func required(_ key: Key) throws -> JSONValue {
            guard let value = member(key) else { throw Refused() }
            return value
        }

        /// The member's value, nil when missing or null.
        func present(_ key: Key) -> JSONValue? {
            guard let value = member(key), !value.isNull else { return nil }
            return value
        }

        func contains(_ key: Key) -> Bool { member(key) != nil }
        func decodeNil(forKey key: Key) throws -> Bool { try required(key).isNull }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try FactBodyDecoder.bool(required(key)) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try FactBodyDecoder.string(required(key)) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw Refused() }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw Refused() }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try FactBodyDecoder.integer(required(key)) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try FactBodyDecoder.integer(required(key)) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: FactBodyDecoder(required(key)))
        }

        // One look-up per optional field (the defaults would look the key up three times).
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try present(key).map(FactBodyDecoder.bool)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try present(key).map(FactBodyDecoder.string)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try present(key).map { try FactBodyDecoder.integer($0) }
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try present(key).map { try FactBodyDecoder.integer($0) }
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try present(key).map { try T(from: FactBodyDecoder($0)) }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try FactBodyDecoder(required(key)).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw Refused() }
        func superDecoder() throws -> any Decoder { throw Refused() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Refused() }
    }
}
