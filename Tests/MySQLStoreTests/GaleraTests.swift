import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

/// The store on a MariaDB Galera cluster started by `scripts/galera-test-cluster start 3`
/// (skipped without it): the same work sent to every node at once is done exactly once with no
/// partial unit, a write through one node is read at once through another, and a node lost in the
/// middle of a run leaves only whole units behind, which a rerun on a survivor completes.
@Suite(
    "MySQLStore on a Galera cluster", .serialized,
    .enabled(if: GaleraCluster.isConfigured, "IAPCTL_TEST_GALERA_URLS is not set: run scripts/galera-test-cluster start 3"))
struct GaleraTests {
    /// Every node runs the same units (a claim, an order, a ledger row, an audit row each) in its
    /// own shuffled order, all at once, each on a new connection: certification conflicts and brute-force aborts happen, and
    /// each unit is run again whole until it is done or finds the work done.
    @Test func sameWorkOnEveryNodeIsDoneExactlyOnce() throws {
        try GaleraCluster.withFreshDatabase { stores in
            let keys = (0..<100).map { "n-\($0)" }
            let barrier = Barrier(count: stores.count)
            let failures = GaleraCluster.runConcurrently(stores) { store in
                // Each unit on a new connection, like one-shot `iapctl notify` processes (every
                // statement is prepared inside the unit, where a brute-force abort shows only as
                // warning 1317), and on every node at the same moment.
                var first: (any Error)?
                for key in keys {
                    let fresh = Result { try MySQLStore(url: store.url, password: GaleraCluster.password) }
                    barrier.wait()
                    do { try Self.unit(key, on: try fresh.get()) } catch { first = first ?? error }
                }
                if let first { throw first }
            }
            #expect(failures.isEmpty, "\(failures)")
            try Self.expectExactlyOnce(keys, on: stores)
        }
    }

    /// A write through node 1 is seen at once through the others (`wsrep_sync_wait`).
    @Test func writesAreReadAtOnceThroughAnotherNode() throws {
        try GaleraCluster.withFreshDatabase { stores in
            #expect(stores.allSatisfy { $0.connection.isGaleraNode })
            for i in 0..<30 {
                _ = try stores[0].write { try $0.insertOrder(Sample.order("o-\(i)")) }
                for store in stores.dropFirst() { #expect(try store.read { try $0.order(no: "o-\(i)") } != nil) }
            }
        }
    }

    /// The last node is killed while every node runs the units: its run stops unavailable (exit
    /// 69), the others finish; a rerun of everything on a survivor leaves each unit done once.
    @Test func aNodeLostMidRunLeavesOnlyWholeUnits() throws {
        try GaleraCluster.withFreshDatabase { stores in
            // Two survivors keep the primary component.
            guard stores.count >= 3 else { return }
            let keys = (0..<120).map { "k-\($0)" }
            let victim = stores.count - 1
            let victimURL = stores[victim].url.description
            let failures = GaleraCluster.runConcurrently(stores) { store in
                for (done, key) in keys.shuffled().enumerated() {
                    // Mid-run: after the victim has done 20 units.
                    if done == 20, store.url.description == victimURL { GaleraCluster.kill(node: victim + 1) }
                    try Self.unit(key, on: store)
                }
            }
            #expect(failures.contains { $0.0 == victim }, "node \(victim + 1) was killed, its run did not stop")
            for (index, failure) in failures {
                #expect(index == victim, "node \(index + 1) failed: \(failure)")
                #expect(failure.isUnavailable || failure.isBusy, "\(failure)")
            }
            let survivors = Array(stores[..<victim])
            for key in keys { try Self.unit(key, on: survivors[0]) }
            try Self.expectExactlyOnce(keys, on: survivors)
        }
    }

    /// `db init` on every node at the same moment (GET_LOCK holds per node): each run ends with
    /// the whole schema, once, on every node.
    @Test func dbInitOnEveryNodeAtOnce() throws {
        try GaleraCluster.withFreshDatabase(migrate: false) { stores in
            let barrier = Barrier(count: stores.count)
            let failures = GaleraCluster.runConcurrently(stores) { store in
                barrier.wait()
                _ = try store.migrate()
            }
            #expect(failures.isEmpty, "\(failures)")
            for store in stores {
                #expect(try store.schemaVersion() == (current: Schema.supported, supported: Schema.supported))
                #expect(try store.missingSchemaItems().isEmpty)
            }
            let versions = try stores[0].read { _ in
                try stores[0].connection.rows("SELECT count(*), count(DISTINCT version) FROM iap_schema_migrations")
            }
            #expect(try versions.first?.int(0) == Int64(Schema.supported))
            #expect(try versions.first?.int(1) == Int64(Schema.supported))
        }
    }

    // MARK: helpers

    /// One unit: claim the notification; if it is new, an order, a ledger row and an audit row.
    static func unit(_ key: String, on store: MySQLStore) throws {
        try RetryPolicy.run {
            try store.write { s throws in
                guard try s.claimNotification(key) else { return }
                let order = try s.insertOrder(Sample.order("o-" + key))
                _ = try s.appendLedger(Sample.ledger(uuid: key))
                _ = try s.appendAudit(AbortedTransactionTests.audit(order.no))
            }
        }
    }

    static func expectExactlyOnce(_ keys: [String], on stores: [MySQLStore]) throws {
        for (index, store) in stores.enumerated() {
            let counts = try store.read { try $0.counts() }
            #expect(
                counts == StoreCounts(orders: keys.count, contracts: 0, ledger: keys.count, unmatched: 0, audit: keys.count),
                "node \(index + 1)")
            let audited = try store.read { try $0.auditEntries(matching: AuditFilter()).map(\.key) }
            #expect(Set(audited) == Set(keys.map { "o-" + $0 }), "node \(index + 1)")
        }
    }
}

/// The cluster `scripts/galera-test-cluster` started (its exports).
enum GaleraCluster {
    static let environment = ProcessInfo.processInfo.environment
    static let urls = (environment["IAPCTL_TEST_GALERA_URLS"] ?? "").split(separator: " ").map(String.init)
    static let password = environment["IAPCTL_TEST_GALERA_PASSWORD"]

    static var isConfigured: Bool { urls.count >= 2 }

    /// A fresh database made on node 1 (it replicates), a store on it through every node.
    static func withFreshDatabase(migrate: Bool = true, _ body: ([MySQLStore]) throws -> Void) throws {
        let name = "iapctl_g_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        // Nodes a test killed are left out.
        var nodeURLs = try urls.indices.filter { isAlive(node: $0 + 1) }.map { try MySQLURL(parsing: urls[$0]) }
        for i in nodeURLs.indices { nodeURLs[i].database = name }
        let first = try MySQLStore(url: nodeURLs[0], password: password, create: true)
        defer { try? first.dropDatabase() }
        if migrate { _ = try first.migrate() }
        let others = try nodeURLs.dropFirst().map {
            // `create`: the other nodes may not have applied CREATE DATABASE yet.
            try MySQLStore(url: $0, password: password, create: true)
        }
        try body([first] + others)
    }

    /// Runs `body` on each store in its own thread; the errors that stopped them, by store index.
    static func runConcurrently(
        _ stores: [MySQLStore], _ body: @escaping @Sendable (MySQLStore) throws -> Void
    ) -> [(Int, StoreError)] {
        let results = Results()
        let group = DispatchGroup()
        for (index, store) in stores.enumerated() {
            let handed = Handed(store)
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    try body(handed.store)
                } catch let error as StoreError {
                    results.add(index, error)
                } catch {
                    results.add(index, .failure("\(error)"))
                }
            }.start()
        }
        group.wait()
        return results.all
    }

    /// Kills node `node` (1-based) at once, like a crash.
    static func kill(node: Int) {
        guard let pid = pid(node: node) else { return }
        Foundation.kill(pid, SIGKILL)
    }

    static func isAlive(node: Int) -> Bool {
        guard let pid = pid(node: node) else { return true }
        return Foundation.kill(pid, 0) == 0
    }

    private static func pid(node: Int) -> Int32? {
        guard let dir = environment["IAPCTL_TEST_GALERA_DIR"],
            let text = try? String(contentsOfFile: "\(dir)/node\(node)/mariadbd.pid", encoding: .utf8)
        else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Errors collected from several threads.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [(Int, StoreError)] = []
        func add(_ index: Int, _ error: StoreError) { lock.withLock { errors.append((index, error)) } }
        var all: [(Int, StoreError)] { lock.withLock { errors } }
    }
}

/// Lets `count` threads pass together, again and again.
final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var waiting = 0
    private var generation = 0

    init(count: Int) { self.count = count }

    func wait() {
        condition.lock()
        defer { condition.unlock() }
        let mine = generation
        waiting += 1
        if waiting == count {
            waiting = 0
            generation += 1
            condition.broadcast()
        } else {
            while generation == mine { condition.wait() }
        }
    }
}
