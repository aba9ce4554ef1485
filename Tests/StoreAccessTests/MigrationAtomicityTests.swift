import Foundation
import IAPOperations
@_spi(Testing) import MySQLStore
import StoreAccess
import StoreSQL
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// A migration's versions are recorded only with all its work: a failure thrown inside the facts
/// rebuild (after it wrote facts and re-derived rows) leaves the database at its old version with
/// nothing of the rebuild kept, and the next `db init` does the whole job.
@Suite("StoreAccess: a migration with a facts rebuild is all or nothing")
struct MigrationAtomicityTests {
    struct Interrupted: Error {}

    static let all = StoreSchema.migrations.map(\.name)
    static let factsVersion = StoreSchema.migrations.first { FactRebuild.isNeeded(after: [$0.name]) }!.version

    /// Turns a current database into one from before the engine's facts, with one client ledger row
    /// and a contract an older engine left expired.
    static let downgrade = [
        "DROP TABLE iap_customer_notes", "DROP TABLE iap_grants", "DROP TABLE iap_refund_answers",
        "DROP TABLE iap_overrides", "DROP TABLE iap_checkpoints", "DROP TABLE iap_facts",
        "ALTER TABLE iap_ledger ADD COLUMN raw TEXT NULL", "ALTER TABLE iap_ledger ADD COLUMN raw_packed BLOB NULL",
        "ALTER TABLE iap_ledger DROP COLUMN raw_zstd", "ALTER TABLE iap_ledger DROP COLUMN row_digest",
        "ALTER TABLE iap_audit DROP COLUMN row_digest", "ALTER TABLE member_contracts DROP COLUMN snapshot",
        "DELETE FROM iap_schema_migrations WHERE version >= \(factsVersion)",
        "INSERT INTO iap_ledger (received_at, source, transaction_id, original_transaction_id, verdict, raw) "
            + "VALUES (1, 'client', '2001', '2000', 'unmatched', '\(jws)')",
    ]

    static var jws: String {
        let payload =
            #"{"transactionId":"2001","originalTransactionId":"2000","productId":"pro.monthly","#
            + #""purchaseDate":1700000000000,"expiresDate":1702592000000,"signedDate":1700000000000,"#
            + #""type":"Auto-Renewable Subscription","environment":"Sandbox","bundleId":"com.example.app"}"#
        return base64url(#"{"alg":"ES256"}"#) + "." + base64url(payload) + ".c2ln"
    }

    static func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The test on one backend: `execute` runs one statement outside iapctl's transactions.
    static func failureInsideTheRebuildRecordsNothing(_ opener: StoreOpener, execute: (String) throws -> Void) throws {
        _ = try DatabaseInit.run(opener, actor: "setup")
        for statement in downgrade { try execute(statement) }
        let older = factsVersion - 1

        let store = try opener.open(.existing)
        #expect(try store.schemaVersion().current == older)
        var attempted: FactRebuild.Summary?
        #expect(throws: Interrupted.self) {
            _ = try store.migrate { applied, session in
                #expect(applied == Array(all.dropFirst(older)))
                attempted = try FactRebuild.run(in: session, actor: "tester")
                throw Interrupted()
            }
        }
        let rebuilt = try #require(attempted, "the rebuild ran before the failure")
        #expect(rebuilt.factsAdded >= 1 && rebuilt.ledgerRows == 1)

        // Nothing recorded: still the old version, every other command refused until db init.
        let reopened = try opener.open(.existing)
        #expect(try reopened.schemaVersion().current == older)
        #expect(throws: StoreError.self) { try reopened.read { try $0.counts() } }
        let status = try DatabaseStatus.inspect(reopened)
        #expect(status.current == older && status.pending == Array(all.dropFirst(older)) && status.rebuildFacts)
        let plan = try DatabaseInit.plan(opener)
        #expect(plan.action == .migrate && plan.rebuildFacts)

        // The rerun finishes the job: the same facts added again (none was kept by the failed one).
        let outcome = try DatabaseInit.run(opener, actor: "tester")
        #expect(outcome.action == .migrated && outcome.before == older && outcome.applied == Array(all.dropFirst(older)))
        #expect(outcome.rebuilt?.factsAdded == rebuilt.factsAdded)
        #expect(try opener.open(.existing).schemaVersion().current == all.count)
        #expect(try opener.open(.existing).read { try $0.facts(originalTransactionId: "2000") }.count == rebuilt.factsAdded)
    }

    @Test func onSQLiteAFailureInsideTheRebuildLeavesTheDatabaseAsItWas() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let opener = StoreOpener(location: .sqlite(path: path))
        try Self.failureInsideTheRebuildRecordsNothing(opener) { sql in
            try SQLiteStore(path: path, create: false).database.execute(sql)
        }
    }

    /// On MariaDB the DDL stays (it commits implicitly) while the version, the data steps and the
    /// rebuild roll back: the schema is ahead of its recorded version, and that still means "migrate".
    @Test(.enabled(if: TestMySQL.isConfigured))
    func onMySQLAFailureInsideTheRebuildRecordsNoVersionAndKeepsNoData() throws {
        let (url, password) = try TestMySQL.scratch(label: "atomic")
        defer { try? MySQLStore.dropDatabase(url: url, password: password) }
        let opener = StoreOpener(location: .mysql(url: url), password: password, timeout: try DatabaseTimeout.parse("30"))
        try Self.failureInsideTheRebuildRecordsNothing(opener) { sql in
            try MySQLStore(url: url, password: password).executeForTesting(sql)
        }
    }
}
