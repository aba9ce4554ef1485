import AppStoreJWS
import AppleFlows
import ClientSubmissions
import Foundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SQLiteStore
import StoreTestSupport
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The Store backends IAPOperations is tested on (SQLite always, MySQL/MariaDB when
/// `IAPCTL_TEST_MYSQL_URL` is set).
typealias Backend = TestBackend

/// A throwaway CA with Apple's OIDs, a verifier that trusts it, a fresh store of one backend and
/// pending orders `token(0)…`: the world one ingest test runs in.
final class World {
    static let bundleId = "com.example.ops"
    static let product = "com.example.ops.monthly"
    static let day: Int64 = 86_400_000
    /// Well inside the test PKI's validity, in the past.
    static let t0: Int64 = 1_750_000_000_000

    let store: any Store
    let cleanup: () -> Void
    let pki: TestPKI
    let builder: PayloadBuilder
    let verifier: AppStoreVerifier
    let context = EngineContext(actor: "tester", command: "ops-test")

    init(_ backend: Backend, orders: Int = 2) throws {
        (store, cleanup) = try backend.makeStore(label: "ops")
        pki = try Self.sharedPKI()
        builder = PayloadBuilder(pki: pki, bundleId: Self.bundleId, environment: "Sandbox")
        verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(roots: [pki.rootDER], bundleId: Self.bundleId, environments: ["Sandbox"]))
        try store.write { session in
            for i in 0..<orders {
                _ = try session.insertOrder(Order(no: Self.token(i), userId: "user-\(i)", productId: Self.product))
            }
        }
    }

    deinit { cleanup() }

    nonisolated(unsafe) private static var pki: TestPKI?
    private static let lock = NSLock()
    /// One CA for the whole run (making one costs a few key generations).
    static func sharedPKI() throws -> TestPKI {
        lock.lock()
        defer { lock.unlock() }
        if let pki { return pki }
        let made = try TestPKI.make()
        pki = made
        return made
    }

    static func token(_ i: Int) -> String { String(format: "0badcafe-0000-4000-8000-%012d", i) }

    /// A signed transaction of subscription `original` (period `period`), bought with order `token`.
    func transaction(
        _ id: String, original: String, period: Int64 = 0, token: String? = nil, product: String = World.product
    ) -> JWSForge.TransactionPayload {
        let start = Self.t0 + period * 30 * Self.day
        return JWSForge.TransactionPayload(
            transactionId: id, originalTransactionId: original, bundleId: Self.bundleId, productId: product,
            purchaseDate: start, originalPurchaseDate: Self.t0, expiresDate: start + 30 * Self.day, appAccountToken: token,
            signedDate: start + 5_000, environment: "Sandbox")
    }

    /// A signed notification carrying `tx`.
    func notification(
        _ type: String, _ subtype: String? = nil, uuid: String, tx: JWSForge.TransactionPayload
    ) throws -> String {
        try builder.notification(
            type: type, subtype: subtype, uuid: uuid, signedDate: tx.signedDate + 1_000, transaction: tx)
    }

    /// The purchase (order `token(i)`) and first renewal of subscription `orig-i`.
    func lifecycle(_ i: Int) throws -> [String] {
        [
            try notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: "buy-\(i)", tx: transaction("\(i)000", original: "orig-\(i)", token: Self.token(i))),
            try notification("DID_RENEW", uuid: "renew-\(i)", tx: transaction("\(i)001", original: "orig-\(i)", period: 1)),
        ]
    }

    /// `lines` as `notify` input, verified in chunks of `chunkSize`.
    func batches(_ lines: [String], chunkSize: Int = 512) -> VerifiedBatches {
        VerifiedBatches(Lines(lines), verifier: verifier, chunkSize: chunkSize, timings: PhaseTimings(enabled: false))
    }

    func ingest(shouldStop: @escaping () -> Bool = { false }) -> NotificationIngest {
        NotificationIngest(store: store, context: context, shouldStop: shouldStop)
    }

    /// Every chunk of `lines` by group commit; the results in delivery order.
    func commit(_ lines: [String], chunkSize: Int = 512) throws -> [(line: Int, result: IngestResult)] {
        let batches = batches(lines, chunkSize: chunkSize)
        let ingest = ingest()
        var results: [(line: Int, result: IngestResult)] = []
        while let batch = try batches.next() {
            try ingest.applyCommitted(batch, deliver: { results.append(($0.line, $1)) })
        }
        return results
    }

    var counts: StoreCounts { get throws { try store.read { try $0.counts() } } }

    func order(_ i: Int) throws -> Order? { try store.read { try $0.order(no: Self.token(i)) } }

    func contract(_ id: String) throws -> Contract? { try store.read { try $0.contract(contractId: id) } }

    func ledger(original: String) throws -> [LedgerEntry] {
        try store.read { try $0.ledger(transactionIds: [], originalTransactionIds: [original], appAccountTokens: []) }
    }
}

/// In-memory `notify` input: one JWS per line; ``unreadable`` stands for a line the framing could
/// not read (not UTF-8, too long).
struct Lines: IngestInput {
    static let unreadable = "\u{0}unreadable"

    var lines: [String]
    var index = 0

    init(_ lines: [String]) { self.lines = lines }

    var isEmpty: Bool { lines.isEmpty }
    func isReady(waiting milliseconds: Int32) -> Bool { true }
    mutating func next() throws -> WebhookBody.Item? {
        guard index < lines.count else { return nil }
        index += 1
        guard lines[index - 1] != Self.unreadable else {
            return WebhookBody.Item(line: index, result: .failure(VerificationFailure(.invalidJWTFormat, "line is not valid UTF-8")))
        }
        return WebhookBody.Item(line: index, result: .success(lines[index - 1]))
    }
}

extension IngestResult {
    /// The engine's verdict, `rejected` for refused and poison items.
    var verdict: Verdict {
        switch self {
        case .rejected, .poison: .rejected
        case .applied(_, let outcome): outcome.verdict
        }
    }
}
