import StoreSQL
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

/// A database written before the facts' digest became SHA-256 keeps working on MariaDB: the
/// migration's `UPDATE` (SHA2 in SQL) gives every stored fact the digest iapctl computes.
@Suite("MySQLStore: the facts' digest migration", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct FactDigestMigrationTests {
    @Test func aDatabaseWithOldDigestsKeepsEachFactOnceAfterMigrating() throws {
        try TestServer.withFreshStore { store throws in
            let digestVersion = try #require(
                StoreSchema.migrations.first { $0.name == StoreSchema.factDigestMigrationName }?.version)
            // The database as the version before left it: old digests, later migrations not recorded
            // (MySQL's steps are idempotent, so they run again).
            for fact in LegacyFactDigest.samples { try store.executeForTesting(LegacyFactDigest.insertStatement(fact)) }
            try store.executeForTesting("DELETE FROM iap_schema_migrations WHERE version >= \(digestVersion)")

            #expect(try store.migrate().contains(StoreSchema.factDigestMigrationName))

            for fact in LegacyFactDigest.samples {
                #expect(try store.write { try $0.insertFact(fact) } == false, "\(fact.key) is kept once")
                let kept = try store.read { try $0.facts(originalTransactionId: fact.originalTransactionId) }
                #expect(kept.filter { $0.kind == fact.kind && $0.key == fact.key }.count == 1)
            }
        }
    }
}
