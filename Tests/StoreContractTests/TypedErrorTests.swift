import SubscriptionEngine
import SubscriptionModel
import Testing

/// The store's seam is typed. Every `StoreSession` method, `schemaVersion()` and
/// `migrate()` throw `StoreError` itself, so callers catch it without a cast, on every backend;
/// `read`/`write` pass what their body throws on unchanged.
@Suite("Store contract: typed errors")
struct TypedErrorTests {
    /// What the session threw looking `order` up and inserting it. Compiles only while `order(no:)`
    /// and `insertOrder(_:)` are `throws(StoreError)`: an untyped `throws` would make `error` an
    /// `any Error`, which does not convert.
    static func failure(of session: some StoreSession, inserting order: Order) -> StoreError? {
        do {
            _ = try session.order(no: order.no)
            _ = try session.insertOrder(order)
            return nil
        } catch {
            let typed: StoreError = error
            return typed
        }
    }

    /// What the schema entry points threw. Compiles only while `schemaVersion()` and `migrate()`
    /// are `throws(StoreError)`.
    static func schemaFailure(of store: some Store) -> StoreError? {
        do {
            _ = try store.schemaVersion()
            _ = try store.migrate()
            return nil
        } catch {
            let typed: StoreError = error
            return typed
        }
    }

    @Test(arguments: StoreBackend.available)
    func aDuplicateKeyIsATypedConflictPassedOnUnchanged(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try $0.insertOrder(Sample.order("no-1", tradeNo: "t-1")) }
            let duplicate = Sample.order("no-1", tradeNo: "t-2")
            let caught = try store.write(commit: false) { Self.failure(of: $0, inserting: duplicate) }
            let conflict = try #require(caught)
            #expect(StoreErrorKind(conflict) == .conflict, "got \(conflict)")
            // Thrown out of the body, the same error leaves `write` as it was: not wrapped.
            let passedOn = expectStoreError(.conflict) {
                try store.write { s throws in
                    if let error = Self.failure(of: s, inserting: duplicate) { throw error }
                }
            }
            #expect(passedOn == conflict)
            #expect(try store.read { try $0.counts().orders } == 1)
        }
    }

    @Test(arguments: StoreBackend.available)
    func migrateInsideATransactionIsATypedFailure(backend: StoreBackend) throws {
        try withStore(backend) { store in
            #expect(Self.schemaFailure(of: store) == nil)
            let inside = try store.read { _ in Self.schemaFailure(of: store) }
            let failure = try #require(inside)
            #expect(StoreErrorKind(failure) == .failure, "got \(failure)")
            #expect(failure.description.contains("migrate() called inside a transaction"), "got \(failure)")
        }
    }
}
