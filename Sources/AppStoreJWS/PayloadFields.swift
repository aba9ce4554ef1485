/// Typed access to the members of one decoded JSON object; a wrong JSON type for a
/// known field is an ``VerificationFailure/Code/invalidPayload`` error naming the field.
/// `null` counts as absent.
struct PayloadFields {
    let members: [(key: String, value: JSONValue)]
    /// Dotted path of this object for messages ("" for the payload itself).
    let path: String

    init(_ value: JSONValue, path: String) throws(VerificationFailure) {
        guard case .object(let members) = value else {
            throw VerificationFailure(
                .invalidPayload, path.isEmpty ? "payload is not a JSON object" : "payload field \(path) must be an object")
        }
        self.members = members
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private func value(_ key: String) -> JSONValue? {
        for member in members where member.key == key {
            if case .null = member.value { return nil }
            return member.value
        }
        return nil
    }

    private func wrongType(_ key: String, _ expected: String, _ found: JSONValue) -> VerificationFailure {
        VerificationFailure(.invalidPayload, "payload field \(name(key)) must be \(expected), found \(found.typeName)")
    }

    func string(_ key: String) throws(VerificationFailure) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw wrongType(key, "a string", v) }
        return s
    }

    func bool(_ key: String) throws(VerificationFailure) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw wrongType(key, "a boolean", v) }
        return b
    }

    /// An integer; an integral double (e.g. `1.0`) is accepted.
    func int64(_ key: String) throws(VerificationFailure) -> Int64? {
        guard let v = value(key) else { return nil }
        switch v {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9.0e18: return Int64(d)
        default: throw wrongType(key, "an integer", v)
        }
    }

    func int32(_ key: String) throws(VerificationFailure) -> Int32? {
        guard let i = try int64(key) else { return nil }
        guard let small = Int32(exactly: i) else {
            throw VerificationFailure(.invalidPayload, "payload field \(name(key)) is out of the 32-bit range")
        }
        return small
    }

    /// A date in milliseconds; fractional milliseconds (Xcode) are truncated toward negative infinity.
    func date(_ key: String) throws(VerificationFailure) -> Int64? {
        guard let v = value(key) else { return nil }
        switch v {
        case .int(let i): return i
        case .double(let d) where d.isFinite && abs(d) < 9.0e18: return Int64(d.rounded(.down))
        default: throw wrongType(key, "a number of milliseconds", v)
        }
    }

    func stringArray(_ key: String) throws(VerificationFailure) -> [String]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v else { throw wrongType(key, "an array of strings", v) }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .string(let s) = item else { throw wrongType(key, "an array of strings", v) }
            out.append(s)
        }
        return out
    }

    /// A nested object, returned as its reader.
    func object(_ key: String) throws(VerificationFailure) -> PayloadFields? {
        guard let v = value(key) else { return nil }
        guard case .object = v else { throw wrongType(key, "an object", v) }
        return try PayloadFields(v, path: name(key))
    }

    /// A nested object kept as JSON.
    func rawObject(_ key: String) throws(VerificationFailure) -> JSONValue? {
        guard let v = value(key) else { return nil }
        guard case .object = v else { throw wrongType(key, "an object", v) }
        return v
    }

    /// A UUID string where Apple may send `""` for "none": empty becomes nil.
    func token(_ key: String) throws(VerificationFailure) -> String? {
        guard let s = try string(key), !s.isEmpty else { return nil }
        return s
    }

    func has(_ key: String) -> Bool { members.contains(where: { $0.key == key }) }
}
