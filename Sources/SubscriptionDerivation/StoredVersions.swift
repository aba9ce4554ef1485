import SubscriptionModel

/// Versions of a subscription's renewal info or of what its notifications said, kept as stored
/// (`signedDate`, source, body) and decoded only when a rule asks for them.
///
/// Every rule that reads them picks the newest statement (by `signedDate`, then source and
/// content), which the stored row tells without decoding: a derivation decodes them newest first
/// and stops once no older one can win, so an event of a long history decodes a few of them, not
/// all (the 120th renewal should cost what the 10th does).
struct StoredVersions<Value: StoredFactValue>: Sendable, Equatable {
    struct Row: Sendable, Equatable {
        var signedDate: Int64
        var source: EventSource
        var body: String
        /// The fact's key, named when its body cannot be read.
        var key: String
    }

    /// In arrival order (the order the store returned them, then the order they were added).
    private(set) var rows: [Row] = []

    mutating func append(_ fact: Fact) {
        rows.append(Row(signedDate: fact.signedDate, source: fact.source, body: fact.body, key: fact.key))
    }

    /// Every readable version, decoded, in arrival order (an unreadable body is left out).
    var decodedAll: [Versioned<Value>] {
        rows.compactMap { row in
            (try? Value.decodeStored(row.body, key: row.key)).map {
                Versioned(value: $0, signedDate: row.signedDate, source: row.source, body: row.body)
            }
        }
    }
}

/// A fact value kept undecoded in ``StoredVersions``.
protocol StoredFactValue: Sendable, Equatable {
    /// The stored body decoded (``FactBody``).
    static func decodeStored(_ body: String, key: String) throws(FactBodyError) -> Self
}

extension RenewalFacts: StoredFactValue {
    static func decodeStored(_ body: String, key: String) throws(FactBodyError) -> RenewalFacts {
        try FactBody.renewal(body, key: key)
    }
}

extension NotificationFact: StoredFactValue {
    static func decodeStored(_ body: String, key: String) throws(FactBodyError) -> NotificationFact {
        try FactBody.notification(body, key: key)
    }
}

/// One derivation's reading of ``StoredVersions``: each version decoded at most once, newest first.
///
/// The rules ask two things: the `signedDate` of the newest version that can make a statement
/// (``newestSignedDate(where:)``), and then every version signed at or after a bound, in arrival
/// order (``versions(signedSince:)``), among which they pick exactly as they would among all
/// (ties at the bound included, in the same order). A version signed before the bound cannot be the
/// newest statement, so it is never decoded. `everything` decodes and returns every version
/// whatever the bound: the reference the tests compare the newest-first reading with.
struct VersionReader<Value: StoredFactValue> {
    let stored: StoredVersions<Value>
    let everything: Bool
    /// Indices into `stored.rows`, newest `signedDate` first (arrival order within one moment).
    private let newestFirst: [Int]
    /// Decoded values by index: nil not decoded yet, `.some(nil)` unreadable.
    private var decoded: [Versioned<Value>??]
    /// The versions this reading decoded and could not read (left out, and reported by the derivation).
    private(set) var unreadable: [FactBodyError] = []

    init(_ stored: StoredVersions<Value>, everything: Bool = false) {
        self.stored = stored
        self.everything = everything
        let rows = stored.rows
        newestFirst = rows.indices.sorted { a, b in
            rows[a].signedDate != rows[b].signedDate ? rows[a].signedDate > rows[b].signedDate : a < b
        }
        decoded = Array(repeating: nil, count: rows.count)
    }

    mutating func version(_ index: Int) -> Versioned<Value>? {
        if let known = decoded[index] { return known }
        let row = stored.rows[index]
        var value: Versioned<Value>?
        do {
            value = Versioned(
                value: try Value.decodeStored(row.body, key: row.key), signedDate: row.signedDate, source: row.source,
                body: row.body)
        } catch {
            unreadable.append(error)
        }
        decoded[index] = .some(value)
        return value
    }

    /// The `signedDate` of the newest readable version that `qualifies`; nil when none does, or
    /// none signed at or after `floor` does (then the caller's bound is at least `floor` anyway:
    /// older versions are not decoded).
    mutating func newestSignedDate(notBefore floor: Int64? = nil, where qualifies: (Versioned<Value>) -> Bool = { _ in true })
        -> Int64?
    {
        for index in newestFirst {
            if !everything, let floor, stored.rows[index].signedDate < floor { return nil }
            if let v = version(index), qualifies(v) { return v.signedDate }
        }
        return nil
    }

    /// Every readable version signed at or after `bound` (every one when `bound` is nil), in arrival order.
    mutating func versions(signedSince bound: Int64?) -> [Versioned<Value>] {
        var picked: [Int] = []
        for index in newestFirst {
            if !everything, let bound, stored.rows[index].signedDate < bound { break }
            picked.append(index)
        }
        picked.sort()
        return picked.compactMap { version($0) }
    }
}
