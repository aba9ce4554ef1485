import Foundation
import IAPOperations
import StoreAccess
import StoreSQL
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// `db init`'s plan and run, `db status`'s figures and opening, on SQLite files.
@Suite("StoreAccess: db init and db status on SQLite")
struct DatabaseInitTests {
    private static let all = StoreSchema.migrations.map(\.name)

    /// A database at schema `version`: the rendered migrations up to it, recorded as `migrate()` does.
    private func olderDatabase(_ path: String, version: Int, ledger: [String] = []) throws {
        let store = try SQLiteStore(path: path, create: true)
        try store.database.executeScript(Migrations.tableDDL)
        for migration in Migrations.all where migration.version <= version {
            try store.database.executeScript(migration.script)
            try store.database.execute(
                "INSERT INTO iap_schema_migrations VALUES (\(migration.version), '\(migration.name)', 1)")
        }
        for statement in ledger { try store.database.execute(statement) }
    }

    private func opener(_ path: String) -> StoreOpener { StoreOpener(location: .sqlite(path: path)) }

    @Test func theMigrationNamesAreWhatANewDatabaseApplies() throws {
        #expect(DatabaseInit.migrations == Self.all)
        #expect(try SQLiteStore(path: ":memory:", create: true).migrate() == DatabaseInit.migrations)
        #expect(DatabaseInit.migrations.count >= 4)
    }

    @Test func thePlanOfANewFileCreatesEverythingAndTouchesNothing() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let plan = try DatabaseInit.plan(opener(path))
        #expect(
            plan
                == SchemaPlan(
                    action: .create, current: 0, supported: Self.all.count, pending: Self.all, statements: nil,
                    rebuildFacts: false))
        #expect(!scratch.exists(path))
    }

    @Test func initCreatesAnOwnerOnlyFileAndIsIdempotent() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let created = try DatabaseInit.run(opener(path), actor: "tester")
        #expect(created.action == .created)
        #expect(created.before == 0 && created.current == Self.all.count)
        #expect(created.applied == Self.all)
        #expect(created.added == nil && created.rebuilt == nil)
        #expect(try scratch.mode(path) & 0o777 == 0o600)

        let again = try DatabaseInit.run(opener(path), actor: "tester")
        #expect(again.action == .upToDate)
        #expect(again.before == Self.all.count && again.current == Self.all.count)
        #expect(again.applied.isEmpty && again.rebuilt == nil)
        #expect(try scratch.mode(path) & 0o777 == 0o600)

        let plan = try DatabaseInit.plan(opener(path))
        #expect(
            plan
                == SchemaPlan(
                    action: .upToDate, current: Self.all.count, supported: Self.all.count, pending: [], rebuildFacts: false))
        let store = try opener(path).open(.readOnly)
        let status = try DatabaseStatus.inspect(store)
        #expect(status.backend == .sqlite && status.serverVersion == nil)
        #expect(status.missing == nil && status.incompatible == nil)
        #expect(status.current == Self.all.count && status.pending.isEmpty && !status.rebuildFacts)
        #expect(try status.counts(in: store) == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
    }

    @Test func aVersionOneDatabasePlansTheLaterMigrations() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        try olderDatabase(path, version: 1)
        let plan = try DatabaseInit.plan(opener(path))
        #expect(plan.action == .migrate)
        #expect(plan.current == 1 && plan.supported == Self.all.count)
        #expect(plan.pending == Array(Self.all.dropFirst()))
        #expect(plan.statements == nil)
        #expect(plan.rebuildFacts)
        // Planning changed nothing.
        #expect(try opener(path).open().schemaVersion().current == 1)

        let outcome = try DatabaseInit.run(opener(path), actor: "tester")
        #expect(outcome.action == .migrated)
        #expect(outcome.before == 1 && outcome.current == Self.all.count)
        #expect(outcome.applied == Array(Self.all.dropFirst()))
        #expect(outcome.rebuilt?.factsAdded == 0)
    }

    /// A database from before the engine kept facts: the plan says the facts get rebuilt, and
    /// the run rebuilds them from the ledger's stored JWS.
    @Test func aDatabaseWithoutFactsRebuildsThemFromTheLedger() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let factsMigration = try #require(StoreSchema.migrations.firstIndex { FactRebuild.isNeeded(after: [$0.name]) })
        let version = StoreSchema.migrations[factsMigration].version - 1
        let payload =
            #"{"transactionId":"2001","originalTransactionId":"2000","productId":"pro.monthly","#
            + #""purchaseDate":1700000000000,"expiresDate":1702592000000,"signedDate":1700000000000,"#
            + #""type":"Auto-Renewable Subscription","environment":"Sandbox","bundleId":"com.example.app"}"#
        let jws = base64url(#"{"alg":"ES256"}"#) + "." + base64url(payload) + ".c2ln"
        try olderDatabase(
            path, version: version,
            ledger: [
                "INSERT INTO iap_ledger (received_at, source, transaction_id, original_transaction_id, verdict, raw) "
                    + "VALUES (1, 'client', '2001', '2000', 'unmatched', '\(jws)')"
            ])

        let plan = try DatabaseInit.plan(opener(path))
        #expect(plan.action == .migrate && plan.current == version)
        #expect(plan.pending == Array(Self.all.dropFirst(version)))
        #expect(plan.rebuildFacts)
        let before = try DatabaseStatus.inspect(opener(path).open(.readOnly))
        #expect(before.current == version && before.rebuildFacts)
        #expect(try before.counts(in: opener(path).open(.readOnly)) == nil)

        let outcome = try DatabaseInit.run(opener(path), actor: "tester")
        #expect(outcome.action == .migrated && outcome.before == version)
        let rebuilt = try #require(outcome.rebuilt)
        #expect(rebuilt.ledgerRows == 1)
        #expect(rebuilt.factsAdded >= 1)
        let store = try opener(path).open(.readOnly)
        #expect(try store.read { try $0.facts(originalTransactionId: "2000") }.count == rebuilt.factsAdded)

        // Once migrated, nothing is left to do and nothing is rebuilt again.
        let again = try DatabaseInit.run(opener(path), actor: "tester")
        #expect(again.action == .upToDate && again.rebuilt == nil)
    }

    @Test func aNewerSchemaIsRefusedByThePlanAndTheStatus() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        _ = try DatabaseInit.run(opener(path), actor: "tester")
        try SQLiteStore(path: path, create: false).database.execute(
            "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)")
        let newer = NewerSchema(current: 99, supported: Self.all.count)
        #expect(throws: newer) { try DatabaseInit.plan(opener(path)) }
        #expect(throws: newer) { try DatabaseStatus.inspect(opener(path).open(.readOnly)) }
        #expect(throws: StoreError.self) { try DatabaseInit.run(opener(path), actor: "tester") }
    }

    @Test func anEmptyFileHasNoSchemaYet() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        _ = try opener(path).open(.create)
        let status = try DatabaseStatus.inspect(opener(path).open(.readOnly))
        #expect(status.current == 0 && status.pending == Self.all && !status.rebuildFacts)
        let plan = try DatabaseInit.plan(opener(path))
        #expect(plan.action == .migrate && plan.current == 0 && plan.pending == Self.all)
    }

    @Test func openingAMissingDatabaseCreatesNothingUnlessAsked() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        for mode in [StoreOpener.Mode.existing, .readOnly] {
            #expect {
                _ = try opener(path).open(mode)
            } throws: { error in
                if case StoreError.notFound = error { return true }
                return false
            }
            #expect(!scratch.exists(path))
        }
        _ = try opener(path).open(.create)
        #expect(scratch.exists(path))
        #expect(try scratch.mode(path) & 0o777 == 0o600)
    }

    private func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
