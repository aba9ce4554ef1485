import SubscriptionModel

/// Schema v12's data step (``SchemaStep/rewriteFactBodies``), the same Swift code on every backend:
/// every fact body in the one shape ``FactBody`` writes and reads.
///
/// Each row is checked against its digest first (a row that fails is corrupt, as on every read),
/// then its body read in this or an earlier shape (``FactBody/canonical(_:_:key:)``) and written
/// again. A body already in the one shape is left as it is. One of an earlier shape gets the
/// canonical body and the digest of the fact with it; when the store already holds that fact (it
/// was received again after the shape changed), the row is the same fact twice and is deleted. The
/// subscription's contract snapshot is cleared, so the engine next decides from every fact. A body
/// that cannot be read refuses the migration, naming the row and the member
/// (``StoreError/corrupt(table:id:what:)``); it runs inside the migration's transaction, so
/// nothing is half-written, and running it again finds nothing left to do.
public enum FactBodyConversion {
    static let batch = 500

    /// What the step did: rows rewritten, and rows deleted as a copy of a fact already stored.
    public struct Counts: Equatable, Sendable {
        public var rewritten = 0
        public var duplicates = 0
    }

    @discardableResult
    public static func run(_ connection: any SQLConnection) throws(StoreError) -> Counts {
        var counts = Counts()
        var after: Int64 = 0
        while true {
            let rows = try connection.query(
                "SELECT id, kind, fact_key, original_transaction_id, signed_date, source, digest, body FROM iap_facts "
                    + "WHERE id > ? ORDER BY id LIMIT \(batch)", [.int(after)]
            ).rows
            for row in rows {
                let id = try row.int(0)
                after = id
                guard let kind = Fact.Kind(rawValue: try row.text(1)), let source = EventSource(rawValue: try row.text(5)) else {
                    throw .corrupt(table: "iap_facts", id: id, what: "its kind or source is not one iapctl writes")
                }
                var fact = Fact(
                    kind: kind, key: try row.text(2), originalTransactionId: try row.text(3), signedDate: try row.int(4),
                    source: source, body: try row.text(7))
                guard try row.text(6) == FactDigest.of(fact) else {
                    throw .corrupt(table: "iap_facts", id: id, what: "its body does not match its digest")
                }
                let canonical: String
                do {
                    canonical = try FactBody.canonical(kind, fact.body, key: fact.key)
                } catch {
                    throw .corrupt(table: "iap_facts", id: id, what: "\(error), so it cannot be rewritten in the one stored shape")
                }
                guard canonical != fact.body else { continue }
                fact.body = canonical
                let digest = FactDigest.of(fact)
                let stored = try connection.query(
                    "SELECT id FROM iap_facts WHERE fact_key = ? AND digest = ? AND id <> ?", [.text(fact.key), .text(digest), .int(id)]
                ).rows
                if stored.isEmpty {
                    _ = try connection.run(
                        "UPDATE iap_facts SET body = ?, digest = ? WHERE id = ?", [.text(canonical), .text(digest), .int(id)])
                    counts.rewritten += 1
                } else {
                    _ = try connection.run("DELETE FROM iap_facts WHERE id = ?", [.int(id)])
                    counts.duplicates += 1
                }
                _ = try connection.run(
                    "UPDATE member_contracts SET snapshot = NULL WHERE contract_id = ?", [.text(fact.originalTransactionId)])
            }
            if rows.count < batch { return counts }
        }
    }
}
