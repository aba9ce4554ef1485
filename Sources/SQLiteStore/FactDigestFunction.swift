internal import CSQLite
import StoreSQL
import SubscriptionModel

extension Database {
    /// The SQL function `iapctl_fact_digest(kind, fact_key, original_transaction_id, signed_date,
    /// source, body)`: a stored fact's digest exactly as iapctl computes it (``FactDigest``), for
    /// the migration that recomputes the facts' digests (SQLite has no SHA-256 of its own).
    func registerFactDigestFunction() throws(StoreError) {
        let rc = sqlite3_create_function_v2(
            handle, "iapctl_fact_digest", 6, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, values in
                guard let values, count == 6 else { return sqlite3_result_error(context, "iapctl_fact_digest takes 6 values", -1) }
                func text(_ index: Int) -> String {
                    guard let bytes = sqlite3_value_text(values[index]) else { return "" }
                    return String(
                        decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(values[index]))), as: UTF8.self)
                }
                guard let kind = Fact.Kind(rawValue: text(0)), let source = EventSource(rawValue: text(4)) else {
                    let why = "iap_facts row \(text(1)) has kind '\(text(0))' and source '\(text(4))': not a fact iapctl wrote"
                    return sqlite3_result_error(context, why, -1)
                }
                let fact = Fact(
                    kind: kind, key: text(1), originalTransactionId: text(2), signedDate: sqlite3_value_int64(values[3]),
                    source: source, body: text(5))
                sqlite3_result_text(context, FactDigest.of(fact), -1, iapctl_sqlite_transient())
            }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteError.make(rc, db: handle, sql: nil) }
    }
}
