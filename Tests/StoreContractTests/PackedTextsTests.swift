import StoreSQL
import SubscriptionEngine
import Testing

/// Issue 25, database size: ledger details, audit before/after (with command and reason) and fact
/// bodies are stored packed, an applied item's detail as a reference to its audit rows; every value
/// reads back as it was written, and a database in the former format (made here, at test time)
/// is converted by the schema-v8 migration and reads back identical, on every backend.
@Suite("Store contract: packed texts and their migration")
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
        // Too short to pack, and a body with the escape byte and non-ASCII text.
        Fact(kind: .transaction, key: "t-4", originalTransactionId: "o-4", signedDate: 43, source: .restore, body: "{}"),
        Fact(
            kind: .transaction, key: "t-5", originalTransactionId: "o-5", signedDate: 44, source: .client,
            body: #"{"offerName":"été € \#u{1}\#u{1}","productId":"t-5 o-5 t-5","appTransactionId":"x","#
                + #""appTransactionId":"705Ab3"}"#),
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

    /// Every row as the session reads it.
    static func readRows(_ store: any Store, _ ids: (ledger: [Int64], audit: [Int64])) throws -> [String] {
        try store.read { s throws in
            var out: [String] = []
            for id in ids.ledger {
                let entry = try #require(try s.ledgerEntry(id: id))
                out.append("ledger \(id) \(entry.detail ?? "∅") \(entry.raw)")
            }
            for id in (1...5).map(Int64.init) + ids.audit {
                let entry = try #require(try s.auditEntry(id: id))
                out.append(
                    "audit \(id) \(entry.command) \(entry.reason ?? "∅") \(entry.before ?? "∅") \(entry.after ?? "∅") "
                        + "\(entry.ledgerId ?? 0) \(entry.ticket ?? "∅")")
            }
            for original in Set(facts.map(\.originalTransactionId)).sorted() {
                out += try s.facts(originalTransactionId: original).map(\.identity)
            }
            out.append(try s.originalTransactionIds(appTransactionId: "705Ab3").joined(separator: ","))
            return out
        }
    }

    @Test(arguments: StoreBackend.available)
    func everyPackedFormReadsBackAsWritten(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.writeRows(store)
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            try store.read { s throws in
                #expect(try s.ledgerEntry(id: ids.ledger[0])?.detail == Self.appliedDetail)
                #expect(
                    try s.ledger(transactionIds: ["2000000000000399"], originalTransactionIds: [], appAccountTokens: []).map(\.detail)
                        == [
                            Self.appliedDetail, Self.appliedDetail + "; order x was created for a; Apple charged for b",
                            "x" + Self.appliedDetail, "no change: contract 2000000000000200 is already active", nil, "ok",
                        ])
                let audits = try s.audit(entity: .order, key: Self.order)
                #expect(audits.map(\.after) == [Self.orderInsert.after, Self.orderInsert.after, Self.orderInsert.after, "{}"])
                #expect(audits.first?.command == "notify" && audits.first?.reason == "DID_RENEW")
                #expect(audits.first?.ledgerId == ids.ledger[0])
                #expect(try s.audit(entity: .contract, key: "2000000000000200").first?.before == Self.contractUpdate.before)
                #expect(try s.facts(originalTransactionId: "2000000000000200").map(\.body) == Self.facts.prefix(3).map(\.body))
                #expect(try s.originalTransactionIds(appTransactionId: "705Ab3") == ["2000000000000200", "o-5"])
                #expect(try s.originalTransactionIds(appTransactionId: "705Ab") == [])
                #expect(try s.originalTransactionIds(appTransactionId: "x") == ["o-5"])
            }
            // Stored as intended: the applied details as references, the rest packed or as they were.
            try store.read { _ in
                let forms = try connection.query("SELECT detail, detail_packed FROM iap_ledger ORDER BY id", []).rows.map {
                    row throws(StoreError) in (try row.optionalText(0), try row.optionalBytes(1))
                }
                // SQLite's references say where their audit rows start (it has no index on ledger_id).
                let reference: UInt8 = backend == .sqlite ? 0x81 : 0x80
                #expect(forms.map { $0.1?.first } == [reference, reference, 1, 1, nil, nil])
                #expect(forms[1].1.map { Array($0.suffix(4)) } == Array("or b".utf8), "the note after the changes, as it is")
                #expect(forms.map(\.0) == [nil, nil, nil, nil, nil, "ok"])
                let facts = try connection.query("SELECT digest, body, body_packed FROM iap_facts ORDER BY id", []).rows
                #expect(try facts.map { try $0.text(0) } == Self.facts.map(FactDigest.of))
                #expect(try facts.map { try $0.text(0).count } == Array(repeating: 22, count: Self.facts.count))
                #expect(try facts.map { try $0.optionalBytes(2) == nil } == [false, false, false, true, false])
                #expect(try facts.map { try $0.text(1) }[0] == #""appTransactionId":"705Ab3""#)
                let audit = try connection.query("SELECT command, reason, before_json, after_json, packed FROM iap_audit ORDER BY id", [])
                #expect(
                    try audit.rows.prefix(6).allSatisfy {
                        try $0.optionalBytes(4) != nil && $0.optionalText(2) == nil && $0.optionalText(3) == nil && $0.text(0).isEmpty
                    })
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aDatabaseInTheFormerFormatIsConvertedAndReadsBackIdentical(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let ids = try Self.writeRows(store)
            let expected = try Self.readRows(store, ids)
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            // The former format (schema v7), made from the rows read back: plain texts, hex digests, no
            // v8 columns (nor SQLite's ledger_id index), v8 not recorded.
            try store.write { s throws in
                for id in ids.ledger {
                    let detail = try s.ledgerEntry(id: id)?.detail
                    _ = try connection.run(
                        "UPDATE iap_ledger SET detail = ?, detail_packed = NULL WHERE id = ?",
                        [detail.map(SQLValue.text) ?? .null, .int(id)])
                }
                for id in (1...5).map(Int64.init) + ids.audit {
                    let entry = try #require(try s.auditEntry(id: id))
                    _ = try connection.run(
                        "UPDATE iap_audit SET command = ?, reason = ?, before_json = ?, after_json = ?, packed = NULL WHERE id = ?",
                        [.text(entry.command), SQLValue(entry.reason), SQLValue(entry.before), SQLValue(entry.after), .int(id)])
                }
                for fact in Self.facts {
                    let hex = Self.hex(FactDigest.of(fact))
                    _ = try connection.run(
                        "UPDATE iap_facts SET body = ?, body_packed = NULL, digest = ? WHERE fact_key = ? AND kind = ?",
                        [.text(fact.body), .text(hex), .text(fact.key), .text(fact.kind.rawValue)])
                }
                _ = try connection.run("DELETE FROM iap_schema_migrations WHERE version >= 8", [])
            }
            // (Schema v9's contract snapshot, after it, dropped too: the migration runs again.)
            for (table, column) in [
                ("iap_ledger", "detail_packed"), ("iap_audit", "packed"), ("iap_facts", "body_packed"), ("member_contracts", "snapshot"),
            ] {
                try connection.execute("ALTER TABLE \(table) DROP COLUMN \(column)")
            }

            #expect(try store.migrate() == StoreSchema.migrations.filter { $0.version >= 8 }.map(\.name))
            #expect(StoreSchema.migrations.first { $0.version == 8 }?.name == StoreSchema.packedTextsMigrationName)

            #expect(try Self.readRows(store, ids) == expected)
            try store.read { _ in
                let packed = try [
                    "SELECT count(*) FROM iap_ledger WHERE detail_packed IS NOT NULL",
                    "SELECT count(*) FROM iap_ledger WHERE detail_packed IS NOT NULL AND detail_packed >= X'81'",
                    "SELECT count(*) FROM iap_facts WHERE body_packed IS NOT NULL",
                    "SELECT count(*) FROM iap_facts WHERE length(digest) = 22",
                    "SELECT count(*) FROM iap_audit WHERE packed IS NOT NULL AND before_json IS NULL AND after_json IS NULL",
                ].map { sql throws(StoreError) in try connection.query(sql, []).rows.first?.int(0) }
                // Every row that packs is packed (the short detail and body stay as they are), the
                // applied details as references, every digest in base64url.
                #expect(packed.prefix(4) == [4, 2, 4, 5])
                #expect((packed[4] ?? 0) >= 6)
            }
            // The migration's references say where their audit rows start (on both backends), and
            // SQLite's index for the step is gone again.
            if backend == .sqlite {
                let indexes = try store.read { _ in
                    try connection.query("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'iapctl_repack%'", []).rows.first?.int(0)
                }
                #expect(indexes == 0)
            }
            // A fact received again is still found under its converted digest.
            #expect(try store.write { try $0.insertFact(Self.facts[0]) } == false)
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
}

extension PackedTextsTests {
    /// SQLite's reference says which id its first audit row gets; should another row take that id
    /// first (here a trigger), the detail is stored as packed text instead, and still reads back.
    @Test func aReferenceWhoseAuditRowsGotOtherIdsFallsBackToPackedText() throws {
        try withStore(.sqlite) { store in
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            try connection.execute(
                "CREATE TRIGGER iapctl_test_steal AFTER INSERT ON iap_ledger BEGIN INSERT INTO iap_audit "
                    + "(at, actor, command, entity, entity_key) VALUES (0, 'test', 'test', 'order', 'x'); END")
            let id = try store.write { s throws in
                try s.appendLedger(Self.ledger(Self.appliedDetail, uuid: "n-1"), audits: [Self.orderInsert, Self.contractUpdate])
            }
            let stored = try store.read { _ in
                try connection.query("SELECT detail_packed FROM iap_ledger WHERE id = ?", [.int(id)]).rows.first?.optionalBytes(0)
            }
            #expect(stored?.first == 1, "packed text, not a reference")
            #expect(try store.read { try $0.ledgerEntry(id: id) }?.detail == Self.appliedDetail)
        }
    }
}

/// Issue 25: an event's audit rows are written together (up to 8 in one INSERT); more than 8 are
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
