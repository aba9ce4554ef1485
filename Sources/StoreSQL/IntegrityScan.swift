import SubscriptionEngine

/// Every stored row checked as its readers check it (`doctor`'s integrity check): each ledger
/// row's digest and raw (the frame decodes and its checksum holds; a `raw_of` names a row that
/// holds a frame), each audit row's digest, each fact's digest, each contract snapshot's check
/// line. Rows are read in batches by id; nothing is written.
public enum IntegrityScan {
    /// One row that fails its check.
    public struct Finding: Sendable, Equatable {
        public let table: String
        public let id: Int64
        public let what: String
        /// The subscription of a fact or snapshot (nil for other rows).
        public let originalTransactionId: String?
    }

    /// How many rows of each table were checked, and what failed.
    public struct Report: Sendable {
        public var checked: [(table: String, rows: Int)] = []
        public var findings: [Finding] = []
    }

    static let batch: Int64 = 500

    /// Scans everything; run inside a read transaction of the store that owns `connection`.
    public static func run(_ connection: any SQLConnection) throws(StoreError) -> Report {
        var report = Report()
        var count = 0
        try each(connection, StoreTables.ledger.select("WHERE id > ? ORDER BY id LIMIT \(batch)")) {
            result throws(StoreError) in
            let rows = try StoreTables.ledger.decode(result)
            for row in rows {
                count += 1
                let id = row.entry.id
                guard RowDigest.ledger(row.entry, rawOf: row.rawOf, rawZstd: row.rawZstd) == row.rowDigest else {
                    report.findings.append(
                        Finding(table: "iap_ledger", id: id, what: "its fields do not match its row_digest", originalTransactionId: nil))
                    continue
                }
                if let first = row.rawOf {
                    let target = try connection.query("SELECT raw_zstd FROM iap_ledger WHERE id = ?", [.int(first)]).rows.first
                    if try target?.optionalBytes(0) == nil {
                        report.findings.append(
                            Finding(
                                table: "iap_ledger", id: id, what: "its raw_of names row \(first), which does not hold a raw",
                                originalTransactionId: nil))
                    }
                } else if let frame = row.rawZstd {
                    try ZstdCodec.requireLibrary()
                    if case .failure(let error) = ZstdCodec.rawContent(frame) {
                        report.findings.append(
                            Finding(
                                table: "iap_ledger", id: id, what: "its raw_zstd frame fails its check (\(error))",
                                originalTransactionId: nil))
                    }
                } else {
                    report.findings.append(
                        Finding(table: "iap_ledger", id: id, what: "it holds neither raw_zstd nor raw_of", originalTransactionId: nil))
                }
            }
            return rows.last?.entry.id
        }
        report.checked.append(("iap_ledger", count))
        count = 0
        try each(connection, StoreTables.audit.select("WHERE id > ? ORDER BY id LIMIT \(batch)")) { result throws(StoreError) in
            let rows = try StoreTables.audit.decode(result)
            for row in rows {
                count += 1
                if RowDigest.audit(row.entry) != row.rowDigest {
                    report.findings.append(
                        Finding(
                            table: "iap_audit", id: row.entry.id, what: "its fields do not match its row_digest", originalTransactionId: nil
                        ))
                }
            }
            return rows.last?.entry.id
        }
        report.checked.append(("iap_audit", count))
        count = 0
        try each(connection, StoreTables.facts.select("WHERE id > ? ORDER BY id LIMIT \(batch)")) { result throws(StoreError) in
            let rows = try StoreTables.facts.decode(result)
            for row in rows {
                count += 1
                if FactDigest.of(row.fact) != row.digest {
                    report.findings.append(
                        Finding(
                            table: "iap_facts", id: row.id, what: "its fields do not match its digest",
                            originalTransactionId: row.fact.originalTransactionId))
                }
            }
            return rows.last?.id
        }
        report.checked.append(("iap_facts", count))
        count = 0
        try each(
            connection,
            "SELECT id, contract_id, snapshot, (SELECT count(*) FROM iap_facts f WHERE f.original_transaction_id = c.contract_id), "
                + "(SELECT coalesce(max(f.id), 0) FROM iap_facts f WHERE f.original_transaction_id = c.contract_id) "
                + "FROM member_contracts c WHERE snapshot IS NOT NULL AND id > ? ORDER BY id LIMIT \(batch)"
        ) { result throws(StoreError) in
            for row in result.rows {
                count += 1
                let stored = try row.optionalText(2) ?? ""
                if ContractSnapshotCheck.text(of: stored, facts: (try row.int(3), try row.int(4))) == nil {
                    report.findings.append(
                        Finding(
                            table: "member_contracts", id: try row.int(0),
                            what: "its snapshot does not match its check line or its facts (it is not used)",
                            originalTransactionId: try row.text(1)))
                }
            }
            return try result.rows.last?.int(0)
        }
        report.checked.append(("member_contracts snapshots", count))
        return report
    }

    /// Runs `select` (one placeholder: the id to start after) until `body` returns nil (no rows).
    private static func each(
        _ connection: any SQLConnection, _ select: String, _ body: (SQLResult) throws(StoreError) -> Int64?
    ) throws(StoreError) {
        var after: Int64 = 0
        while let last = try body(connection.query(select, [.int(after)])) { after = last }
    }
}
