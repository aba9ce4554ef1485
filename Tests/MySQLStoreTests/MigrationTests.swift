import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

@Suite("MySQLStore migrations", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct MigrationTests {
    @Test func migrateCreatesEverythingOnceAndIsIdempotent() throws {
        try TestServer.withFreshStore(migrate: false) { store throws in
            let missing = try store.missingSchemaItems()
            #expect(missing.contains("table orders"))
            #expect(missing.contains("table iap_schema_migrations"))
            let planned = try store.plannedMigrationStatements()
            #expect(planned.first?.hasPrefix("CREATE TABLE IF NOT EXISTS iap_schema_migrations") == true)
            // The migrations table, every table, then the data steps (the claims backfill).
            let dataSteps = Schema.migrations.flatMap(\.statements)
            #expect(planned.count == 1 + Schema.currentTables.count + dataSteps.count)
            #expect(planned.dropLast(dataSteps.count).allSatisfy { $0.hasPrefix("CREATE TABLE") })
            #expect(Array(planned.suffix(dataSteps.count)) == dataSteps)
            #expect(try store.schemaVersion().current == 0, "planning runs nothing")

            #expect(try store.migrate() == Schema.migrations.map(\.name))
            #expect(try store.schemaVersion() == (current: Schema.supported, supported: Schema.supported))
            #expect(try store.missingSchemaItems().isEmpty)
            #expect(try store.plannedMigrationStatements().isEmpty)
            #expect(try store.migrate().isEmpty)
            // A second connection (a later iapctl run) sees the same and can work.
            let again = try MySQLStore(url: store.url, password: TestServer.password)
            #expect(try again.migrate().isEmpty)
            #expect(try again.read { try $0.counts() }.orders == 0)
        }
    }

    @Test func statusCheckRejectsInvalidEnumValues() throws {
        try TestServer.withFreshStore { store throws in
            // The CHECK constraint guards statuses written by hand.
            #expect(throws: StoreError.self) {
                try store.executeForTesting(
                    "INSERT INTO orders (no, user_id, product_id, status, created_at, updated_at) "
                        + "VALUES ('x', 'u', 'p', 'lost', 0, 0)")
            }
        }
    }

    /// A shop's existing tables (fewer columns, other index names) gain what is missing; rows stay.
    @Test func migrateCompletesSeedShapedTablesWithoutLosingRows() throws {
        try TestServer.withFreshStore(migrate: false) { store throws in
            try store.executeForTesting(
                """
                CREATE TABLE orders (
                    id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
                    no VARCHAR(255) NOT NULL UNIQUE,
                    user_id VARCHAR(64) NOT NULL,
                    product_id VARCHAR(128) NOT NULL,
                    status VARCHAR(16) NOT NULL,
                    trade_no VARCHAR(64) NULL,
                    origin_no VARCHAR(64) NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    legacy_note VARCHAR(64) NULL
                ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
                """)
            try store.executeForTesting(
                """
                CREATE TABLE member_contracts (
                    id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
                    contract_id VARCHAR(64) NOT NULL,
                    user_id VARCHAR(64) NOT NULL,
                    product_id VARCHAR(128) NOT NULL,
                    status VARCHAR(16) NOT NULL,
                    auto_renew TINYINT(1) NOT NULL,
                    expires_date BIGINT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    UNIQUE KEY seed_contract (contract_id)
                ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
                """)
            try store.executeForTesting(
                "INSERT INTO orders (no, user_id, product_id, status, trade_no, origin_no, created_at, updated_at, legacy_note) "
                    + "VALUES ('seed-1', 'u1', 'com.example.pro', 'paid', '5000', '5000', 10, 20, 'keep me')")
            try store.executeForTesting(
                "INSERT INTO member_contracts (contract_id, user_id, product_id, status, auto_renew, expires_date, created_at, updated_at) "
                    + "VALUES ('5000', 'u1', 'com.example.pro', 'active', 1, 99, 10, 20)")

            let missing = try store.missingSchemaItems()
            #expect(!missing.contains("table orders"))
            #expect(missing.contains("column orders.price"))
            #expect(missing.contains("unique index (trade_no) on orders"))
            #expect(!missing.contains("unique index (no) on orders"), "the shop's UNIQUE on no counts")
            #expect(!missing.contains("unique index (contract_id) on member_contracts"), "whatever its name")
            #expect(missing.contains("column member_contracts.last_event_date"))
            #expect(missing.contains("table iap_ledger"))

            let planned = try store.plannedMigrationStatements()
            #expect(planned.contains("ALTER TABLE orders ADD COLUMN price BIGINT NULL"))
            #expect(!planned.contains { $0.contains("CREATE TABLE IF NOT EXISTS orders") })
            #expect(!planned.contains { $0.uppercased().contains("DROP") || $0.uppercased().contains("MODIFY") })

            #expect(try store.migrate().count == Schema.migrations.count)
            #expect(try store.missingSchemaItems().isEmpty)
            #expect(try store.plannedMigrationStatements().isEmpty)

            let order = try #require(try store.read { try $0.order(no: "seed-1") })
            #expect(order.tradeNo == "5000")
            #expect(order.status == .paid)
            #expect(order.createdAt == 10)
            #expect(order.price == nil)
            let contract = try #require(try store.read { try $0.contract(contractId: "5000") })
            #expect(contract.autoRenew)
            #expect(contract.expiresDate == 99)
            #expect(contract.lastEventDate == nil)

            // The new unique key on trade_no works, and the shop's extra column is still there.
            expectStoreError(\.isConflict) {
                _ = try store.write { try $0.insertOrder(Sample.order("seed-2", tradeNo: "5000")) }
            }
            try store.executeForTesting("UPDATE orders SET legacy_note = 'still here' WHERE no = 'seed-1'")
            let fresh = try store.write {
                try $0.insertOrder(Sample.order("new-1", tradeNo: "5001", originNo: "5000", purchaseDate: 1))
            }
            #expect(
                try store.read { try $0.orders(originNo: "5000").map(\.no) } == ["seed-1", "new-1"],
                "NULL purchase_date first")
            #expect(fresh.id > order.id)
        }
    }
}

/// Ledger compaction upgrades a version-1 database in place: its rows keep their text.
@Suite("MySQLStore: ledger compaction upgrade")
struct MySQLLedgerCompactionUpgradeTests {
    @Test func aVersionOneDatabaseUpgradesInPlaceAndKeepsItsRows() throws {
        try TestServer.withFreshStore(migrate: false) { store throws in
            try store.executeForTesting(Schema.migrationsTableDDL)
            for table in Schema.migrations[0].tables { try store.executeForTesting(table.createStatement) }
            try store.executeForTesting("INSERT INTO iap_schema_migrations VALUES (1, 'v1', 1)")
            let old = "eyJhbGciOiJFUzI1NiJ9." + String(repeating: "eyJ0eXBlIjoib2xkIn0", count: 20) + ".c2ln"
            try store.executeForTesting(
                "INSERT INTO iap_ledger (received_at, source, notification_uuid, verdict, raw) "
                    + "VALUES (1, 'apple', 'n-old', 'applied', '\(old)')")
            #expect(try store.schemaVersion() == (current: 1, supported: Schema.supported))
            #expect(try store.migrate() == Schema.migrations.dropFirst().map(\.name))
            #expect(try store.missingSchemaItems().isEmpty)
            #expect(try store.read { try $0.ledgerEntry(id: 1) }?.raw == old)
            let entry = LedgerEntry(receivedAt: 2, source: .apple, notificationUUID: "n-old", verdict: .duplicate, raw: old)
            let id = try store.write { try $0.appendLedger(entry) }
            #expect(try store.read { try $0.ledgerEntry(id: id) }?.raw == old)
        }
    }
}
