import Foundation
@_spi(Testing) import MySQLStore
import SQLiteStore
import SubscriptionModel

/// The backends a test suite runs on, and a fresh store of each: shared by every test target that
/// runs on both (not linked into iapctl).
///
/// SQLite always; MySQL/MariaDB when `IAPCTL_TEST_MYSQL_URL` is set (`scripts/test` starts a private
/// server): a new database per store, dropped by the cleanup.
public enum TestBackend: String, Sendable, CaseIterable {
    case sqlite
    case mysql

    /// Backends usable on this machine, in declaration order.
    public static var available: [TestBackend] { TestMySQL.isConfigured ? [.sqlite, .mysql] : [.sqlite] }

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
        }
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
