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
    /// Whether a test server is configured.
    public static var isConfigured: Bool { ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_URL"] != nil }

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
