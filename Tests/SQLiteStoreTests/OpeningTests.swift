import Foundation
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// Opening files: existence, permissions, connection settings and schema versions.
@Suite("SQLiteStore: opening and schema")
struct OpeningTests {
    @Test func missingFileWithoutCreateIsNotFoundAndCreatesNothing() throws {
        let scratch = try Scratch()
        let path = scratch.path("absent.db")
        #expect(
            throws: StoreError.notFound("database \(path) does not exist; create it with: iapctl db init --db \(path)")
        ) {
            _ = try SQLiteStore(path: path, create: false)
        }
        #expect(!scratch.exists(path))
        #expect(!scratch.exists(path + "-wal"))
        // The command in the message is one the reader can paste: a path with a space is quoted.
        let spaced = scratch.path("my data.db")
        #expect(
            throws: StoreError.notFound(
                "database \(spaced) does not exist; create it with: iapctl db init --db '\(spaced)'")
        ) {
            _ = try SQLiteStore(path: spaced, create: false)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path).isEmpty)
    }

    @Test func missingDirectoryWithCreateIsNotFound() throws {
        let scratch = try Scratch()
        let path = scratch.path("no-such-dir/x.db")
        let error = #expect(throws: StoreError.self) { _ = try SQLiteStore(path: path, create: true) }
        guard case .notFound(let message)? = error else {
            Issue.record("expected notFound, got \(String(describing: error))")
            return
        }
        #expect(message.contains(path))
    }

    @Test func newFileIsOwnerOnlyIncludingWAL() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let previous = umask(0)  // even a permissive umask must not widen the mode
        defer { umask(previous) }
        let store = try SQLiteStore(path: path, create: true)
        _ = try store.migrate()
        #expect(try scratch.mode(path) == 0o600)
        #expect(scratch.exists(path + "-wal"))
        #expect(try scratch.mode(path + "-wal") == 0o600)
        #expect(try scratch.mode(path + "-shm") == 0o600)
    }

    @Test func existingFileKeepsItsMode() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o640]))
        let store = try SQLiteStore(path: path, create: true)
        _ = try store.migrate()
        #expect(try scratch.mode(path) == 0o640)
        // And create: false opens an existing file.
        let again = try SQLiteStore(path: path, create: false)
        #expect(try again.schemaVersion().current == Migrations.supported)
    }

    @Test func connectionSettings() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path(), create: true)
        #expect(try store.database.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try store.database.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try store.database.scalarInt("PRAGMA synchronous") == 2)  // FULL
        #expect(
            try store.database.scalarInt("PRAGMA busy_timeout") == Int64(SQLiteStore.defaultBusyTimeoutMilliseconds))
        #expect(SQLiteStore.defaultBusyTimeoutMilliseconds >= 10_000)
    }

    @Test func inMemoryDatabaseWorks() throws {
        let store = try SQLiteStore(path: ":memory:", create: false)
        #expect(try store.schemaVersion() == (0, Migrations.supported))
        #expect(try store.migrate().count == Migrations.all.count)
        _ = try store.write { try $0.insertOrder(Order(no: "a", userId: "u", productId: "p")) }
        #expect(try store.read { try $0.counts().orders } == 1)
    }

    /// A file without SQLite's header is refused before SQLite opens it, as a typed error naming
    /// the path (not a "corrupt" failure); the file is left as it was.
    @Test func notADatabaseIsAClearFailure() throws {
        let scratch = try Scratch()
        let path = scratch.path("junk.db")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        for (create, readOnly) in [(false, false), (false, true), (true, false)] {
            #expect(throws: SQLiteStore.NotADatabase(path: path)) {
                _ = try SQLiteStore(path: path, create: create, readOnly: readOnly)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }

    @Test func migrateRecordsOrderedVersions() throws {
        let scratch = try Scratch()
        let store = try SQLiteStore(path: scratch.path(), create: true)
        #expect(try store.schemaVersion() == (0, Migrations.supported))
        let applied = try store.migrate()
        #expect(applied == Migrations.all.map(\.name))
        #expect(try store.schemaVersion() == (Migrations.supported, Migrations.supported))
        let versions = try store.database.prepare(
            "SELECT version, name, applied_at FROM iap_schema_migrations ORDER BY version")
        defer { versions.reset() }
        var recorded: [Int64] = []
        while try versions.step() {
            recorded.append(try versions.requiredInt64(0))
            #expect(try versions.requiredInt64(2) > 1_600_000_000_000)  // milliseconds
        }
        #expect(recorded == Migrations.all.map { Int64($0.version) })
        #expect(Migrations.all.map(\.version) == Array(1...Migrations.all.count))
    }

    @Test func uninitialisedDatabaseIsRefusedWithAHint() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let store = try SQLiteStore(path: path, create: true)
        #expect(
            throws: StoreError.schemaMismatch(
                "database \(path) has no iapctl schema; create it with: iapctl db init --db \(path)")
        ) {
            try store.read { _ in }
        }
        #expect(throws: StoreError.self) { try store.write { _ in } }
    }

    @Test func newerSchemaIsRefused() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        do {
            let store = try SQLiteStore(path: path, create: true)
            _ = try store.migrate()
            try store.database.executeScript(
                "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)")
        }
        let store = try SQLiteStore(path: path, create: false)
        let supported = Migrations.supported
        let expected = StoreError.schemaMismatch(
            "database schema version 99 is newer than this iapctl supports (\(supported)); upgrade iapctl")
        #expect(try store.schemaVersion() == (99, supported))
        #expect(throws: expected) { _ = try store.migrate() }
        #expect(throws: expected) { try store.read { _ in } }
        #expect(throws: expected) { try store.write { _ in } }
        // Nothing was changed by the refused migrate.
        #expect(try store.schemaVersion() == (99, supported))
    }
}

/// Ledger compaction upgrades a version-1 database in place: its rows keep their text
/// and read back unchanged; new rows are packed, and identical re-deliveries refer to their first copy.
@Suite("SQLiteStore: ledger compaction upgrade")
struct LedgerCompactionUpgradeTests {
    @Test func aVersionOneDatabaseUpgradesInPlaceAndKeepsItsRows() throws {
        let scratch = try Scratch()
        let path = scratch.path()
        let old = "eyJhbGciOiJFUzI1NiJ9." + String(repeating: "eyJ0eXBlIjoib2xkIn0", count: 20) + ".c2ln"
        do {
            let store = try SQLiteStore(path: path, create: true)
            try store.database.executeScript(Migrations.tableDDL)
            try store.database.executeScript(Migrations.all[0].script)
            try store.database.execute("INSERT INTO iap_schema_migrations VALUES (1, 'v1', 1)")
            try store.database.execute(
                "INSERT INTO iap_ledger (received_at, source, notification_uuid, verdict, raw) "
                    + "VALUES (1, 'apple', 'n-old', 'applied', '\(old)')")
        }
        let store = try SQLiteStore(path: path, create: false)
        #expect(try store.schemaVersion() == (1, Migrations.supported))
        #expect(try store.migrate() == Migrations.all.dropFirst().map(\.name))
        #expect(try store.read { try $0.ledgerEntry(id: 1) }?.raw == old)
        // A raw is one zstd frame; the same bytes again under the same UUID are a reference.
        let header = #"{"alg":"ES256","x5c":["# + String(repeating: #""MIIB","#, count: 200) + #""MIIB"]}"#
        let jws = base64url(header) + "." + base64url(#"{"notificationUUID":"n-new","data":{}}"#) + ".c2lnbmF0dXJl"
        let entry = LedgerEntry(receivedAt: 2, source: .apple, notificationUUID: "n-new", verdict: .applied, raw: jws)
        let (first, again) = try store.write { s throws in (try s.appendLedger(entry), try s.appendLedger(entry)) }
        let stored = try store.database.prepare(
            "SELECT 0, length(raw_zstd), raw_of FROM iap_ledger WHERE id IN (?, ?) ORDER BY id")
        defer { stored.reset() }
        try stored.bind(first, at: 1)
        try stored.bind(again, at: 2)
        #expect(try stored.step())
        #expect(stored.int64(0) == 0 && stored.int64(2) == nil)
        #expect(try #require(stored.int64(1)) * 4 < Int64(jws.utf8.count))
        #expect(try stored.step())
        #expect(stored.int64(0) == 0 && stored.int64(1) == nil && stored.int64(2) == first)
        try store.read { s throws in
            #expect(try s.ledgerEntry(id: first)?.raw == jws)
            #expect(try s.ledgerEntry(id: again)?.raw == jws)
            #expect(try s.ledgerEntry(id: 1)?.raw == old)
        }
    }

    private func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
