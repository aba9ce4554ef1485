import Foundation
@_spi(Testing) import MySQLStore
import SQLiteStore
import SubscriptionEngine
import Testing

/// The `Store` backends the contract suite runs against.
///
/// MySQL/MariaDB runs when `IAPCTL_TEST_MYSQL_URL` is set (scripts/test starts a private server):
/// a fresh database per test, dropped by `cleanup`.
enum StoreBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case mysql

    var testDescription: String { rawValue }

    /// Backends usable on this machine, in declaration order.
    static var available: [StoreBackend] { allCases.filter(\.isAvailable) }

    /// SQLite always; MySQL only when `IAPCTL_TEST_MYSQL_URL` is set.
    var isAvailable: Bool {
        switch self {
        case .sqlite: true
        case .mysql: ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_URL"] != nil
        }
    }

    /// A new, empty, migrated store that nothing else uses, and how to dispose of it.
    func makeStore() throws -> (store: any Store, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("iapctl-contract-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let store = try SQLiteStore(path: dir.appendingPathComponent("test.db").path, create: true)
            _ = try store.migrate()
            return (store, { try? FileManager.default.removeItem(at: dir) })
        case .mysql:
            let env = ProcessInfo.processInfo.environment
            var url = try MySQLURL(parsing: env["IAPCTL_TEST_MYSQL_URL"] ?? "")
            url.database = "iapctl_c_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let password = env["IAPCTL_TEST_MYSQL_PASSWORD"]
            let store = try MySQLStore(url: url, password: password, create: true)
            _ = try store.migrate()
            return (store, { [url] in try? MySQLStore.dropDatabase(url: url, password: password) })
        }
    }
}

/// Runs `body` with a fresh store of `backend`, disposing of it afterwards.
func withStore(_ backend: StoreBackend, _ body: (any Store) throws -> Void) throws {
    let (store, cleanup) = try backend.makeStore()
    defer { cleanup() }
    try body(store)
}

/// A thrown error the tests can recognise.
struct Boom: Error, Equatable {}

/// The case of a `StoreError`, ignoring the message.
enum StoreErrorKind: Equatable {
    case notFound, schemaMismatch, conflict, busy, unavailable, accessDenied, ioFailure, failure

    init(_ error: StoreError) {
        switch error {
        case .notFound: self = .notFound
        case .schemaMismatch: self = .schemaMismatch
        case .conflict: self = .conflict
        case .busy: self = .busy
        case .unavailable: self = .unavailable
        case .ioFailure: self = .ioFailure
        case .accessDenied: self = .accessDenied
        case .failure: self = .failure
        }
    }
}

/// Runs `body`, expecting a `StoreError`, and returns it.
func expectStoreError(
    _ kind: StoreErrorKind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StoreError? {
    do {
        try body()
        Issue.record("expected StoreError.\(kind), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        #expect(StoreErrorKind(error) == kind, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected StoreError.\(kind), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension StoreBackend {
    /// Two stores (two connections) on one new, migrated database, and how to dispose of them.
    func makeStorePair() throws -> (first: any Store, second: any Store, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("iapctl-contract-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let path = dir.appendingPathComponent("test.db").path
            let first = try SQLiteStore(path: path, create: true)
            _ = try first.migrate()
            return (first, try SQLiteStore(path: path, create: false), { try? FileManager.default.removeItem(at: dir) })
        case .mysql:
            let env = ProcessInfo.processInfo.environment
            var url = try MySQLURL(parsing: env["IAPCTL_TEST_MYSQL_URL"] ?? "")
            url.database = "iapctl_c_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let password = env["IAPCTL_TEST_MYSQL_PASSWORD"]
            let first = try MySQLStore(url: url, password: password, create: true)
            _ = try first.migrate()
            let second = try MySQLStore(url: url, password: password, create: false)
            return (first, second, { [url] in try? MySQLStore.dropDatabase(url: url, password: password) })
        }
    }
}
