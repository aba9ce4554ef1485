import IAPFoundation

/// One output item: fields in a fixed order (the order JSON, CSV and tables show them in).
///
/// Dates are integers in milliseconds under snake-case keys ending in `_date` or `_at`
/// (`expires_date`, `created_at`); see `DateFields` for how each format shows them.
public struct Record: Sendable, ExpressibleByDictionaryLiteral {
    /// The fields, in order.
    public var fields: [(key: String, value: JSONValue)]

    /// A record with these fields.
    public init(_ fields: [(key: String, value: JSONValue)] = []) {
        self.fields = fields
    }

    /// `["no": .string("…"), "amount": .int(3)]`, order kept.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.fields = elements.map { (key: $0.0, value: $0.1) }
    }

    /// The value of `key`; setting replaces it in place or appends a new field.
    public subscript(key: String) -> JSONValue? {
        get { fields.first { $0.key == key }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.key == key }) {
                if let newValue { fields[index].value = newValue } else { fields.remove(at: index) }
            } else if let newValue {
                fields.append((key, newValue))
            }
        }
    }

    /// The keys, in order.
    public var keys: [String] { fields.map(\.key) }

    /// Appends a string field (`null` when nil).
    public mutating func append(_ key: String, _ value: String?) {
        fields.append((key, value.map(JSONValue.string) ?? .null))
    }

    /// Appends an integer field (`null` when nil); dates are milliseconds under `*_date`/`*_at` keys.
    public mutating func append(_ key: String, _ value: Int64?) {
        fields.append((key, value.map(JSONValue.int) ?? .null))
    }

    /// Appends an integer field (`null` when nil).
    public mutating func append(_ key: String, _ value: Int?) {
        fields.append((key, value.map { JSONValue.int(Int64($0)) } ?? .null))
    }

    /// Appends a boolean field (`null` when nil).
    public mutating func append(_ key: String, _ value: Bool?) {
        fields.append((key, value.map(JSONValue.bool) ?? .null))
    }

    /// Appends any JSON value.
    public mutating func append(_ key: String, _ value: JSONValue) {
        fields.append((key, value))
    }

    /// The record as a JSON object, dates shown both ways (see `DateFields`).
    public func jsonObject() -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        let present = Set(keys)
        for (key, value) in fields {
            guard DateFields.isDateKey(key), value.isNull || { if case .int = value { true } else { false } }() else {
                members.append((key, value))
                continue
            }
            members.append((key, DateFields.jsonValue(value)))
            let rawKey = key + "_ms"
            if !present.contains(rawKey) { members.append((rawKey, value)) }
        }
        return .object(members)
    }
}

/// How dates are shown.
///
/// Times are counted in integer milliseconds since the Unix epoch. Output fields
/// whose snake-case key ends in `_date` or `_at` and whose value is an integer are dates:
/// - table and CSV show them as ISO-8601 UTC to the second (`2025-09-05T01:24:32Z`);
/// - JSON and NDJSON give the ISO-8601 string under the key itself and the exact integer under
///   `<key>_ms` right after it (`"expires_date": "2025-10-05T01:24:32Z", "expires_date_ms":
///   1759627472000`), so scripts get a readable and a lossless value; a missing date is `null`
///   in both.
/// Camel-case keys of foreign payloads (`signedDate`, `expiresDate`) are passed through untouched.
public enum DateFields {
    /// Whether `key` names a date field (`purchase_date`, `created_at`).
    public static func isDateKey(_ key: String) -> Bool {
        key.hasSuffix("_date") || key.hasSuffix("_at")
    }

    /// The ISO-8601 string of an integer ms value; other values unchanged.
    static func jsonValue(_ value: JSONValue) -> JSONValue {
        if case .int(let ms) = value { return .string(Timestamp.iso8601(ms)) }
        return value
    }
}

/// One column of a table or CSV: which field, its header, its width limit and alignment.
public struct Column: Sendable, ExpressibleByStringLiteral {
    /// How cells line up.
    public enum Alignment: Sendable {
        /// Right for all-number columns, left otherwise.
        case automatic
        case left
        case right
    }

    /// The record key.
    public var key: String
    /// The header; nil shows the key upper-cased (`user_id` → `USER_ID`); CSV always uses the key.
    public var title: String?
    /// Marks free text: on a terminal too narrow for the table, this column is cut first (ending
    /// in `…`), down to this many columns (at most 12; a `wraps` column to 40). Off a terminal, or with `--wide`, nothing is cut.
    public var maxWidth: Int?
    public var alignment: Alignment
    /// Never cut, even on a narrow terminal (a hint or a command to run).
    public var keepWhole: Bool
    /// What the table is read for (an order's STATUS and EXPIRES, explain's STATE and WHY): on a
    /// narrow terminal the other columns are left out first, then the first column gives way
    /// (cut to 16), and only then is such a column left out.
    public var important: Bool
    /// Free text that wraps onto continuation lines (inside its column) when it is the last
    /// column shown, instead of being cut; on a terminal also with `--wide`.
    public var wraps: Bool
    /// Whose row it is (USER): kept like an `important` column, yet the first to be left out
    /// when every row shares it (a filter fixed it, so it answers nothing).
    public var owner: Bool
    /// A name made of parts (`SUBSCRIBED/INITIAL_BUY`): on a terminal too narrow for it whole, it
    /// takes more lines in its column, broken after a `/` (or at a space; where that is not enough,
    /// after a `_`), never cut; the columns that are not `important` give way before it, and a
    /// wrapping last column that is not `important` goes under the row before this one is narrowed.
    public var folds: Bool

    /// A column; see the properties.
    public init(
        _ key: String, title: String? = nil, maxWidth: Int? = nil, alignment: Alignment = .automatic,
        keepWhole: Bool = false, important: Bool = false, wraps: Bool = false, owner: Bool = false, folds: Bool = false
    ) {
        self.folds = folds
        self.key = key
        self.title = title
        self.maxWidth = maxWidth
        self.alignment = alignment
        self.keepWhole = keepWhole
        self.important = important
        self.wraps = wraps
        self.owner = owner
    }

    /// A column showing field `value` with the default header.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The table header.
    public var header: String { title ?? key.uppercased() }
}
