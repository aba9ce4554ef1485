import Foundation
@_spi(Testing) import MySQLStore
@_spi(Testing) import PostgresStore
import SQLiteStore
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The `Store` backends the contract suite runs against (a fresh store each: `makeStore(label:)`).
typealias StoreBackend = TestBackend

/// Runs `body` with a fresh store of `backend`, disposing of it afterwards.
func withStore(_ backend: StoreBackend, _ body: (any Store) throws -> Void) throws {
    let (store, cleanup) = try backend.makeStore(label: "contract")
    defer { cleanup() }
    try body(store)
}

/// A thrown error the tests can recognise.
struct Boom: Error, Equatable {}

/// The case of a `StoreError`, ignoring the message.
enum StoreErrorKind: Equatable {
    case notFound, schemaMismatch, conflict, busy, unavailable, libraryUnavailable, accessDenied, misconfigured, ioFailure, failure,
        corrupt

    init(_ error: StoreError) {
        switch error {
        case .notFound: self = .notFound
        case .schemaMismatch: self = .schemaMismatch
        case .conflict: self = .conflict
        case .busy: self = .busy
        case .unavailable: self = .unavailable
        case .libraryUnavailable: self = .libraryUnavailable
        case .ioFailure: self = .ioFailure
        case .accessDenied: self = .accessDenied
        case .misconfigured: self = .misconfigured
        case .failure: self = .failure
        case .corrupt: self = .corrupt
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
            let (url, password) = try TestMySQL.scratch(label: "c")
            let first = try MySQLStore(url: url, password: password, create: true)
            _ = try first.migrate()
            let second = try MySQLStore(url: url, password: password, create: false)
            return (first, second, { [url] in try? MySQLStore.dropDatabase(url: url, password: password) })
        case .postgres:
            let (url, password) = try TestPostgres.scratch(label: "c")
            let first = try PostgresStore(url: url, password: password, create: true)
            _ = try first.migrate()
            let second = try PostgresStore(url: url, password: password, create: false)
            return (first, second, { [url] in try? PostgresStore.dropDatabase(url: url, password: password) })
        }
    }
}
