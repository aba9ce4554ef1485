import AppStoreAPI
import AppStoreJWS
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// Where `apple reconcile` gets Apple's answers: the App Store Server API through the command's
/// client (pagination, 429 waits and retries are the client's), or a test's stand-in. A failure is
/// thrown as Apple's typed ``AppStoreAPIError`` (an unknown id is `notFound`).
public protocol ReconcileSource {
    /// Get All Subscription Statuses for `transactionId`'s customer.
    func statuses(_ transactionId: String) throws -> (server: APIServer, items: [SubscriptionStatusItem])
    /// Get Transaction History for `transactionId`'s customer, page by page: `page` hears each page's
    /// signed transactions as it arrives (the source keeps no page once `page` returned).
    func history(_ transactionId: String, page: (SignedTransactions) throws -> Void) throws
    /// Get Transaction Info: the one signed transaction.
    func transaction(_ transactionId: String) throws -> SignedTransactions
    /// Look Up Order ID: its signed transactions; nil when Apple says the order ID is invalid.
    func lookup(_ orderId: String) throws -> SignedTransactions?
}

/// `iapctl apple reconcile`: asks Apple what is true now about each subscription in scope (Get All
/// Subscription Statuses and Get Transaction History), verifies every signed item with the trust
/// settings, turns each verified answer into an Apple-pulled event (source `apple_api`) and applies it
/// through the one engine, one write transaction per subscription. The changes the engine makes are the
/// differences between the database and Apple.
///
/// A dry run (`apply` false) runs exactly the same work in transactions that are rolled back, so it
/// predicts the real run row by row. A subscription that already agrees with Apple is left untouched:
/// its work is rolled back (no ledger rows for answers that change nothing), so a second run writes
/// nothing and reports nothing. Items that fail verification are refused and kept in the ledger as
/// `rejected` (like `notify` keeps them); a subscription that changed, or kept something, commits its
/// answers' ledger rows (source `apple_api`, the raw bytes as Apple sent them).
public final class AppleReconcile {
    /// Which subscriptions to ask Apple about.
    public enum Scope: Sendable, Equatable {
        /// The contracts of a user in the database.
        case user(String)
        /// One subscription by its originalTransactionId.
        case contract(String)
        /// The subscription of any of its transactionIds (Get Transaction Info names it).
        case transaction(String)
        /// The subscriptions of an order ID of a receipt e-mail (Look Up Order ID).
        case orderId(String)
        /// Every contract in the database, optionally only those of a stored status and those whose last
        /// event is at or after a time; resumable (``checkpointName``).
        case all(status: ContractStatus?, since: Int64?)
    }

    /// The most bytes of signed items one subscription's answers may hold (64 MiB): the history is
    /// read page by page, but the items of this subscription are applied together, so they are kept
    /// until then. Apple's history of one subscription is a few kilobytes a period.
    public static let maxItemBytes = 64 << 20

    /// The checkpoint an `--apply` run of `--all` saves after each subscription (its value: the last
    /// originalTransactionId done), in the same transaction as that subscription's work.
    public static let checkpointName = "reconcile:all"

    /// Which answer of Apple's an item came from.
    public enum Answer: String, Sendable {
        case history = "transaction history"
        case status = "subscription status"
        case transaction = "transaction info"
        case lookup = "order lookup"
    }

    /// A scope Apple or the database cannot resolve.
    public enum ScopeError: Error, Sendable, Equatable {
        /// The user has no contract in the database.
        case userHasNoContracts(String)
        /// Apple says the order ID is invalid.
        case invalidOrderId(String)
        /// Look Up Order ID found no transaction.
        case orderIdWithoutTransactions(String)
    }

    /// The subscriptions a scope names, and the items refused while resolving it.
    public struct Plan {
        public var originals: [String]
        /// Items Apple returned while resolving the scope that failed verification (already kept).
        public var refused: [Row]
        /// With `--all`: the subscription an earlier `--apply` run finished last (those up to it are skipped).
        public var resumedAfter: String?
    }

    /// One difference (or problem) of a subscription, as reported.
    public enum Row {
        /// An answer applied through the engine that changed rows, or that the engine could not attach
        /// (`unmatched`, `conflict`, `rejected`).
        case applied(Answer, SubscriptionEvent, Outcome)
        /// A signed item that failed verification: refused, kept in the ledger as `rejected`.
        case refused(Answer, VerificationFailure)
        /// A verified item whose fields do not fit the store: refused, kept as `rejected`.
        case poison(Answer, SubscriptionEvent, String)
        /// Apple does not know the subscription.
        case unknown(AppStoreAPIError)
    }

    /// What reconciling one subscription found.
    public struct Result {
        public var original: String
        /// The differences and problems, in Apple's order (history, then the status).
        public var rows: [Row]
        /// Whether the database already agrees with Apple (no row).
        public var agrees: Bool { rows.isEmpty }
    }

    let store: any Store
    let source: any ReconcileSource
    let makeVerifier: (APIServer) throws -> AppStoreVerifier
    let context: EngineContext
    let engine: SubscriptionEventEngine
    let clock: () -> Int64
    /// Whether the work is committed (`--apply`); otherwise every transaction is rolled back.
    public let apply: Bool
    private var verifiers: [APIServer: AppStoreVerifier] = [:]

    /// `verifier`: the trust settings' verifier for items `server` sent (``AppleItems/verifier(_:for:)``).
    public init(
        store: any Store, source: any ReconcileSource, verifier: @escaping (APIServer) throws -> AppStoreVerifier,
        context: EngineContext, apply: Bool, engine: SubscriptionEventEngine = SubscriptionEventEngine(),
        clock: @escaping () -> Int64 = Timestamp.now
    ) {
        self.store = store
        self.source = source
        self.makeVerifier = verifier
        self.context = context
        self.apply = apply
        self.engine = engine
        self.clock = clock
    }

    func verifier(_ server: APIServer) throws -> AppStoreVerifier {
        if let made = verifiers[server] { return made }
        let made = try makeVerifier(server)
        verifiers[server] = made
        return made
    }

    // MARK: the scope

    /// The subscriptions of `scope`, in a stable order (the database's by contract id; Apple's for an
    /// order ID). Asks Apple for `--transaction` and `--order-id`; an item refused there is kept.
    public func plan(_ scope: Scope) throws -> Plan {
        switch scope {
        case .contract(let original):
            return Plan(originals: [original], refused: [])
        case .user(let user):
            let originals = try store.read { try $0.contracts(matching: ContractFilter(userId: user)) }.map(\.contractId)
            guard !originals.isEmpty else { throw ScopeError.userHasNoContracts(user) }
            return Plan(originals: originals.sorted(), refused: [])
        case .all(let status, let since):
            let (contracts, checkpoint) = try store.read { session in
                (try session.contracts(matching: ContractFilter(status: status)), try session.checkpoint(named: Self.checkpointName))
            }
            let after = checkpoint?.value
            let originals = contracts.filter { contract in
                since.map { (contract.lastEventDate ?? Int64.min) >= $0 } ?? true
            }.map(\.contractId).sorted().filter { after == nil || $0 > after! }
            return Plan(originals: originals, refused: [], resumedAfter: after)
        case .transaction(let id):
            return try resolve(try source.transaction(id), .transaction)
        case .orderId(let orderId):
            guard let found = try source.lookup(orderId) else { throw ScopeError.invalidOrderId(orderId) }
            guard !found.items.isEmpty else { throw ScopeError.orderIdWithoutTransactions(orderId) }
            return try resolve(found, .lookup)
        }
    }

    /// The subscriptions Apple's signed transactions name, each once in Apple's order; refused items kept.
    private func resolve(_ found: SignedTransactions, _ answer: Answer) throws -> Plan {
        let verifier = try verifier(found.server)
        var plan = Plan(originals: [], refused: [])
        var refused: [(raw: String, failure: VerificationFailure)] = []
        for jws in found.items {
            let report = verifier.verify(jws, as: .transaction)
            if let failure = report.failure {
                refused.append((jws, failure))
            } else if let original = report.transaction?.originalTransactionId, !plan.originals.contains(original) {
                plan.originals.append(original)
            }
        }
        if !refused.isEmpty {
            let now = clock()
            try RetryPolicy.run {
                try store.write(commit: apply) { session in
                    for item in refused {
                        try RejectedItems.keep(item.raw, source: .appleAPI, why: item.failure.plainMessage, receivedAt: now, in: session)
                    }
                }
            }
            plan.refused = refused.map { .refused(answer, $0.failure) }
        }
        return plan
    }

    // MARK: one subscription

    /// One verified item of Apple's answers, or one refused, in Apple's order.
    enum Item {
        case event(Answer, SubscriptionEvent)
        case refused(Answer, raw: String, VerificationFailure)
    }

    /// Asks Apple about `original` (outside any transaction), then applies what it said in one write
    /// transaction (committed only under `--apply`, and only when something changed or was kept);
    /// `checkpoint`: also save the ``checkpointName`` checkpoint at `original` in that transaction.
    public func reconcile(_ original: String, checkpoint: Bool = false) throws -> Result {
        let items: [Item]
        do {
            items = try ask(original)
        } catch let error as AppStoreAPIError where error.kind == .notFound {
            return Result(original: original, rows: [.unknown(error)])
        }
        let now = clock()
        let rows = try RetryPolicy.run {
            try store.write(commit: apply) { session in
                let rows = try self.applied(items, in: session, now: now)
                if checkpoint {
                    try session.saveCheckpoint(Checkpoint(name: Self.checkpointName, value: original, updatedAt: now))
                }
                return rows
            }
        }
        return Result(original: original, rows: rows)
    }

    /// An `--all` run that went through every subscription: its checkpoint is removed (nothing under a dry run).
    public func finishAll() throws {
        guard apply else { return }
        _ = try RetryPolicy.run { try store.write { try $0.deleteCheckpoint(named: Self.checkpointName) } }
    }

    /// Apple's statuses and history of `original`, verified, as events of source `apple_api`.
    func ask(_ original: String) throws -> [Item] {
        let statuses = try source.statuses(original)
        var items: [Item] = []
        var bytes = 0
        try source.history(original) { page in
            let historyVerifier = try verifier(page.server)
            for jws in page.items {
                let report = historyVerifier.verify(jws, as: .transaction)
                if let failure = report.failure {
                    items.append(.refused(.history, raw: jws, failure))
                } else if report.transaction?.originalTransactionId == original,
                    let event = EventMapping.event(from: report, raw: jws, source: .appleAPI)
                {
                    items.append(.event(.history, event))
                } else {
                    continue
                }
                bytes += jws.utf8.count
                guard bytes <= Self.maxItemBytes else {
                    throw AppStoreAPIError(
                        .malformedResponse,
                        "Get Transaction History of \(original): page \(page.pages) brings the items kept for this "
                            + "subscription past \(Self.maxItemBytes >> 20) MiB; stopped")
                }
            }
        }
        let statusVerifier = try verifier(statuses.server)
        for item in statuses.items where item.original == nil || item.original == original {
            let raw = item.json?.serialized() ?? item.transaction
            let transaction = statusVerifier.verify(item.transaction, as: .transaction)
            let renewal = item.renewal.map { statusVerifier.verify($0, as: .renewalInfo) }
            if let failure = transaction.failure ?? renewal?.failure {
                items.append(.refused(.status, raw: raw, failure))
                continue
            }
            guard let tx = transaction.transaction, tx.originalTransactionId == original, let status = item.status,
                let event = EventMapping.statusEvent(tx, renewal?.renewalInfo, status: Int(status), raw: raw)
            else { continue }
            items.append(.event(.status, event))
        }
        if items.isEmpty {
            // Apple answered for the customer, but about other subscriptions only.
            throw AppStoreAPIError(
                .notFound,
                "Apple's statuses and history of the customer name no subscription \(original) "
                    + "(an originalTransactionId; for any other transactionId use --transaction)")
        }
        return items
    }

    /// Keeps the refused items and applies the others through the engine in the open transaction;
    /// returns the rows to report, in Apple's order. The engine's work is rolled back when it changed
    /// nothing (a subscription that agrees with Apple keeps nothing); refused items are kept anyway.
    private func applied(_ items: [Item], in session: any StoreSession, now: Int64) throws -> [Row] {
        var rows: [(index: Int, row: Row)] = []
        var events: [(index: Int, answer: Answer, event: SubscriptionEvent)] = []
        for (index, item) in items.enumerated() {
            switch item {
            case .refused(let answer, let raw, let failure):
                try RejectedItems.keep(raw, source: .appleAPI, why: failure.plainMessage, receivedAt: now, in: session)
                rows.append((index, .refused(answer, failure)))
            case .event(let answer, let event):
                if let why = StoredFields.violation(event) {
                    try RejectedItems.keep(StoredFields.rejectedEntry(event, detail: why, receivedAt: now), in: session)
                    rows.append((index, .poison(answer, event, why)))
                } else {
                    events.append((index, answer, event))
                }
            }
        }
        rows += try keepingOnlyChanges(in: session) {
            try events.compactMap { index, answer, event in
                let outcome = try engine.apply(event, inSavepointOf: session, context: context)
                let attached = [.applied, .duplicate, .stale, .ignored].contains(outcome.verdict)
                return outcome.changes.isEmpty && attached ? nil : (index, .applied(answer, event, outcome))
            }
        }
        return rows.sorted { $0.index < $1.index }.map(\.row)
    }

    /// Runs `body` in a savepoint that is rolled back when it reports no row.
    private func keepingOnlyChanges(
        in session: any StoreSession, _ body: () throws -> [(index: Int, row: Row)]
    ) throws -> [(index: Int, row: Row)] {
        struct Agrees: Error {}
        do {
            return try session.savepoint {
                let rows = try body()
                guard !rows.isEmpty else { throw Agrees() }
                return rows
            }
        } catch is Agrees {
            return []
        }
    }
}
