import Foundation
@_spi(Testing) import MySQLStore
@_spi(Testing) import PostgresStore
import SQLiteStore
import SubscriptionModel

/// The backends a test suite runs on, and a fresh store of each: shared by every test target that
/// runs on both (not linked into iapctl).
///
/// SQLite always; MySQL/MariaDB when `IAPCTL_TEST_MYSQL_URL` is set, PostgreSQL when
/// `IAPCTL_TEST_POSTGRES_URL` is (`scripts/test` starts private servers): a new database per
/// store, dropped by the cleanup.
public enum TestBackend: String, Sendable, CaseIterable {
    case sqlite
    case mysql
    case postgres

    /// Backends usable on this machine, in declaration order.
    public static var available: [TestBackend] {
        [.sqlite] + (TestMySQL.isConfigured ? [.mysql] : []) + (TestPostgres.isConfigured ? [.postgres] : [])
    }

    /// A new, empty, migrated store that nothing else uses, and how to dispose of it. `label` names
    /// its SQLite folder (`iapctl-LABEL-…`) or MySQL database (`iapctl_LABEL_…`).
    public func makeStore(label: String) throws -> (store: any Store, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("iapctl-\(label)-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let store = try SQLiteStore(path: dir.appendingPathComponent("test.db").path, create: true)
            _ = try store.migrate()
            return (store, { try? FileManager.default.removeItem(at: dir) })
        case .mysql:
            let (url, password) = try TestMySQL.scratch(label: label)
            let store = try MySQLStore(url: url, password: password, create: true)
            if !TestMySQL.migratesEachStore {
                for statement in try TestMySQL.migratedSchema.get() { try store.executeForTesting(statement) }
            }
            _ = try store.migrate()
            return (store, { try? MySQLStore.dropDatabase(url: url, password: password) })
        case .postgres:
            let (url, password) = try TestPostgres.scratch(label: label)
            let store = try PostgresStore(url: url, password: password, create: true)
            _ = try store.migrate()
            return (store, { try? PostgresStore.dropDatabase(url: url, password: password) })
        }
    }
}

/// The PostgreSQL test server `IAPCTL_TEST_POSTGRES_URL` and `IAPCTL_TEST_POSTGRES_PASSWORD` name
/// (`scripts/postgres-test-server start`).
public enum TestPostgres {
    /// Whether a test server is configured.
    public static var isConfigured: Bool { ProcessInfo.processInfo.environment["IAPCTL_TEST_POSTGRES_URL"] != nil }

    /// The server's URL with a database name nothing uses (`iapctl_LABEL_…`, not created), and the
    /// password; drop it with `PostgresStore.dropDatabase(url:password:)`.
    public static func scratch(label: String) throws -> (url: PostgresURL, password: String?) {
        let env = ProcessInfo.processInfo.environment
        let name = "iapctl_\(label)_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return (try PostgresURL(parsing: url(database: name)), env["IAPCTL_TEST_POSTGRES_PASSWORD"])
    }

    /// The test server's URL with its database replaced by `database`.
    public static func url(database: String) -> String {
        let url = ProcessInfo.processInfo.environment["IAPCTL_TEST_POSTGRES_URL"] ?? ""
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let end = rest.firstIndex(of: "?") ?? rest.endIndex
        let slash = rest[..<end].firstIndex(of: "/") ?? end
        return String(url[..<slash]) + "/" + database + String(url[end...])
    }
}

/// The MySQL/MariaDB test server `IAPCTL_TEST_MYSQL_URL` and `IAPCTL_TEST_MYSQL_PASSWORD` name.
public enum TestMySQL {
    /// The statements that give an empty database the tables `migrate()` makes: each table's
    /// `SHOW CREATE TABLE` text (columns, keys, checks, foreign keys) and the migration rows, read
    /// once per test process from a database `MySQLStore.migrate()` migrated. A fresh store made
    /// from them is current for `migrate()` (which then runs no migration): about 0.2 s instead of
    /// 1.5 s of committed DDL per store. Migrations themselves are tested by `MySQLStoreTests`;
    /// `MySQLStoreTests.FreshStoreTests` checks that a copy has the migrated database's tables.
    /// `IAPCTL_TEST_MIGRATE_EACH_STORE=1`: every fresh store migrated from empty instead (to rule the
    /// copy out, or to measure what it saves).
    public static let migratesEachStore = ProcessInfo.processInfo.environment["IAPCTL_TEST_MIGRATE_EACH_STORE"] == "1"

    public static let migratedSchema: Result<[String], StoreError> = {
        do {
            return .success(try readMigratedSchema())
        } catch let error as StoreError {
            return .failure(error)
        } catch {
            return .failure(StoreError.failure("reading the migrated template database: \(error)"))
        }
    }()

    private static func readMigratedSchema() throws -> [String] {
        let (url, password) = try scratch(label: "template")
        let store = try MySQLStore(url: url, password: password, create: true)
        defer { try? store.dropDatabase() }
        _ = try store.migrate()
        let tables = try client(url, password, "SHOW TABLES").map { $0[0] }
        let creates = try tables.map { table in
            guard let text = try client(url, password, "SHOW CREATE TABLE `\(table)`").first?.last else {
                throw StoreError.failure("SHOW CREATE TABLE \(table) gave no row")
            }
            return text
        }
        let migrations = try client(url, password, "SELECT version, name, applied_at FROM iap_schema_migrations ORDER BY version")
            .map { "(\($0[0]), '\($0[1].replacingOccurrences(of: "'", with: "''"))', \($0[2]))" }
        guard !creates.isEmpty, !migrations.isEmpty else { throw StoreError.failure("the migrated template database is empty") }
        return ["SET foreign_key_checks = 0"] + creates
            + [
                "INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES " + migrations.joined(separator: ", "),
                "SET foreign_key_checks = 1",
            ]
    }

    /// Rows of `sql` on `url`'s database through the `mariadb` client (the password in `MYSQL_PWD`,
    /// never argv).
    public static func client(_ url: MySQLURL, _ password: String?, _ sql: String) throws -> [[String]] {
        guard let path = Programs.which("mariadb") ?? Programs.which("mysql") else {
            throw StoreError.failure("the mariadb client is not installed (apt-get install mariadb-client)")
        }
        var arguments = ["--no-defaults", "--batch", "--skip-column-names", "--database=\(url.database)"]
        if let user = url.user { arguments.append("--user=\(user)") }
        if let socket = url.socket { arguments.append("--socket=\(socket)") } else { arguments.append("--host=\(url.host)") }
        if let port = url.port { arguments.append("--port=\(port)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments + ["--execute", sql]
        var environment = ProcessInfo.processInfo.environment
        environment["MYSQL_PWD"] = password ?? ""
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StoreError.failure("mariadb client failed on \(sql): \(String(decoding: message, as: UTF8.self))")
        }
        return batchRows(String(decoding: data, as: UTF8.self))
    }

    /// Whether a test server is configured.
    public static var isConfigured: Bool { ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_URL"] != nil }

    /// The rows of the `mariadb --batch` client's output: tab-separated fields with `\n`, `\t`, `\\`
    /// and `\0` escaped.
    public static func batchRows(_ output: String) -> [[String]] {
        output.split(separator: "\n").map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { field in
                var text = ""
                var escaped = false
                for character in field {
                    if escaped {
                        switch character {
                        case "n": text.append("\n")
                        case "t": text.append("\t")
                        case "0": text.append("\0")
                        default: text.append(character)
                        }
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else {
                        text.append(character)
                    }
                }
                return text
            }
        }
    }

    /// The server's URL with a database name nothing uses (`iapctl_LABEL_…`, not created), and the
    /// password; drop it with `MySQLStore.dropDatabase(url:password:)`.
    public static func scratch(label: String) throws -> (url: MySQLURL, password: String?) {
        let env = ProcessInfo.processInfo.environment
        var url = try MySQLURL(parsing: env["IAPCTL_TEST_MYSQL_URL"] ?? "")
        url.database = "iapctl_\(label)_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return (url, env["IAPCTL_TEST_MYSQL_PASSWORD"])
    }
}

/// A temporary folder for one test's files, removed when the test ends.
public final class Scratch {
    public let directory: URL

    public init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("iapctl-scratch-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A path inside the folder (the file is not created).
    public func path(_ name: String = "test.db") -> String { directory.appendingPathComponent(name).path }

    public func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Permission bits of the file at `path`; throws when it has none (or does not exist).
    public func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        guard let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return mode
    }
}
