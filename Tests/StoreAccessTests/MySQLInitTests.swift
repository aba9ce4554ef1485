import Foundation
@_spi(Testing) import MySQLStore
import StoreAccess
import StoreSQL
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `db init` and `db status` on MariaDB: runs when `IAPCTL_TEST_MYSQL_URL` is set
/// (`eval "$(scripts/mariadb-test-server start)"`), in a database of its own, dropped afterwards.
@Suite(
    "StoreAccess: db init and db status on MySQL",
    .enabled(if: TestMySQL.isConfigured))
struct MySQLInitTests {
    @Test func aMissingDatabaseIsPlannedThenCreatedOnceAndInspected() throws {
        let (url, password) = try TestMySQL.scratch(label: "sa")
        defer { try? MySQLStore.dropDatabase(url: url, password: password) }
        let opener = StoreOpener(location: .mysql(url: url), password: password, timeout: try DatabaseTimeout.parse("30"))
        let all = StoreSchema.migrations.map(\.name)

        let plan = try DatabaseInit.plan(opener)
        #expect(plan.action == .create && plan.current == 0 && plan.pending == all && !plan.rebuildFacts)
        #expect(plan.statements?.count == 1)
        #expect(plan.statements?.first?.hasPrefix("CREATE DATABASE IF NOT EXISTS `\(url.database)`") == true)
        // Planning created nothing.
        #expect {
            _ = try opener.open()
        } throws: { error in
            if case StoreError.notFound = error { return true }
            return false
        }

        let created = try DatabaseInit.run(opener, actor: "tester")
        #expect(created.action == .created && created.applied == all && created.added == [] && created.rebuilt == nil)
        let again = try DatabaseInit.run(opener, actor: "tester")
        #expect(again.action == .upToDate && again.applied.isEmpty && again.added == [] && again.rebuilt == nil)
        let upToDate = try DatabaseInit.plan(opener)
        #expect(upToDate.action == .upToDate && upToDate.pending.isEmpty && upToDate.statements == [])

        let store = try opener.open(.readOnly)
        let status = try DatabaseStatus.inspect(store)
        #expect(status.backend == .mysql && status.serverVersion?.isEmpty == false)
        #expect(status.current == all.count && status.missing == [] && status.incompatible == [])
        #expect(try status.counts(in: store) == StoreCounts(orders: 0, contracts: 0, ledger: 0, unmatched: 0, audit: 0))
    }
}
