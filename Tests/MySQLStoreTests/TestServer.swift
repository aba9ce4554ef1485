import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

/// The private test server started by `scripts/mariadb-test-server start` (its exports).
enum TestServer {
    static let urlText = ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_URL"]
    static let password = ProcessInfo.processInfo.environment["IAPCTL_TEST_MYSQL_PASSWORD"]

    /// True when a server is configured; suites that need one are skipped otherwise.
    static var isConfigured: Bool { urlText?.isEmpty == false }

    static let skipReason: Comment =
        "IAPCTL_TEST_MYSQL_URL is not set: run eval \"$(scripts/mariadb-test-server start)\" first"

    static func baseURL() throws -> MySQLURL {
        try MySQLURL(parsing: try #require(urlText))
    }

    /// The base URL pointing at a new, unique database name (`iapctl_t_…`, covered by the test grant).
    static func uniqueURL() throws -> MySQLURL {
        var url = try baseURL()
        url.database = "iapctl_t_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return url
    }

    /// A store on a fresh database (created, migrated unless `migrate` is false), dropped afterwards.
    @discardableResult
    static func withFreshStore<T>(migrate: Bool = true, _ body: (MySQLStore) throws -> T) throws -> T {
        let store = try MySQLStore(url: uniqueURL(), password: password, create: true)
        defer { try? store.dropDatabase() }
        if migrate { _ = try store.migrate() }
        return try body(store)
    }
}

/// A thrown error the tests can recognise.
struct Boom: Error, Equatable {}

/// Runs `body`, expecting a `StoreError`, and returns it.
@discardableResult
func expectStoreError(
    _ matches: (StoreError) -> Bool, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StoreError? {
    do {
        try body()
        Issue.record("expected a StoreError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        #expect(matches(error), "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension StoreError {
    var isConflict: Bool { if case .conflict = self { true } else { false } }
    var isBusy: Bool { if case .busy = self { true } else { false } }
    var isUnavailable: Bool { if case .unavailable = self { true } else { false } }
    var isAccessDenied: Bool { if case .accessDenied = self { true } else { false } }
    var isNotFound: Bool { if case .notFound = self { true } else { false } }
    var isSchemaMismatch: Bool { if case .schemaMismatch = self { true } else { false } }
    var isFailure: Bool { if case .failure = self { true } else { false } }
}

/// Sample rows.
enum Sample {
    static func order(
        _ no: String, user: String = "u1", tradeNo: String? = nil, originNo: String? = nil,
        status: OrderStatus = .pending, purchaseDate: Int64? = nil
    ) -> Order {
        Order(
            no: no, userId: user, productId: "com.example.pro", status: status, tradeNo: tradeNo, originNo: originNo,
            purchaseDate: purchaseDate, expiresDate: purchaseDate.map { $0 + 2_592_000_000 }, environment: "Sandbox",
            price: 10990, currency: "EUR", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_001)
    }

    static func contract(_ id: String, user: String = "u1", status: ContractStatus = .active) -> Contract {
        Contract(
            contractId: id, userId: user, productId: "com.example.pro", status: status, autoRenew: true,
            expiresDate: 1_702_592_000_000, environment: "Production", nextProductId: "com.example.pro.year",
            lastEventDate: 1_700_000_000_500, createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_002)
    }

    static func ledger(
        uuid: String? = nil, tx: String? = nil, original: String? = nil, token: String? = nil,
        signed: Int64? = nil, verdict: Verdict = .applied, raw: String = "eyJhbGciOiJFUzI1NiJ9.e30.sig"
    ) -> LedgerEntry {
        LedgerEntry(
            receivedAt: 1_700_000_001_000, source: .apple, notificationUUID: uuid, notificationType: "DID_RENEW",
            subtype: nil, transactionId: tx, originalTransactionId: original, appAccountToken: token,
            signedDate: signed, verdict: verdict, detail: "detail", raw: raw)
    }
}
