import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel
import Testing

@testable import StoreSQL

/// The fact-body migration: bodies of an earlier shape (made here at test time) are rewritten in
/// the one stored shape, with their digests, and derive the same rows as the bodies the engine
/// writes; a body that cannot be read refuses the migration by row, and nothing is written.
@Suite("Store contract: fact bodies rewritten in the one stored shape")
struct FactBodyMigrationTests {
    static var migration: SchemaMigration {
        StoreSchema.migrations.first { $0.name == StoreSchema.factBodiesMigrationName }!
    }

    static let original = "2000000000000500"

    /// A subscription's facts as the engine writes them: three periods, renewal infos, notifications.
    static var facts: [Fact] {
        var facts: [Fact] = []
        for period in 0..<3 {
            let start = 1_735_689_800_000 + Int64(period) * 2_592_000_000
            var tx = TransactionFacts(
                transactionId: "\(2_000_000_000_000_600 + period)", originalTransactionId: original,
                productId: "com.example.app/monthly", appAccountToken: "5e7a2c4d-0b1f-4a1e-9c3d-7f2b1a0e9d55",
                purchaseDate: start, originalPurchaseDate: 1_735_689_800_000, expiresDate: start + 2_592_000_000,
                type: .init(rawValue: "Auto-Renewable Subscription"), environment: "Sandbox", price: 9_990, currency: "EUR",
                transactionReason: .init(rawValue: period == 0 ? "PURCHASE" : "RENEWAL"), offerIdentifier: "spring \"é\"")
            tx.signedDate = start + 1_000
            let event = SubscriptionEvent(
                source: .apple, notificationUUID: "n-\(period)",
                notificationType: .init(rawValue: period == 0 ? "SUBSCRIBED" : "DID_RENEW"),
                signedDate: start + 2_000, environment: "Sandbox", transaction: tx,
                renewal: RenewalFacts(
                    originalTransactionId: original, autoRenewStatus: period == 2 ? 0 : 1, autoRenewProductId: tx.productId),
                raw: "{}", status: 1)
            facts += event.facts
        }
        return facts
    }

    /// `body` in an earlier shape: a transaction without `isFromReceipt` (as written before it
    /// existed); members in reverse order, with spaces, and `\u` escapes for non-ASCII text.
    static func earlierShape(_ fact: Fact) throws -> String {
        var members = try #require(JSONParser.parse(fact.body).objectMembers)
        if fact.kind == .transaction { members.removeAll { $0.key == "isFromReceipt" } }
        let text = "{ " + members.reversed().map { "\"\($0.key)\" : \($0.value.serialized())" }.joined(separator: ", ") + " }"
        return text.unicodeScalars.map {
            $0.isASCII
                ? String($0) : "\\u" + String(repeating: "0", count: 4 - String($0.value, radix: 16).count) + String($0.value, radix: 16)
        }.joined()
    }

    /// Sets a stored fact's body (and its digest, so the row is sound) as an earlier version wrote it.
    static func store(_ body: String, for fact: Fact, _ connection: any SQLConnection) throws {
        var old = fact
        old.body = body
        _ = try connection.run(
            "UPDATE iap_facts SET body = ?, digest = ? WHERE fact_key = ? AND digest = ?",
            [.text(body), .text(FactDigest.of(old)), .text(fact.key), .text(FactDigest.of(fact))])
    }

    /// Takes the database back to just before the fact-body rewrite: its version and every later
    /// one unrecorded, the tables later migrations create dropped.
    static func unrecord(_ store: any Store, _ connection: any SQLConnection) throws {
        // Outside a transaction: MySQL's DDL would end it.
        for table in ["iap_customer_notes", "iap_grants"] { try connection.execute("DROP TABLE IF EXISTS \(table)") }
        try store.write { _ throws in
            _ = try connection.run("DELETE FROM iap_schema_migrations WHERE version >= ?", [.int(Int64(migration.version))])
        }
    }

    /// The migrations `migrate()` runs after ``unrecord(_:_:)``: the fact-body rewrite and those after it.
    static var fromTheRewrite: [String] { StoreSchema.migrations.filter { $0.version >= migration.version }.map(\.name) }

    @Test(arguments: StoreBackend.available)
    func earlierShapesAreRewrittenAndDeriveTheSameRows(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            let facts = Self.facts
            try store.write { s throws in for fact in facts { #expect(try s.insertFact(fact)) } }
            let expected = Derivation.derive(FactSet(try store.read { try $0.facts(originalTransactionId: Self.original) }))
            #expect(expected.orders.count == 3 && expected.contract?.autoRenew == false && expected.unreadable.isEmpty)

            try store.write { _ throws in for fact in facts { try Self.store(try Self.earlierShape(fact), for: fact, connection) } }
            // The first period's transaction was also received again after the shape changed: two rows of one fact.
            #expect(try store.write { try $0.insertFact(facts[0]) })
            let old = try store.read { try $0.facts(originalTransactionId: Self.original) }
            #expect(old.count == facts.count + 1)
            #expect(Derivation.derive(FactSet(old)).unreadable.count >= 2, "the codec reads only the one shape")

            try Self.unrecord(store, connection)
            #expect(try store.migrate() == Self.fromTheRewrite)
            let migrated = try store.read { try $0.facts(originalTransactionId: Self.original) }
            #expect(migrated.map(\.body).sorted() == facts.map(\.body).sorted(), "every body in the one shape")
            let derived = Derivation.derive(FactSet(migrated))
            #expect(derived == expected && derived.unreadable.isEmpty)
            #expect(derived.contract?.reasons == expected.contract?.reasons)

            // Idempotent: run again, nothing left to rewrite.
            #expect(try store.write { _ throws in try FactBodyConversion.run(connection) } == FactBodyConversion.Counts())
        }
    }

    @Test(arguments: StoreBackend.available)
    func aBodyThatCannotBeReadRefusesTheMigrationByRow(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let connection = try #require(store as? any SQLStoreBackend).transactions.connection
            let facts = Self.facts
            try store.write { s throws in for fact in facts { _ = try s.insertFact(fact) } }
            let old = try Self.earlierShape(facts[0])
            try store.write { _ throws in try Self.store(old, for: facts[0], connection) }
            let bad = Fact(
                kind: .transaction, key: "t-bad", originalTransactionId: Self.original, signedDate: 5, source: .client,
                body: #"{"isFromReceipt":false,"originalTransactionId":"x","price":"9.99","productId":"p","transactionId":"t-bad"}"#)
            try store.write { s throws in #expect(try s.insertFact(bad)) }
            let badId = try store.read { _ throws in
                try connection.query("SELECT id FROM iap_facts WHERE fact_key = 't-bad'", []).rows[0].int(0)
            }
            try Self.unrecord(store, connection)

            let error = expectStoreError(.corrupt) { _ = try store.migrate() }
            #expect(
                error
                    == .corrupt(
                        table: "iap_facts", id: badId,
                        what: #"the transaction fact t-bad: its body's "price" is not an integer, "#
                            + "so it cannot be rewritten in the one stored shape"))
            #expect(try store.schemaVersion().current == Self.migration.version - 1, "the version is not recorded")
            let bodies = try store.read { _ throws in
                try connection.query("SELECT body FROM iap_facts ORDER BY id", []).rows.map { try $0.text(0) }
            }
            #expect(bodies.first == old, "nothing rewritten")
            #expect(bodies.last == bad.body)
        }
    }
}
