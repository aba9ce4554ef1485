/// The storage the engine and the commands talk to. Backends: SQLite (embedded), MySQL/MariaDB.
///
/// All work happens inside a transaction obtained from ``Store/read(_:)`` or ``Store/write(commit:_:)``.
/// A throw inside the closure rolls the whole transaction back.
///
/// Errors: everything a store itself reports is a ``StoreError`` (typed throws on ``StoreSession``,
/// ``schemaVersion()`` and ``migrate()``). `read` and `write` stay untyped (`throws`) on purpose: they
/// also throw whatever `body` throws, unchanged and unwrapped, and Swift cannot name the union "the
/// body's `E` or `StoreError`". Being generic over `E` with `throws(E)` would force the store's own
/// failures (BEGIN, COMMIT, the schema check) into the caller's error type, which means wrapping one in
/// the other; a second, `StoreError`-only overload would make every closure type-check twice for a
/// gain no caller needs. So: an error from `read`/`write` is either one `body` threw or a `StoreError`.
public protocol Store: AnyObject {
    /// Runs `body` in a read transaction (a consistent snapshot). Throws what `body` throws,
    /// unchanged, or a ``StoreError`` (see the protocol's note on errors).
    func read<T>(_ body: (any StoreSession) throws -> T) throws -> T
    /// Runs `body` in one write transaction. Commits when `commit` is true and `body` returns;
    /// rolls back when `body` throws or when `commit` is false (dry runs). Throws what `body`
    /// throws, unchanged, or a ``StoreError`` (see the protocol's note on errors).
    func write<T>(commit: Bool, _ body: (any StoreSession) throws -> T) throws -> T
    /// Schema version this database is at, and the version this build of iapctl writes.
    func schemaVersion() throws(StoreError) -> (current: Int, supported: Int)
    /// Creates or migrates the schema (idempotent). Returns the migrations applied. When some were
    /// applied, `work` runs with their names in the same write transaction that records their
    /// versions (with their data steps): a throw or a kill anywhere leaves every version it would
    /// have recorded unrecorded, and the next run does the whole job again. Throws what `work`
    /// throws, unchanged, or a ``StoreError``.
    func migrate(then work: (_ applied: [String], _ session: any StoreSession) throws -> Void) throws -> [String]
}

extension Store {
    /// Creates or migrates the schema (idempotent), with no work of its own. Returns the migrations applied.
    public func migrate() throws(StoreError) -> [String] {
        do {
            return try migrate(then: { _, _ in })
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.failure("migration failed: \(error)")  // unreachable: the work throws nothing
        }
    }
}

extension Store {
    /// Runs `body` in one write transaction that commits.
    public func write<T>(_ body: (any StoreSession) throws -> T) throws -> T {
        try write(commit: true, body)
    }
}

/// Filter for listing orders. `nil` means "any".
public struct OrderFilter: Sendable, Equatable {
    public var userId: String?
    public var status: OrderStatus?
    public var productId: String?
    public var originNo: String?
    public var limit: Int?

    public init(
        userId: String? = nil, status: OrderStatus? = nil, productId: String? = nil,
        originNo: String? = nil, limit: Int? = nil
    ) {
        self.userId = userId
        self.status = status
        self.productId = productId
        self.originNo = originNo
        self.limit = limit
    }
}

/// Filter for listing contracts. `nil` means "any".
public struct ContractFilter: Sendable, Equatable {
    public var userId: String?
    public var status: ContractStatus?
    public var productId: String?
    public var limit: Int?

    public init(userId: String? = nil, status: ContractStatus? = nil, productId: String? = nil, limit: Int? = nil) {
        self.userId = userId
        self.status = status
        self.productId = productId
        self.limit = limit
    }
}

/// Filter for listing audit rows (`iapctl audit list`). `nil` means "any".
public struct AuditFilter: Sendable, Equatable {
    /// Only rows by this actor.
    public var actor: String?
    /// Only rows at or after this time (ms since the epoch).
    public var since: Int64?
    /// Only rows recorded with this ticket.
    public var ticket: String?
    public var limit: Int?

    public init(actor: String? = nil, since: Int64? = nil, ticket: String? = nil, limit: Int? = nil) {
        self.actor = actor
        self.since = since
        self.ticket = ticket
        self.limit = limit
    }
}

/// Row counts for `db status`.
public struct StoreCounts: Sendable, Equatable, Codable {
    public var orders: Int
    public var contracts: Int
    public var ledger: Int
    public var unmatched: Int
    public var audit: Int

    public init(orders: Int, contracts: Int, ledger: Int, unmatched: Int, audit: Int) {
        self.orders = orders
        self.contracts = contracts
        self.ledger = ledger
        self.unmatched = unmatched
        self.audit = audit
    }
}

/// One open transaction on a store. Values are always bound, never spliced into SQL.
public protocol StoreSession: AnyObject {
    // MARK: orders
    func order(no: String) throws(StoreError) -> Order?
    func order(tradeNo: String) throws(StoreError) -> Order?
    /// Orders of one subscription (`origin_no`), oldest purchase first.
    func orders(originNo: String) throws(StoreError) -> [Order]
    /// Orders matching `filter`, newest first.
    func orders(matching filter: OrderFilter) throws(StoreError) -> [Order]
    /// Inserts `order` (its `id` is ignored) and returns it with its id.
    /// Throws ``StoreError/conflict(_:)`` when `no` or `tradeNo` already exists.
    func insertOrder(_ order: Order) throws(StoreError) -> Order
    /// Writes every column of `order`, found by `id`.
    func updateOrder(_ order: Order) throws(StoreError)

    // MARK: contracts
    func contract(contractId: String) throws(StoreError) -> Contract?
    /// Contracts matching `filter`, newest first.
    func contracts(matching filter: ContractFilter) throws(StoreError) -> [Contract]
    /// Throws ``StoreError/conflict(_:)`` when `contractId` already exists.
    func insertContract(_ contract: Contract) throws(StoreError) -> Contract
    /// Writes every column of `contract`, found by `id`.
    func updateContract(_ contract: Contract) throws(StoreError)
    /// The engine's snapshot of one subscription (``SubscriptionSnapshot``'s text), nil when it has none.
    /// Every other writer of a subscription's rows clears it: `updateContract`, `updateOrder`
    /// (the contracts of the order's old and new `origin_no`), `insertOverride`, `updateOverride`.
    func contractSnapshot(contractId: String) throws(StoreError) -> String?
    /// Keeps (or, with nil, clears) the snapshot of a contract; nothing happens without the contract.
    func saveContractSnapshot(contractId: String, _ snapshot: String?) throws(StoreError)

    // MARK: ledger
    /// Appends a ledger row and returns its id.
    func appendLedger(_ entry: LedgerEntry) throws(StoreError) -> Int64
    /// Appends a ledger row and the audit rows of the changes it caused (their `ledgerId` set to
    /// the new row's id), and returns its id. (A store may then keep a detail that lists those
    /// changes as a reference to the audit rows.)
    func appendLedger(_ entry: LedgerEntry, audits: [AuditEntry]) throws(StoreError) -> Int64
    /// Rewrites verdict and detail of a ledger row (after a replay of an unmatched item).
    func updateLedger(id: Int64, verdict: Verdict, detail: String?) throws(StoreError)
    func ledgerEntry(id: Int64) throws(StoreError) -> LedgerEntry?
    /// Takes the exactly-once claim on a notification inside this transaction (a unique key,
    /// `iap_notification_claims`): true when this transaction now holds it, false when it was
    /// taken already (by a committed transaction, or earlier in this one). A concurrent transaction
    /// holding it makes this wait for that one's commit (then false) or rollback (then true).
    func claimNotification(_ uuid: String) throws(StoreError) -> Bool
    /// Gives back a claim taken in this transaction (the item ended `unmatched` or `rejected`, so a
    /// later delivery or a replay processes it again).
    func releaseNotificationClaim(_ uuid: String) throws(StoreError)
    /// The row that *applied* (or ignored) a notification with this UUID: any verdict but
    /// `rejected`/`unmatched`, a `duplicate` only when no other row is left. Used for exactly-once.
    func processedLedgerEntry(notificationUUID: String) throws(StoreError) -> LedgerEntry?
    /// Ledger rows that mention any of these transaction ids, original transaction ids or
    /// app account tokens, in `signedDate` order (then id).
    func ledger(transactionIds: [String], originalTransactionIds: [String], appAccountTokens: [String]) throws(StoreError) -> [LedgerEntry]
    /// Verified ledger rows (any verdict but `rejected`) of these notification types, in `signedDate`
    /// order (then id): the refund requests and withdrawn consents the desk lists.
    func ledger(notificationTypes: [String]) throws(StoreError) -> [LedgerEntry]
    /// Rows with verdict `unmatched` that no later row has resolved, oldest first.
    func unmatchedLedger(limit: Int?) throws(StoreError) -> [LedgerEntry]

    // MARK: facts
    /// Keeps one signed fact; false when the same fact (same digest) is already kept.
    func insertFact(_ fact: Fact) throws(StoreError) -> Bool
    /// Every fact of one subscription (or one-time purchase), in signedDate order (then id).
    func facts(originalTransactionId: String) throws(StoreError) -> [Fact]
    /// The facts of one subscription signed at or after `signedSince`, in the same order.
    func facts(originalTransactionId: String, signedSince: Int64) throws(StoreError) -> [Fact]
    /// The originalTransactionIds whose transaction facts carry `appTransactionId` (letters and digits;
    /// anything else finds nothing), in order. No column keeps it: a scan of the facts' bodies.
    func originalTransactionIds(appTransactionId: String) throws(StoreError) -> [String]

    // MARK: audit
    func appendAudit(_ entry: AuditEntry) throws(StoreError) -> Int64
    /// Audit rows about one order or contract, oldest first.
    func audit(entity: EntityKind, key: String) throws(StoreError) -> [AuditEntry]
    /// Audit rows matching `filter`, newest first (by id).
    func auditEntries(matching filter: AuditFilter) throws(StoreError) -> [AuditEntry]
    /// One audit row by its id.
    func auditEntry(id: Int64) throws(StoreError) -> AuditEntry?

    // MARK: checkpoints
    /// The checkpoint named `name`, if saved (in a write transaction a locking read where the dialect
    /// has row locks: a concurrent job of the same name waits for this one's commit).
    func checkpoint(named name: String) throws(StoreError) -> Checkpoint?
    /// Saves the checkpoint named `checkpoint.name`, replacing the one saved before.
    func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError)
    /// Removes the checkpoint named `name`; false when there was none.
    func deleteCheckpoint(named name: String) throws(StoreError) -> Bool

    // MARK: refund answers
    /// Takes the claim on answering a refund request (a unique key on `claim.requestKey`,
    /// `iap_refund_answers`) inside this transaction: true when this transaction now holds it, false
    /// when it was taken already. A concurrent transaction holding it makes this wait for that one's
    /// commit (then false) or rollback (then true).
    func claimRefundAnswer(_ claim: RefundAnswerClaim) throws(StoreError) -> Bool
    /// The claim on the request `requestKey`, if taken (a locking read in a write transaction).
    func refundAnswerClaim(requestKey: String) throws(StoreError) -> RefundAnswerClaim?
    /// Every claim, oldest first.
    func refundAnswerClaims() throws(StoreError) -> [RefundAnswerClaim]
    /// Rewrites a claim (found by `id`): what was sent, Apple's answer.
    func updateRefundAnswerClaim(_ claim: RefundAnswerClaim) throws(StoreError)
    /// Takes over the claim `current` (as read: same state and claimedAt) for `by`, at `at`, in
    /// state `claimed` with nothing recorded: false when it changed since (another process took it).
    func takeOverRefundAnswerClaim(_ current: RefundAnswerClaim, by: String, at: Int64, rule: String?) throws(StoreError)
        -> Bool

    // MARK: overrides
    /// Keeps a hand override (its `id` is ignored) and returns its id.
    func insertOverride(_ override: Override) throws(StoreError) -> Int64
    /// Rewrites an override (found by `id`): to record that it was lifted.
    func updateOverride(_ override: Override) throws(StoreError)
    /// The overrides of one order or contract, in force or lifted, oldest first.
    func overrides(entity: EntityKind, key: String) throws(StoreError) -> [Override]
    /// The overrides in force of one subscription's rows (its contract and orders), oldest first.
    func overridesInForce(originalTransactionId: String) throws(StoreError) -> [Override]

    // MARK: grants
    /// Keeps a grant (its `id` is ignored) and returns its id.
    func insertGrant(_ grant: Grant) throws(StoreError) -> Int64
    /// Rewrites a grant (found by `id`): its audit row, its revocation.
    func updateGrant(_ grant: Grant) throws(StoreError)
    /// One grant by its id.
    func grant(id: Int64) throws(StoreError) -> Grant?
    /// The grants `filter` selects, in force or not, oldest first.
    func grants(matching filter: GrantFilter) throws(StoreError) -> [Grant]

    // MARK: forgetting a user
    /// Replaces `userId` with `alias` in every column the schema marks as holding a user id, and
    /// rewrites each free text the schema marks as naming users with `rewrite` (nil: unchanged).
    /// An audit or ledger row is checked against its row digest before it is rewritten and gets a
    /// new digest after (a row that fails its check stops the whole change: nothing is laundered).
    /// The engine snapshots of the user's contracts are cleared. Returns what changed.
    func forgetUser(_ userId: String, alias: String, rewrite: (String) -> String?) throws(StoreError) -> ForgottenRows
    // MARK: customer notes
    /// Keeps a customer note (its `id` is ignored) and returns its id.
    func insertCustomerNote(_ note: CustomerNote) throws(StoreError) -> Int64
    /// The notes about one user, newest first (by id).
    func customerNotes(userId: String) throws(StoreError) -> [CustomerNote]

    // MARK: batches
    /// Locks, in one fixed order (contracts by contract id, then orders by order number, each
    /// sorted), the existing rows a batch of events is about to update, so concurrent batches over
    /// the same subscriptions wait for each other instead of deadlocking. A no-op where write
    /// transactions are serialized anyway (SQLite).
    func lockRows(contractIds: [String], orderNos: [String]) throws(StoreError)

    // MARK: misc
    func counts() throws(StoreError) -> StoreCounts
    /// Runs `body` inside a savepoint: a throw rolls back only `body`'s work. Throws what `body`
    /// throws, unchanged, or a ``StoreError`` (untyped for the reason ``Store`` gives for `write`).
    func savepoint<T>(_ body: () throws -> T) throws -> T
}

/// Errors every backend maps its native errors to. Commands map these to exit codes.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database file or schema does not exist (exit 66).
    case notFound(String)
    /// The schema was written by a newer iapctl, or is not initialised (exit 78 / 66).
    case schemaMismatch(String)
    /// A unique key was violated (exit 4 for users; the engine treats it as a duplicate).
    case conflict(String)
    /// The database is busy or locked, and the transaction was rolled back whole; retry (exit 75).
    /// `BusyReason` says which kind, so the retry policy need not read the message.
    case busy(String, BusyReason)
    /// The server could not be reached or the connection was lost (exit 69).
    case unavailable(String)
    /// A C library the store needs is not installed, or too old (exit 69): the message names it and
    /// the Debian package to install. Nothing was read or written.
    case libraryUnavailable(String)
    /// Credentials or privileges refused (exit 78).
    case accessDenied(String)
    /// What sits between iapctl and the database does not suit it, e.g. a pooler that hands a
    /// transaction a server connection without the statements prepared on this one (exit 78); the
    /// message says what to change. The transaction was rolled back.
    case misconfigured(String)
    /// Writing failed below the database: the disk is full, a file-size limit, an I/O error (exit 74).
    case ioFailure(String)
    /// Anything else the backend reported (exit 70).
    case failure(String)
    /// A stored row failed its check on read (its digest, its frame's checksum, a reference that
    /// does not hold what it should): the row, by table and id, and what failed. It is never used
    /// (exit 65: stored data that fails its check is malformed input to the reader).
    case corrupt(table: String, id: Int64, what: String)

    public var description: String {
        switch self {
        case .notFound(let m), .schemaMismatch(let m), .conflict(let m), .busy(let m, _),
            .unavailable(let m), .libraryUnavailable(let m), .accessDenied(let m), .misconfigured(let m), .ioFailure(let m),
            .failure(let m):
            return m
        case .corrupt(let table, let id, let what):
            return "\(table) row \(id) is corrupt: \(what); it was not used"
        }
    }
}

/// Why a store said ``StoreError/busy(_:_:)``: the retry policy runs each kind again differently
/// (``RetryPolicy/shouldRetryBusy(_:attempt:elapsedSeconds:)``).
public enum BusyReason: Equatable, Sendable {
    /// Another writer held the lock past the store's own wait (SQLite's busy timeout, a locked table).
    case lockedPastTimeout
    /// The server found a deadlock and rolled this transaction back (MySQL/MariaDB error 1213).
    case deadlock
    /// The server gave up waiting for rows other transactions hold (MySQL/MariaDB error 1205):
    /// they are making progress, and a new attempt queues behind them again.
    case lockWaitTimeout
    /// The server refused a new connection (MySQL/MariaDB error 1040).
    case tooManyConnections
    /// Another iapctl is migrating the schema.
    case migrationInProgress
    /// The server ended the transaction under the unit without a deadlock error: a cluster's
    /// brute-force abort (MariaDB Galera, seen only as warning 1317), an interrupted statement
    /// (1317), a savepoint gone with its transaction (1305). The store rolled back the rest.
    case transactionLost
    /// The server cannot take writes now: a cluster node outside the primary component or not yet
    /// synced (MySQL/MariaDB errors 1047, 1180). Retried for `retryForSeconds` in all (the
    /// store's I/O timeout, `IAPCTL_DB_TIMEOUT`).
    case clusterUnavailable(retryForSeconds: Double)
}
