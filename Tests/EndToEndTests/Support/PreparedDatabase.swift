import Foundation
import StoreTestSupport
import Testing

/// A database exactly as `iapctl db init` leaves it, made once per test process by the built binary
/// and copied for each ``CLI`` that needs an initialized database: on SQLite the file's bytes, on
/// MySQL/MariaDB the database's and every table's `SHOW CREATE` text and the migration rows.
///
/// `db init` of the debug binary takes about 0.3 s on SQLite and 1.5 s on MariaDB (every migration's
/// DDL committed one by one); the copy takes 0.01 s and 0.4 s. Tests of `db init` itself run it;
/// `HarnessTests` checks that a copy has the same tables, keys and migrations as a `db init`.
/// PostgreSQL runs `db init` each time; so does every backend with `IAPCTL_E2E_DB_INIT_EACH=1` (to
/// rule the copy out, or to measure what it saves).
enum PreparedDatabase {
    /// What a copy is made from.
    enum Template: Sendable {
        /// The SQLite file `db init` wrote.
        case sqlite(Data)
        /// MySQL: the `CREATE DATABASE` text (its name as `{database}`), each table's `CREATE TABLE`
        /// text, and the rows of `iap_schema_migrations`.
        case mysql(createDatabase: String, tables: [String], migrations: [String])
        /// No copy: `db init` each time.
        case initEachTime
    }

    /// Made on first use, once per process.
    static let template: Result<Template, HarnessError> = {
        do {
            return .success(try make())
        } catch let error as HarnessError {
            return .failure(error)
        } catch {
            return .failure(HarnessError("preparing the template database: \(error)"))
        }
    }()

    private static func make() throws -> Template {
        if ProcessInfo.processInfo.environment["IAPCTL_E2E_DB_INIT_EACH"] == "1" { return .initEachTime }
        switch E2EBackend.current {
        case .postgres:
            return .initEachTime
        case .sqlite:
            let cli = try CLI()
            try cli.ok(["db", "init"])
            let files = try FileManager.default.contentsOfDirectory(atPath: cli.dir.path).filter { $0.hasPrefix("iapctl.db") }
            guard files == ["iapctl.db"] else {
                throw HarnessError("db init left \(files), not one database file: the copy would not be the same")
            }
            return .sqlite(try Data(contentsOf: URL(fileURLWithPath: cli.dbPath)))
        case .mysql:
            let cli = try CLI()
            try cli.ok(["db", "init"])
            guard let (server, database) = cli.mysql.map({ ($0.server, $0.database) }) else {
                throw HarnessError("the MySQL run has no test server")
            }
            let createDatabase = try TestMySQL.batchRows(server.run("SHOW CREATE DATABASE `\(database)`")).first?.last ?? ""
            let names = try server.run(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = '\(database)' ORDER BY table_name"
            ).split(separator: "\n").map(String.init)
            let tables = try names.map { name in
                try TestMySQL.batchRows(server.run("SHOW CREATE TABLE `\(name)`", database: database)).first?.last ?? ""
            }
            let migrations = try TestMySQL.batchRows(
                server.run("SELECT version, name, applied_at FROM iap_schema_migrations ORDER BY version", database: database)
            ).map { "(\($0[0]), '\($0[1].replacingOccurrences(of: "'", with: "''"))', \($0[2]))" }
            guard createDatabase.contains("`\(database)`"), !tables.isEmpty, tables.allSatisfy({ $0.hasPrefix("CREATE TABLE") }),
                !migrations.isEmpty
            else {
                throw HarnessError("could not read back the database db init made: \(createDatabase) \(tables)")
            }
            return .mysql(
                createDatabase: createDatabase.replacingOccurrences(of: "`\(database)`", with: "`{database}`"), tables: tables,
                migrations: migrations)
        }
    }
}

extension CLI {
    /// The default database, made as `db init` makes it: a copy of the one ``PreparedDatabase`` had
    /// `db init` make for this process (PostgreSQL: `db init`).
    func initializeDatabase() throws {
        // A test that moved the database elsewhere gets it where it asked.
        guard environment["IAPCTL_DB"] == dbPath else {
            try ok(["db", "init"])
            return
        }
        switch try PreparedDatabase.template.get() {
        case .initEachTime:
            try ok(["db", "init"])
        case .sqlite(let bytes):
            let path = dbPath
            guard FileManager.default.createFile(atPath: path, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
                throw HarnessError("could not write \(path)")
            }
        case .mysql(let createDatabase, let tables, let migrations):
            guard let (server, database) = mysql.map({ ($0.server, $0.database) }) else {
                throw HarnessError("the MySQL run has no test server")
            }
            let script =
                [
                    createDatabase.replacingOccurrences(of: "{database}", with: database), "USE `\(database)`",
                    "SET foreign_key_checks = 0",
                ] + tables + ["INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES " + migrations.joined(separator: ", ")]
            try server.run(script.joined(separator: ";\n") + ";")
        }
    }
}
