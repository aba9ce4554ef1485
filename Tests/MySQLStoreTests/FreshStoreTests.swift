import StoreTestSupport
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

/// The fresh stores the other suites start from (`TestBackend.mysql.makeStore`) are made from the
/// migrated schema's text, not by migrating: they must be what `migrate()` makes.
@Suite("MySQLStore: the fresh stores of the test suites", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct FreshStoreTests {
    /// Every table's columns, keys, checks and foreign keys (`SHOW CREATE TABLE`) and the recorded
    /// migrations are those of a database `migrate()` migrated; `migrate()` then finds nothing to do.
    @Test func aFreshTestStoreIsWhatMigrateMakes() throws {
        let (made, cleanup) = try TestBackend.mysql.makeStore(label: "fresh")
        defer { cleanup() }
        let copy = try #require(made as? MySQLStore)
        try TestServer.withFreshStore { migrated throws in
            func tables(_ store: MySQLStore) throws -> [[String]] {
                try TestMySQL.client(store.url, TestServer.password, "SHOW TABLES").map {
                    try TestMySQL.client(store.url, TestServer.password, "SHOW CREATE TABLE `\($0[0])`")[0]
                }
            }
            let expected = try tables(migrated)
            #expect(expected.count >= 10)
            #expect(try tables(copy) == expected)
            let versions = "SELECT version, name FROM iap_schema_migrations ORDER BY version"
            #expect(
                try TestMySQL.client(copy.url, TestServer.password, versions)
                    == TestMySQL.client(migrated.url, TestServer.password, versions))
            #expect(try copy.migrate().isEmpty)
            #expect(try copy.missingSchemaItems().isEmpty)
        }
    }
}
