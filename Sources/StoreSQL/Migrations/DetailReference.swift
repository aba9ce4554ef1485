import IAPFoundation
import SubscriptionModel

/// A ledger detail kept as a reference to the audit rows of its changes (to keep the database small).
///
/// The detail of an applied item lists its changes (`order … created: no ∅ → …, status ∅ → paid;
/// contract … updated: expires_date … → …`), each the before/after its audit row records. Such a
/// detail is stored as a marker, the number of audit rows it lists (varint), with ``markerFrom``
/// the id of the first of them (varint), and the text after their summaries (UTF-8: `; ` and the
/// engine's notes, usually nothing); reading the row rebuilds the summaries from the first that
/// many audit rows of the ledger row (by id, from that id: no index on `ledger_id` needed, which
/// SQLite does not have; ``marker`` finds them by `ledger_id`, MySQL's foreign-key index). It is written only
/// when ``summaries(_:)`` of the audit rows rebuild the detail's beginning exactly, so the text read
/// back is always the text given. The summary format below is part of the stored format (frozen
/// here, not taken from the engine, whose wording may change): never change it, add a marker.
enum DetailReference {
    /// The first byte of a `detail_packed` that is a reference by `ledger_id` (``TextPacking``
    /// formats stay below 0x80).
    static let marker: UInt8 = 0x80
    /// The first byte of a reference that also gives the first audit row's id.
    static let markerFrom: UInt8 = 0x81

    /// What a stored reference says: how many audit rows, from which id (when it says), and the rest.
    struct Parsed {
        var count: Int
        var firstAuditId: Int64?
        var rest: ArraySlice<UInt8>
    }

    static func isReference(_ stored: [UInt8]) -> Bool { stored.first == marker || stored.first == markerFrom }

    /// Each entity's audited columns (column, JSON key of the audit row), in the order summaries list them.
    static let columns: [EntityKind: [(column: String, key: String)]] = [
        .order: [
            ("no", "no"), ("user_id", "userId"), ("product_id", "productId"), ("status", "status"),
            ("trade_no", "tradeNo"), ("origin_no", "originNo"), ("purchase_date", "purchaseDate"),
            ("expires_date", "expiresDate"), ("environment", "environment"), ("price", "price"), ("currency", "currency"),
        ],
        .contract: [
            ("contract_id", "contractId"), ("user_id", "userId"), ("product_id", "productId"), ("status", "status"),
            ("auto_renew", "autoRenew"), ("expires_date", "expiresDate"), ("environment", "environment"),
            ("next_product_id", "nextProductId"),
        ],
    ]

    /// The stored form of `detail`, or nil when it does not begin with the summaries of `audits`
    /// (followed by nothing or by `; `); `firstAuditId`: the id the first of them has (or gets).
    static func reference(_ detail: String, audits: [AuditEntry], firstAuditId: Int64? = nil) -> [UInt8]? {
        rest(of: detail, audits: audits).flatMap { encode(count: audits.count, firstAuditId: firstAuditId, rest: $0) }
    }

    /// What follows the summaries of `audits` in `detail` (empty, or `; ` and more), or nil when
    /// the detail does not begin with them.
    static func rest(of detail: String, audits: [AuditEntry]) -> [UInt8]? {
        // Compared as bytes: the stored text is the bytes (and String's prefix test is Unicode's).
        guard !audits.isEmpty, let listed = summaries(audits), detail.utf8.starts(with: listed.utf8) else { return nil }
        let rest = Array(detail.utf8.dropFirst(listed.utf8.count))
        guard rest.isEmpty || rest.starts(with: Array("; ".utf8)) else { return nil }
        return rest
    }

    /// A reference to `count` audit rows (from `firstAuditId` when given, which must be positive).
    static func encode(count: Int, firstAuditId: Int64?, rest: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = [firstAuditId == nil ? marker : markerFrom]
        LedgerPacking.appendVarint(&out, count)
        if let firstAuditId {
            guard firstAuditId > 0 else { return nil }
            LedgerPacking.appendVarint(&out, Int(firstAuditId))
        }
        return out + rest
    }

    /// The detail a reference stands for, from the ledger row's audit rows (oldest first; those of
    /// ``parse(_:)``'s count and first id).
    static func detail(_ stored: [UInt8], audits: [AuditEntry], row id: Int64) throws(StoreError) -> String {
        let parsed = try parse(stored)
        let (count, rest) = (parsed.count, parsed.rest)
        guard audits.count >= count, let listed = summaries(Array(audits.prefix(count))) else {
            throw .failure(
                "ledger row \(id)'s detail refers to \(count) audit rows of its changes, and they cannot be read "
                    + "(\(audits.count) found): run `iapctl doctor`")
        }
        return listed + String(decoding: rest, as: UTF8.self)
    }

    static func parse(_ stored: [UInt8]) throws(StoreError) -> Parsed {
        guard isReference(stored) else { throw .failure("a stored ledger detail is not a reference") }
        var offset = 1
        guard let count = TextPacking.varint(stored, &offset) else {
            throw .failure("a stored ledger detail reference is truncated")
        }
        var first: Int64?
        if stored[0] == markerFrom {
            guard let id = TextPacking.varint(stored, &offset) else {
                throw .failure("a stored ledger detail reference is truncated")
            }
            first = Int64(id)
        }
        return Parsed(count: count, firstAuditId: first, rest: stored[offset...])
    }

    /// The audit rows' summaries joined by `; `, or nil when one row's JSON is not a row this format reads.
    static func summaries(_ audits: [AuditEntry]) -> String? {
        var text = ""
        for audit in audits {
            if !text.isEmpty { text += "; " }
            guard appendSummary(audit, to: &text) else { return nil }
        }
        return text
    }

    /// Appends `order 3f2…: status pending → paid, trade_no ∅ → 2000…` (dates as ISO-8601 UTC,
    /// `auto_renew` as true/false) to `text`; false when the row's JSON is not a row this format reads.
    private static func appendSummary(_ audit: AuditEntry, to text: inout String) -> Bool {
        guard let columns = columns[audit.entity], let after = values(audit.after) else { return false }
        let before: Values?
        if let json = audit.before {
            guard let values = values(json) else { return false }
            before = values
        } else {
            before = nil
        }
        text += audit.entity.rawValue
        text += " "
        text += audit.key
        text += before == nil ? " created: " : " updated: "
        var first = true
        for (column, key) in columns {
            let new = after[key]
            let old = before?[key]
            if before == nil ? new == nil : old == new { continue }
            if !first { text += ", " }
            first = false
            text += column
            text += " "
            text += readable(column, old)
            text += " → "
            text += readable(column, new)
        }
        return true
    }

    /// A flat JSON object's members as the texts a column holds, in the object's order (a row has
    /// a dozen: found by a linear search, no dictionary of them).
    private struct Values {
        var members: [(key: String, text: String)] = []

        /// The last member named `key` (as a dictionary built in order keeps it).
        subscript(key: String) -> String? {
            members.last { $0.key == key }?.text
        }
    }

    /// A flat JSON object's members as the texts a column holds (numbers in decimal, booleans 1/0);
    /// nil when it is not one.
    private static func values(_ json: String?) -> Values? {
        guard let json, let value = try? JSONText.parse(json), case .object(let members) = value else { return nil }
        var out = Values()
        out.members.reserveCapacity(members.count)
        for (key, member) in members {
            switch member {
            case .null: continue
            case .string(let text): out.members.append((key, text))
            case .int(let number): out.members.append((key, String(number)))
            case .bool(let flag): out.members.append((key, flag ? "1" : "0"))
            case .double, .array, .object: return nil
            }
        }
        return out
    }

    private static func readable(_ column: String, _ value: String?) -> String {
        guard let value else { return "∅" }
        if column == "auto_renew" { return value == "1" ? "true" : value == "0" ? "false" : value }
        guard column.hasSuffix("_date"), let ms = Int64(value) else { return value }
        return Timestamp.iso8601(ms)
    }
}
