import Foundation
import Testing

@testable import MySQLStore

/// The MySQL schema is rendered from the shared description (StoreSchema); for the migrations that
/// were hand-written before (versions 1–4) it must be the DDL they produced, to the byte (no server
/// needed). Later migrations are new and are not compared.
@Suite("MySQLStore: schema rendering")
struct SchemaRenderingTests {
    @Test func renderedSchemaIsTheLegacyDDLToTheByte() throws {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/legacy-schema", withExtension: "txt"))
        let legacy = try String(contentsOf: url, encoding: .utf8)
        var out = ""
        out += "-- migrations table\n" + Schema.migrationsTableDDL + "\n"
        for m in Schema.migrations where m.version <= 4 {
            out += "-- migration \(m.version): \(m.name)\n"
            for t in m.tables {
                out += "-- create\n" + t.createStatement + "\n"
                for c in t.columns { out += "-- add \(t.name).\(c.name): \(c.addDefinition)\n" }
                for i in t.indexes { out += "-- index \(t.name): \(i.clause) | \(i.itemName)\n" }
            }
            for s in m.statements { out += "-- statement\n" + s + "\n" }
        }
        let got = out.split(separator: "\n", omittingEmptySubsequences: false)
        let want = legacy.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (line, expected)) in zip(got, want).enumerated() where line != expected {
            Issue.record("line \(index + 1): got \(line), want \(expected)")
            break
        }
        #expect(got.count == want.count)
    }
}
