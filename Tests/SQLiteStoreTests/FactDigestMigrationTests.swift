import StoreSQL
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// A database written before the facts' digest became SHA-256 keeps working: the migration
/// recomputes every stored digest, so a fact received again is still recognised and kept once.
@Suite("SQLiteStore: the facts' digest migration")
struct FactDigestMigrationTests {
    @Test func aDatabaseWithOldDigestsKeepsEachFactOnceAfterMigrating() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path("old-digests.db"), create: true)
        let digestVersion = try #require(StoreSchema.migrations.first { $0.name == StoreSchema.factDigestMigrationName }?.version)
        try store.database.executeScript(Migrations.tableDDL)
        for migration in Migrations.all where migration.version < digestVersion {
            try store.database.executeScript(migration.script)
            try store.database.execute("INSERT INTO iap_schema_migrations VALUES (\(migration.version), 'v\(migration.version)', 1)")
        }
        for fact in LegacyFactDigest.samples { try store.database.execute(LegacyFactDigest.insertStatement(fact)) }

        #expect(try store.migrate().contains(StoreSchema.factDigestMigrationName))

        let statement = try store.database.prepare("SELECT fact_key, digest FROM iap_facts ORDER BY id")
        var stored: [String] = []
        while try statement.step() { stored.append("\(statement.text(0) ?? "") \(statement.text(1) ?? "")") }
        statement.reset()
        #expect(stored == LegacyFactDigest.samples.map { "\($0.key) \(FactDigest.of($0))" })
        for fact in LegacyFactDigest.samples {
            #expect(try store.write { try $0.insertFact(fact) } == false, "\(fact.key) is kept once")
            let kept = try store.read { try $0.facts(originalTransactionId: fact.originalTransactionId) }
            #expect(kept.filter { $0.kind == fact.kind && $0.key == fact.key }.count == 1)
        }
    }
}
