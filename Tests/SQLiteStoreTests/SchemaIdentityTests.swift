import Foundation
import SubscriptionEngine
import Testing

@testable import SQLiteStore

/// The SQLite schema is rendered from the shared description (StoreSchema). A database it creates,
/// and a version-1 database it upgrades, must have exactly the schema the hand-written scripts gave
/// (Fixtures/legacy-migrations.sql): the same objects with the same SQL (white space aside), columns,
/// indexes and foreign keys.
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

    private func legacyStore(_ scratch: Scratch, upTo last: Int) throws -> SQLiteStore {
        let store = try SQLiteStore(path: scratch.path("legacy-\(last).db"), create: true)
        let scripts = try legacyScripts()
        try store.database.executeScript(Migrations.tableDDL)
        for version in 1...last {
            try store.database.executeScript(try #require(scripts[version]))
            try store.database.execute("INSERT INTO iap_schema_migrations VALUES (\(version), 'v\(version)', 1)")
        }
        return store
    }

    @Test func freshDatabaseHasTheLegacySchema() throws {
        let scratch = try Scratch()
        let legacy = try legacyStore(scratch, upTo: try legacyScripts().count)
        let rendered = try SQLiteStore(path: scratch.path("rendered.db"), create: true)
        _ = try rendered.migrate()
        let want = try schema(legacy)
        #expect(want.count > 40)
        #expect(try schema(rendered) == want)
    }

    @Test func upgradedVersionOneDatabaseHasTheLegacySchema() throws {
        let scratch = try Scratch()
        let legacy = try legacyStore(scratch, upTo: try legacyScripts().count)
        let upgraded = try legacyStore(scratch, upTo: 1)
        #expect(try upgraded.migrate() == Migrations.all.dropFirst().map(\.name))
        #expect(try schema(upgraded) == schema(legacy))
    }
}
