import Foundation
import SQLiteStore
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import StoreSQL

/// A record you can read and trust: ledger details, audit rows and fact bodies are stored
/// plain (what SELECT shows), a ledger raw as one standard zstd frame; every value reads back as it
/// was written, and a database in the former forms (schema v9, made here at test time with the
/// former writers) is converted by schema v10 and reads back identical, on every backend.
@Suite("Store contract: readable stored forms and their migration")
struct PackedTextsTests {
    static let order = "7c1f3a52-1d1e-4bd1-9a55-3f0e2b9d8c11"
    static let orderInsert = AuditEntry(
        at: 1_796_177_619_175, actor: "engine", command: "notify", reason: "DID_RENEW", entity: .order, key: order,
        before: nil,
        after: #"{"createdAt":1796177619175,"currency":"USD","environment":"Sandbox","expiresDate":1738281800000,"id":201,"#
            + #""no":"\#(order)","originNo":"2000000000000200","price":9990,"productId":"com.example.app.monthly","#
            + #""purchaseDate":1735689800000,"status":"paid","tradeNo":"2000000000000399","updatedAt":1796177619175,"#
            + #""userId":"user-200"}"#)
    static let contractUpdate = AuditEntry(
        at: 1_796_177_619_175, actor: "engine", command: "notify", reason: "DID_RENEW", entity: .contract,
        key: "2000000000000200",
        before: #"{"autoRenew":true,"contractId":"2000000000000200","createdAt":1796177619156,"environment":"Sandbox","#
            + #""expiresDate":1738281799000,"id":200,"lastEventDate":1735689804000,"productId":"com.example.app.monthly","#
            + #""status":"active","updatedAt":1796177619156,"userId":"user-200"}"#,
        after: #"{"autoRenew":false,"contractId":"2000000000000200","createdAt":1796177619156,"environment":"Sandbox","#
            + #""expiresDate":1740960199000,"id":200,"lastEventDate":1738281804000,"productId":"com.example.app.monthly","#
            + #""status":"active","updatedAt":1796177619175,"userId":"user-200"}"#)
    /// What the engine writes for those two changes (Change.summary, joined by "; ").
    static let appliedDetail =
        "order \(order) created: no ∅ → \(order), user_id ∅ → user-200, product_id ∅ → com.example.app.monthly, "
        + "status ∅ → paid, trade_no ∅ → 2000000000000399, origin_no ∅ → 2000000000000200, purchase_date ∅ → "
        + "2025-01-01T00:03:20Z, expires_date ∅ → 2025-01-31T00:03:20Z, environment ∅ → Sandbox, price ∅ → 9990, "
        + "currency ∅ → USD; contract 2000000000000200 updated: auto_renew true → false, expires_date "
        + "2025-01-31T00:03:19Z → 2025-03-03T00:03:19Z"

    static func ledger(_ detail: String?, uuid: String) -> LedgerEntry {
        LedgerEntry(
            receivedAt: 1_796_177_619_175, source: .apple, notificationUUID: uuid, notificationType: "DID_RENEW",
            transactionId: "2000000000000399", originalTransactionId: "2000000000000200", appAccountToken: order,
            signedDate: 1_735_689_804_000, verdict: .applied, detail: detail, raw: "raw of \(uuid)")
    }

    static let facts: [Fact] = [
        Fact(
            kind: .transaction, key: "2000000000000399", originalTransactionId: "2000000000000200",
            signedDate: 1_738_281_804_000, source: .apple,
            body: #"{"appAccountToken":"\#(order)","appTransactionId":"705Ab3","currency":"USD","environment":"Sandbox","#
                + #""expiresDate":1740960199000,"inAppOwnershipType":"PURCHASED","isFromReceipt":false,"#
                + #""originalPurchaseDate":1735689799000,"originalTransactionId":"2000000000000200","price":9990,"#
                + #""productId":"com.example.app.monthly","purchaseDate":1738281799000,"transactionId":"2000000000000399","#
                + #""transactionReason":"RENEWAL","type":"Auto-Renewable Subscription"}"#),
        Fact(
            kind: .renewal, key: "2000000000000200", originalTransactionId: "2000000000000200",
            signedDate: 1_738_281_804_000, source: .apple,
            body: #"{"autoRenewProductId":"com.example.app.monthly","autoRenewStatus":1,"#
                + #""productId":"com.example.app.monthly","renewalDate":1740960199000}"#),
        Fact(
            kind: .notification, key: "2000000000000200", originalTransactionId: "2000000000000200",
            signedDate: 1_738_281_804_000, source: .apple,
            body: #"{"notificationType":"DID_RENEW","status":1,"transactionId":"2000000000000399"}"#),
        // A short body, and one with non-ASCII text, escapes and the fact's own ids (every body is one
        // a transaction can have: the fact-body migration refuses any other).
        Fact(
            kind: .transaction, key: "t-4", originalTransactionId: "o-4", signedDate: 43, source: .restore,
            body: #"{"isFromReceipt":false,"originalTransactionId":"o-4","productId":"p","transactionId":"t-4"}"#),
        Fact(
            kind: .transaction, key: "t-5", originalTransactionId: "o-5", signedDate: 44, source: .client,
            body: #"{"appTransactionId":"705Ab3","isFromReceipt":false,"offerIdentifier":"été € \u0001\u0001 a\/b","#
                + #""originalTransactionId":"o-5","productId":"t-5 o-5 t-5","transactionId":"t-5"}"#),
    ]

    /// Writes every kind of row; returns the ledger ids and the audit ids written.
    static func writeRows(_ store: any Store) throws -> (ledger: [Int64], audit: [Int64]) {
        try store.write { s throws in
            var ledger: [Int64] = []
            // An applied item's detail that lists its audit rows' changes, alone and with a note.
            ledger.append(try s.appendLedger(Self.ledger(appliedDetail, uuid: "n-1"), audits: [orderInsert, contractUpdate]))
            ledger.append(
                try s.appendLedger(
                    Self.ledger(appliedDetail + "; order x was created for a; Apple charged for b", uuid: "n-2"),
                    audits: [orderInsert, contractUpdate]))
            // Details that are not (only) the changes: packed text, or kept as it is.
            ledger.append(try s.appendLedger(Self.ledger("x" + appliedDetail, uuid: "n-3"), audits: [orderInsert]))
            ledger.append(try s.appendLedger(Self.ledger("no change: contract 2000000000000200 is already active", uuid: "n-4")))
            ledger.append(try s.appendLedger(Self.ledger(nil, uuid: "n-5")))
            ledger.append(try s.appendLedger(Self.ledger("ok", uuid: "n-6")))
            var audit: [Int64] = []
            var odd = contractUpdate
            odd.before = "not json \u{1} ✓"
            odd.reason = nil
            odd.ticket = "T-1"
            audit.append(try s.appendAudit(odd))
            var small = orderInsert
            small.after = "{}"
            small.command = "orders update"
            audit.append(try s.appendAudit(small))
            for fact in facts { #expect(try s.insertFact(fact)) }
            return (ledger, audit)
        }
    }

    @Test(arguments: StoreBackend.available)
    func everyValueReadsBackAndIsStoredPlain(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.writeRows(store)
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            try store.read { s throws in
                #expect(
                    try s.ledger(transactionIds: ["2000000000000399"], originalTransactionIds: [], appAccountTokens: []).map(\.detail)
                        == [
                            Self.appliedDetail, Self.appliedDetail + "; order x was created for a; Apple charged for b",
                            "x" + Self.appliedDetail, "no change: contract 2000000000000200 is already active", nil, "ok",
                        ])
                #expect(try s.ledgerEntry(id: ids.ledger[2])?.raw == "raw of n-3")
                let audits = try s.audit(entity: .order, key: Self.order)
                #expect(audits.map(\.after) == [Self.orderInsert.after, Self.orderInsert.after, Self.orderInsert.after, "{}"])
                #expect(audits.first?.command == "notify" && audits.first?.reason == "DID_RENEW")
                #expect(try s.facts(originalTransactionId: "2000000000000200").map(\.body) == Self.facts.prefix(3).map(\.body))
                #expect(try s.originalTransactionIds(appTransactionId: "705Ab3") == ["2000000000000200", "o-5"])
                #expect(try s.originalTransactionIds(appTransactionId: "705Ab") == [])
            }
            // What SELECT shows: the texts themselves; the raw one zstd frame (magic 28 B5 2F FD).
            try store.read { _ in
                let audit = try connection.query(
                    "SELECT actor, command, reason, before_json, after_json, row_digest FROM iap_audit WHERE id = ?", [.int(2)]
                ).rows[0]
                #expect(try audit.text(1) == "notify" && audit.optionalText(2) == "DID_RENEW")
                #expect(try audit.optionalText(3) == Self.contractUpdate.before && audit.optionalText(4) == Self.contractUpdate.after)
                #expect(try audit.text(5) == RowDigest.audit(Self.contractUpdate.withLedger(ids.ledger[0])))
                let ledger = try connection.query(
                    "SELECT detail, raw_zstd, row_digest FROM iap_ledger WHERE id = ?", [.int(ids.ledger[0])]
                ).rows[0]
                #expect(try ledger.optionalText(0) == Self.appliedDetail)
                let frame = try #require(try ledger.optionalBytes(1))
                #expect(Array(frame.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
                #expect(try ZstdCodec.rawContent(frame).get() == Array("raw of n-1".utf8))
                #expect(try ledger.text(2).utf8.count == 64)
                let bodies = try connection.query("SELECT body, digest FROM iap_facts ORDER BY id", []).rows
                #expect(try bodies.map { try $0.text(0) } == Self.facts.map(\.body))
                #expect(try bodies.map { try $0.text(1) } == Self.facts.map(FactDigest.of))
            }
        }
    }

    /// A database of schema v9 holding every former form, made from a migrated store: the
    /// columns and the chain table v10 drops put back, v10's own dropped, its version forgotten.
    static func makeV9(_ store: any Store, _ backend: StoreBackend) throws {
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        let (text, bytes) =
            switch backend {
            case .sqlite: ("TEXT", "BLOB")
            case .mysql: ("MEDIUMTEXT", "MEDIUMBLOB")
            case .postgres: ("TEXT", "BYTEA")
            }
        let chains =
            switch backend {
            case .sqlite: "CREATE TABLE iap_ledger_chains (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, chain BLOB NOT NULL)"
            case .mysql:
                "CREATE TABLE iap_ledger_chains (id BIGINT NOT NULL AUTO_INCREMENT, digest VARBINARY(32) NOT NULL, "
                    + "chain MEDIUMBLOB NOT NULL, PRIMARY KEY (id), UNIQUE KEY uq_iap_ledger_chains_digest (digest))"
            case .postgres:
                "CREATE TABLE iap_ledger_chains (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                    + "digest BYTEA NOT NULL, chain BYTEA NOT NULL, CONSTRAINT uq_iap_ledger_chains_digest UNIQUE (digest))"
            }
        for statement in [
            "ALTER TABLE iap_ledger ADD COLUMN raw \(text) NOT NULL" + (backend == .mysql ? "" : " DEFAULT ''"),
            "ALTER TABLE iap_ledger ADD COLUMN raw_packed \(bytes) NULL",
            "ALTER TABLE iap_ledger ADD COLUMN detail_packed \(bytes) NULL",
            "ALTER TABLE iap_audit ADD COLUMN packed \(bytes) NULL",
            "ALTER TABLE iap_facts ADD COLUMN body_packed \(bytes) NULL",
            chains,
            "ALTER TABLE iap_ledger DROP COLUMN raw_zstd", "ALTER TABLE iap_ledger DROP COLUMN row_digest",
            "ALTER TABLE iap_audit DROP COLUMN row_digest",
        ] {
            try connection.execute(statement)
        }
        // Later migrations' tables go too: the database is as schema v9 left it.
        try connection.execute("DROP TABLE IF EXISTS iap_grants")
        try connection.execute("DROP TABLE IF EXISTS iap_customer_notes")
        try connection.execute("DROP TABLE IF EXISTS iap_refund_answers")
        try store.write { _ in _ = try connection.run("DELETE FROM iap_schema_migrations WHERE version >= 10", []) }
    }

    /// Rows of every former form, written as schema v9 wrote them (the former writers): the values
    /// they stand for, as the session must read them back after the migration.
    static func writeV9Rows(_ store: any Store) throws -> [String] {
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        var expected: [String] = []
        let replay = LedgerRawTests.replay
        try store.write { _ in
            func insertLedger(_ entry: LedgerEntry, raw: String, packed: [UInt8]?, rawOf: Int64?, detailPacked: [UInt8]?)
                throws -> Int64
            {
                try connection.run(
                    "INSERT INTO iap_ledger (received_at, source, notification_uuid, transaction_id, original_transaction_id, "
                        + "app_account_token, verdict, detail, raw, raw_packed, raw_of, detail_packed) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        .int(entry.receivedAt), .text(entry.source.rawValue), SQLValue(entry.notificationUUID),
                        SQLValue(entry.transactionId), SQLValue(entry.originalTransactionId), SQLValue(entry.appAccountToken),
                        .text(entry.verdict.rawValue), SQLValue(entry.detail), .text(raw), packed.map(SQLValue.bytes) ?? .null,
                        SQLValue(rawOf), detailPacked.map(SQLValue.bytes) ?? .null,
                    ]
                ).insertId
            }
            func insertChains(_ packed: LedgerPacking.Packed) throws {
                for chain in packed.chains {
                    let known = try connection.query("SELECT 1 FROM iap_ledger_chains WHERE digest = ?", [.bytes(chain.digest)])
                    if known.rows.isEmpty {
                        _ = try connection.run(
                            "INSERT INTO iap_ledger_chains (digest, chain) VALUES (?, ?)", [.bytes(chain.digest), .bytes(chain.text)])
                    }
                }
            }
            func line(_ id: Int64, _ entry: LedgerEntry, _ raw: String) -> String {
                "ledger \(id) \(entry.verdict.rawValue) \(entry.detail ?? "∅") \(entry.notificationUUID ?? "∅") \(raw)"
            }
            // Raws packed in format versions 3 (no context), 2 and 1 (made by the former encoder).
            for (k, item) in replay[0..<9].enumerated() {
                var entry = LedgerRawTests.entry(item, verdict: .applied)
                entry.detail = "detail \(k) of \(item.uuid ?? "")"
                let packed = try #require(LedgerPacking.pack(item.raw))
                try insertChains(packed)
                var bytes = packed.bytes
                if k % 3 != 0 { bytes = try LegacyLedgerWriter.legacy(bytes, text: item.raw, version: UInt8(k % 3)) }
                let detail = TextPacking.pack([entry.detail], .detail, context: [item.uuid, "t", nil, nil])
                let id = try insertLedger(entry, raw: "", packed: bytes, rawOf: nil, detailPacked: detail)
                _ = try connection.run("UPDATE iap_ledger SET detail = NULL WHERE id = ? AND detail_packed IS NOT NULL", [.int(id)])
                entry.detail = "detail \(k) of \(item.uuid ?? "")"
                expected.append(line(id, entry, item.raw))
                // A re-delivery of the same bytes: by reference.
                if k == 0 {
                    let again = try insertLedger(entry, raw: "", packed: nil, rawOf: id, detailPacked: nil)
                    expected.append(line(again, entry, item.raw))
                }
            }
            // Version 4: the row's own notification UUID referred to inside the packed raw.
            for item in replay[20..<23] {
                let uuid = try #require(Self.notificationUUID(of: item.raw))
                let entry = LedgerRawTests.entry((uuid, item.raw), verdict: .unmatched)
                let packed = try #require(LedgerPacking.pack(item.raw, context: [uuid, "t", nil, nil]))
                #expect(packed.bytes.first == 4)
                try insertChains(packed)
                let id = try insertLedger(entry, raw: "", packed: packed.bytes, rawOf: nil, detailPacked: nil)
                expected.append(line(id, entry, item.raw))
            }
            // Raws kept as text (not a JWS), and one with non-ASCII text.
            for item in replay.suffix(5) {
                let entry = LedgerRawTests.entry(item, verdict: .rejected)
                let id = try insertLedger(entry, raw: item.raw, packed: nil, rawOf: nil, detailPacked: nil)
                expected.append(line(id, entry, item.raw))
            }
            // An applied item's detail as a reference to its audit rows (packed audit rows).
            for (k, note) in ["", "; order x was created for a"].enumerated() {
                var entry = Self.ledger(Self.appliedDetail + note, uuid: "ref-\(k)")
                let id = try insertLedger(entry, raw: entry.raw, packed: nil, rawOf: nil, detailPacked: nil)
                var auditIds: [Int64] = []
                for audit in [Self.orderInsert, Self.contractUpdate] {
                    let packed = try #require(
                        TextPacking.pack(
                            [audit.before, audit.after, audit.command, audit.reason], .audit, context: [audit.key, String(audit.at)]))
                    auditIds.append(
                        try connection.run(
                            "INSERT INTO iap_audit (at, actor, command, reason, ticket, entity, entity_key, before_json, after_json, "
                                + "ledger_id, packed) VALUES (?, ?, '', NULL, NULL, ?, ?, NULL, NULL, ?, ?)",
                            [
                                .int(audit.at), .text(audit.actor), .text(audit.entity.rawValue), .text(audit.key), .int(id),
                                .bytes(packed),
                            ]
                        ).insertId)
                }
                let reference = try #require(
                    DetailReference.reference(
                        entry.detail!, audits: [Self.orderInsert, Self.contractUpdate], firstAuditId: k == 0 ? auditIds[0] : nil))
                _ = try connection.run(
                    "UPDATE iap_ledger SET detail = NULL, detail_packed = ? WHERE id = ?", [.bytes(reference), .int(id)])
                entry.raw = "raw of ref-\(k)"
                expected.append(line(id, entry, entry.raw))
                for (auditId, audit) in zip(auditIds, [Self.orderInsert, Self.contractUpdate]) {
                    expected.append(Self.auditLine(auditId, audit.withLedger(id)))
                }
            }
            // An audit row kept plain (it did not pack).
            var odd = Self.contractUpdate
            odd.before = "not json \u{1} ✓"
            odd.after = nil
            odd.ticket = "T-1"
            let oddId = try connection.run(
                "INSERT INTO iap_audit (at, actor, command, reason, ticket, entity, entity_key, before_json, after_json) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                [
                    .int(odd.at), .text(odd.actor), .text(odd.command), SQLValue(odd.reason), SQLValue(odd.ticket),
                    .text(odd.entity.rawValue), .text(odd.key), SQLValue(odd.before),
                ]
            ).insertId
            expected.append(Self.auditLine(oddId, odd))
            // Facts: bodies packed (the body column then only the search text), one kept, one digest in hex.
            for (k, fact) in Self.facts.enumerated() {
                let packed = TextPacking.pack([fact.body], .factBody, context: [fact.key, fact.originalTransactionId])
                let digest = k == 3 ? Self.hex(FactDigest.of(fact)) : FactDigest.of(fact)
                _ = try connection.run(
                    "INSERT INTO iap_facts (kind, fact_key, original_transaction_id, signed_date, source, digest, body, body_packed) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(fact.kind.rawValue), .text(fact.key), .text(fact.originalTransactionId), .int(fact.signedDate),
                        .text(fact.source.rawValue), .text(digest), .text(packed == nil ? fact.body : "search text"),
                        packed.map(SQLValue.bytes) ?? .null,
                    ])
            }
            expected += Set(Self.facts.map(\.originalTransactionId)).sorted().flatMap { original in
                Self.facts.filter { $0.originalTransactionId == original }.sorted { $0.signedDate < $1.signedDate }.map(\.identity)
            }
        }
        return expected
    }

    static func auditLine(_ id: Int64, _ entry: AuditEntry) -> String {
        "audit \(id) \(entry.actor) \(entry.command) \(entry.reason ?? "∅") \(entry.before ?? "∅") \(entry.after ?? "∅") "
            + "\(entry.ledgerId ?? 0) \(entry.ticket ?? "∅")"
    }

    /// Every ledger row, audit row and fact as the session reads them, in the lines of ``writeV9Rows(_:)``.
    static func readBack(_ store: any Store, _ expected: [String]) throws -> [String] {
        try store.read { s throws in
            var out: [String] = []
            for line in expected {
                let parts = line.split(separator: " ", maxSplits: 2)
                if parts[0] == "ledger", let id = Int64(parts[1]) {
                    let e = try #require(try s.ledgerEntry(id: id))
                    out.append("ledger \(id) \(e.verdict.rawValue) \(e.detail ?? "∅") \(e.notificationUUID ?? "∅") \(e.raw)")
                } else if parts[0] == "audit", let id = Int64(parts[1]) {
                    out.append(Self.auditLine(id, try #require(try s.auditEntry(id: id))))
                }
            }
            for original in Set(facts.map(\.originalTransactionId)).sorted() {
                out += try s.facts(originalTransactionId: original).map(\.identity)
            }
            return out
        }
    }

    /// A base64url digest as the 32 hex digits schema v7 stored.
    static func hex(_ base64: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var bits = 0
        var count = 0
        var bytes: [UInt8] = []
        for c in base64.utf8 {
            bits = bits << 6 | alphabet.firstIndex(of: c)!
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8(bits >> count & 0xFF))
            }
        }
        return bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }

    static func notificationUUID(of jws: String) -> String? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var b64 = parts[1].replacing("-", with: "+").replacing("_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: String(b64)) else { return nil }
        let payload = String(decoding: data, as: UTF8.self)
        guard let range = payload.firstRange(of: #""notificationUUID":""#) else { return nil }
        return String(payload[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test(arguments: StoreBackend.available)
    func aDatabaseInTheFormerFormsIsConvertedAndReadsBackIdentical(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            try Self.makeV9(store, backend)
            let expected = try Self.writeV9Rows(store)
            #expect(try store.migrate() == StoreSchema.migrations.filter { $0.version >= 10 }.map(\.name))
            #expect(try Self.readBack(store, expected) == expected)
            try store.read { _ in
                for (table, column) in [
                    ("iap_ledger", "raw"), ("iap_ledger", "raw_packed"), ("iap_ledger", "detail_packed"), ("iap_audit", "packed"),
                    ("iap_facts", "body_packed"), ("iap_ledger_chains", "chain"),
                ] {
                    #expect(try !StoredFormConversion.hasColumn(connection, table, column), "\(table).\(column) dropped")
                }
                // Plain in SQL: the reference's audit rows, the facts' bodies.
                let audit = try connection.query("SELECT command, reason, after_json FROM iap_audit ORDER BY id LIMIT 1", []).rows[0]
                #expect(try audit.text(0) == "notify" && audit.optionalText(1) == "DID_RENEW")
                #expect(try audit.optionalText(2) == Self.orderInsert.after)
                let bodies = try connection.query("SELECT body FROM iap_facts ORDER BY id", []).rows
                #expect(try bodies.map { try $0.text(0) } == Self.facts.map(\.body))
            }
            // Run again (as after an interruption): nothing left to convert, nothing changes.
            try store.write { _ in try StoredFormConversion.run(connection, afterBatch: {}) }
            #expect(try Self.readBack(store, expected) == expected)
            #expect(try store.write { try $0.insertFact(Self.facts[3]) } == false, "found under its converted digest")
        }
    }

    /// The built iapctl (`swift build` first).
    static let iapctl = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/iapctl")

    /// Rows of format versions 1 and 2 are checked with zlib's crc32 when schema v10 converts them:
    /// run by the built iapctl with an empty libz.so.1 found first (LD_LIBRARY_PATH), the migration
    /// is refused naming the library and the package (exit 69), no row is taken for corrupt (65),
    /// and the version is not recorded; with zlib the same database converts.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: iapctl.path), "build iapctl first"))
    func withoutZlibTheConversionOfOldRowsIsRefusedByName() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iapctl-zlib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("lib"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("v9.db").path
        do {
            let store = try SQLiteStore(path: path, create: true)
            _ = try store.migrate()
            try Self.makeV9(store, .sqlite)
            _ = try Self.writeV9Rows(store)
        }
        FileManager.default.createFile(atPath: dir.appendingPathComponent("lib/libz.so.1").path, contents: Data())
        func dbInit(_ environment: [String: String]) throws -> (status: Int32, stderr: String) {
            let process = Process()
            process.executableURL = Self.iapctl
            process.arguments = ["db", "init", "-q", "--db", path]
            process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let refused = try dbInit(["LD_LIBRARY_PATH": dir.appendingPathComponent("lib").path])
        #expect(refused.status == 69, "\(refused)")
        #expect(refused.stderr.contains("error: libz.so.1 cannot be loaded ("), "\(refused)")
        #expect(refused.stderr.contains("): apt-get install --reinstall zlib1g"), "\(refused)")
        #expect(try SQLiteStore(path: path, create: false).schemaVersion().current == 9, "the version is not recorded")

        let converted = try dbInit([:])
        #expect(converted.status == 0, "\(converted)")
        #expect(try SQLiteStore(path: path, create: false).schemaVersion().current > 9)
    }

    @Test(arguments: StoreBackend.available)
    func aChainThatDoesNotMatchItsDigestRefusesTheMigration(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            try Self.makeV9(store, backend)
            _ = try Self.writeV9Rows(store)
            let chainId = try store.read { _ in try connection.query("SELECT min(id) FROM iap_ledger_chains", []).rows[0].int(0) }
            try store.write { _ in
                let chain = try #require(
                    try connection.query("SELECT chain FROM iap_ledger_chains WHERE id = ?", [.int(chainId)]).rows[0].optionalBytes(0))
                var flipped = chain
                flipped[flipped.count / 2] ^= 0x01
                _ = try connection.run("UPDATE iap_ledger_chains SET chain = ? WHERE id = ?", [.bytes(flipped), .int(chainId)])
            }
            let error = expectStoreError(.corrupt) { _ = try store.migrate() }
            #expect(error == .corrupt(table: "iap_ledger_chains", id: chainId, what: "its chain does not match its SHA-256 digest"))
            #expect(try store.schemaVersion().current == 9, "the version is not recorded")
        }
    }
}

extension AuditEntry {
    func withLedger(_ id: Int64) -> AuditEntry {
        var entry = self
        entry.ledgerId = id
        return entry
    }
}

/// An event's audit rows are written together (up to 8 in one INSERT); more than 8 are
/// split, and every row reads back in order with its ledger row's id.
@Suite("Store contract: an event's audit rows written together")
struct AuditRowsTogetherTests {
    @Test(arguments: StoreBackend.available)
    func elevenAuditRowsOfOneLedgerRowReadBackInOrder(backend: StoreBackend) throws {
        let audits = (0..<11).map { (k: Int) -> AuditEntry in
            let entity: EntityKind = k % 2 == 0 ? .order : .contract
            let before: String? = k == 0 ? nil : "{\"k\":\(k - 1)}"
            let at: Int64 = 1_796_177_619_000 + Int64(k)
            return AuditEntry(
                at: at, actor: "engine", command: "notify", reason: "DID_RENEW", entity: entity, key: "key-\(k)",
                before: before, after: "{\"k\":\(k)}")
        }
        try withStore(backend) { store in
            // A detail that is not the audit rows' summary: stored as text, the rows' ids unneeded.
            let id = try store.write { try $0.appendLedger(PackedTextsTests.ledger("applied", uuid: "n-11"), audits: audits) }
            try store.read { s throws in
                let read = try s.auditEntries(matching: AuditFilter()).reversed()
                #expect(read.map(\.key) == audits.map(\.key))
                #expect(read.map(\.after) == audits.map(\.after))
                #expect(read.map(\.before) == audits.map(\.before))
                #expect(read.map(\.at) == audits.map(\.at))
                #expect(read.allSatisfy { $0.ledgerId == id })
                #expect(try s.ledgerEntry(id: id)?.detail == "applied")
            }
        }
    }
}
