import Foundation
import SQLiteStore
import SubscriptionEngine
import Testing

/// The `Store` backends the contract suite runs against.
///
/// MySQL hook: the MySQL helper adds `case mysql`, appends it to `available` when the
/// environment variable `IAPCTL_TEST_MYSQL_URL` is set, and makes it in `makeStore()`
/// (a fresh, empty database per test, dropped by `cleanup`). Nothing else in the suite changes.
enum StoreBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite

    var testDescription: String { rawValue }

    /// Backends usable on this machine, in declaration order.
    static var available: [StoreBackend] { allCases.filter(\.isAvailable) }

    /// SQLite always; MySQL (when added) only when `IAPCTL_TEST_MYSQL_URL` is set:
    /// `case .mysql: ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_URL"] != nil`.
    var isAvailable: Bool {
        switch self {
        case .sqlite: true
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
    case notFound, schemaMismatch, conflict, busy, unavailable, accessDenied, failure

    init(_ error: StoreError) {
        switch error {
        case .notFound: self = .notFound
        case .schemaMismatch: self = .schemaMismatch
        case .conflict: self = .conflict
        case .busy: self = .busy
        case .unavailable: self = .unavailable
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
