import Foundation
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import SQLiteStore

/// The SQLite schema is rendered from the shared description (StoreSchema). For the migrations that
/// were hand-written before (Fixtures/legacy-migrations.sql, versions 1–4), a database the rendered
/// scripts create, and a version-1 database they upgrade, must have exactly the schema the old
/// scripts gave: the same objects with the same SQL (white space aside), columns, indexes and foreign
/// keys. Later migrations are new and are not compared.
@Suite("SQLiteStore: rendered schema identity")
struct SchemaIdentityTests {
    /// The frozen scripts by version.
    private func legacyScripts() throws -> [Int: String] {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/legacy-migrations", withExtension: "sql"))
        var scripts: [Int: String] = [:]
        var version = 0
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("-- version ") {
                version = try #require(Int(line.dropFirst("-- version ".count)))
            } else if version > 0 {
                scripts[version, default: ""] += line + "\n"
            }
        }
        return scripts
    }

    /// Everything SQLite knows of the schema, white space in the SQL folded.
    private func schema(_ store: SQLiteStore) throws -> [String] {
        func rows(_ sql: String) throws -> [String] {
            let statement = try store.database.prepare(sql)
            defer { statement.reset() }
            var out: [String] = []
            while try statement.step() {
                out.append(
                    statement.columnNames.indices.map { index in
                        let text = statement.text(Int32(index)) ?? "NULL"
                        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
                    }.joined(separator: " | "))
            }
            return out
        }
        var lines = try rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        let tables = try rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        for table in tables {
            lines += try rows("PRAGMA table_info(\(table))").map { "\(table) column: \($0)" }
            lines += try rows("PRAGMA index_list(\(table))").map { "\(table) index: \($0)" }
            lines += try rows("PRAGMA foreign_key_list(\(table))").map { "\(table) foreign key: \($0)" }
        }
        return lines
    }

    /// A database with the scripts of `versions`: the frozen legacy ones up to `legacyUpTo`, then
    /// the rendered ones (as `migrate()` runs them).
    private func store(_ scratch: Scratch, _ name: String, legacyUpTo: Int, through last: Int) throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch.path(name), create: true)
        let legacy = try legacyScripts()
        try store.database.executeScript(Migrations.tableDDL)
        for version in 1...last {
            let rendered = try #require(Migrations.all.first { $0.version == version })
            try store.database.executeScript(version <= legacyUpTo ? try #require(legacy[version]) : rendered.script)
            try store.database.executeScript(rendered.afterData)
            try store.database.execute("INSERT INTO iap_schema_migrations VALUES (\(version), 'v\(version)', 1)")
        }
        return store
    }

    @Test func renderedScriptsGiveTheLegacySchema() throws {
        let scratch = try Scratch()
        let frozen = try legacyScripts().count
        let legacy = try store(scratch, "legacy.db", legacyUpTo: frozen, through: frozen)
        let rendered = try store(scratch, "rendered.db", legacyUpTo: 0, through: frozen)
        let want = try schema(legacy)
        #expect(want.count > 40)
        #expect(try schema(rendered) == want)
    }

    @Test func aLegacyVersionOneDatabaseUpgradesToTheLegacySchema() throws {
        let scratch = try Scratch()
        let frozen = try legacyScripts().count
        let legacy = try store(scratch, "legacy.db", legacyUpTo: frozen, through: frozen)
        let upgraded = try store(scratch, "upgraded.db", legacyUpTo: 1, through: frozen)
        #expect(try schema(upgraded) == schema(legacy))
    }

    @Test func migrateRunsTheRenderedScripts() throws {
        let scratch = try Scratch()
        let migrated = try SQLiteStore(path: scratch.path("migrated.db"), create: true)
        #expect(try migrated.migrate() == Migrations.all.map(\.name))
        let rendered = try store(scratch, "rendered.db", legacyUpTo: 0, through: Migrations.supported)
        #expect(try schema(migrated) == schema(rendered))
    }
}
