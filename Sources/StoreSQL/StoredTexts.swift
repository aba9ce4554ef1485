import SubscriptionEngine

/// How the rows with packed texts (``TextPacking``) are written and read back: the one place that
/// says which column holds what, for the session and for the migration that packs existing rows
/// (``TextRepacking``). A row that cannot be packed keeps its text; every form reads back as the
/// same values.
enum StoredTexts {
    // MARK: ledger detail

    /// `detail` packed into `detail_packed` (NULL `detail`), when that is smaller; `row` (its
    /// columns as stored) gives the values the packed text may refer to (none for an update).
    static func packDetail(_ detail: String?, row: LedgerEntry?) -> (detail: String?, packed: [UInt8]?) {
        guard let detail, let packed = TextPacking.pack([detail], .detail, context: row.map(ledgerContext) ?? [])
        else { return (detail, nil) }
        return (nil, packed)
    }

    /// `audits(reference)` reads the audit rows a ``DetailReference`` lists, oldest first.
    static func detail(
        _ text: String?, packed: [UInt8]?, row: LedgerEntry,
        audits: (DetailReference.Parsed) throws(StoreError) -> [AuditEntry]
    ) throws(StoreError) -> String? {
        guard let packed else { return text }
        if DetailReference.isReference(packed) {
            return try DetailReference.detail(packed, audits: audits(DetailReference.parse(packed)), row: row.id)
        }
        return try unpack(packed, .detail, count: 1, context: ledgerContext(row), "ledger row \(row.id)'s detail")[0]
    }

    /// The ledger row's ids its raw and detail name, in this order (part of the stored format).
    static func ledgerContext(_ row: LedgerEntry) -> [String?] {
        [row.notificationUUID, row.transactionId, row.originalTransactionId, row.appAccountToken]
    }

    // MARK: audit before/after

    /// The row to store for `entry`: before, after, command and reason packed together when that
    /// is smaller (`before_json`, `after_json`, `reason` then NULL and `command` empty; the columns
    /// the audit's filters read stay as they are).
    static func auditRow(_ entry: AuditEntry) -> AuditRow {
        let texts = [entry.before, entry.after, entry.command, entry.reason]
        guard let packed = TextPacking.pack(texts, .audit, context: auditContext(entry)) else { return AuditRow(entry: entry) }
        var stored = entry
        stored.before = nil
        stored.after = nil
        stored.command = ""
        stored.reason = nil
        return AuditRow(entry: stored, packed: packed)
    }

    static func auditEntry(_ row: AuditRow) throws(StoreError) -> AuditEntry {
        guard let packed = row.packed else { return row.entry }
        let texts = try unpack(
            packed, .audit, count: 4, context: auditContext(row.entry), "audit row \(row.entry.id)'s before/after")
        var entry = row.entry
        entry.before = texts[0]
        entry.after = texts[1]
        entry.command = texts[2] ?? ""
        entry.reason = texts[3]
        return entry
    }

    /// The audit row's values its JSON repeats: the row's key and its time (`createdAt`/`updatedAt`).
    private static func auditContext(_ entry: AuditEntry) -> [String?] { [entry.key, String(entry.at)] }

    // MARK: fact body

    /// The row to store for `fact`: its body packed when that is smaller, `body` then keeping only
    /// what ``StoreSQL/originalsByFactBody`` searches (``searchText(_:)``).
    static func factRow(_ fact: Fact, digest: String) -> FactRow {
        guard let packed = TextPacking.pack([fact.body], .factBody, context: factContext(fact)) else {
            return FactRow(fact: fact, digest: digest)
        }
        var stored = fact
        stored.body = searchText(fact.body)
        return FactRow(fact: stored, digest: digest, bodyPacked: packed)
    }

    static func fact(_ row: FactRow) throws(StoreError) -> Fact {
        guard let packed = row.bodyPacked else { return row.fact }
        var fact = row.fact
        fact.body = try unpack(packed, .factBody, count: 1, context: factContext(fact), "fact row \(row.id)'s body")[0] ?? ""
        return fact
    }

    /// The fact row's ids its body names.
    private static func factContext(_ fact: Fact) -> [String?] { [fact.key, fact.originalTransactionId] }

    /// Every `"appTransactionId":"…"` of a body (to the next quote), space-separated: a pattern
    /// `%"appTransactionId":"X"%` (X letters and digits) matches this text exactly when it matches
    /// the whole body, so the search stays one SQL statement over packed and unpacked rows alike.
    static func searchText(_ body: String) -> String {
        let key = Array(#""appTransactionId":""#.utf8)
        let bytes = Array(body.utf8)
        var found: [String] = []
        var i = 0
        while i + key.count <= bytes.count {
            guard bytes[i..<(i + key.count)].elementsEqual(key) else {
                i += 1
                continue
            }
            var end = i + key.count
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            guard end < bytes.count else { break }
            found.append(String(decoding: bytes[i...end], as: UTF8.self))
            i = end + 1
        }
        return found.joined(separator: " ")
    }

    private static func unpack(
        _ packed: [UInt8], _ kind: TextPacking.Kind, count: Int, context: [String?], _ what: String
    ) throws(StoreError) -> [String?] {
        do {
            return try TextPacking.unpack(packed, kind, count: count, context: context)
        } catch {
            throw .failure("\(what): \(error)")
        }
    }
}
