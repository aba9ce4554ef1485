import SubscriptionModel

/// Vocabulary of `iapctl restore`: how a restored transaction matched, what it means for the user,
/// and what an operator allows to happen to another user's purchase.

/// How a restored transaction was matched (the first rule that hits wins).
public enum RestoreBasis: String, Sendable, Codable, CaseIterable {
    /// An order's `trade_no` is the transaction's `transactionId`.
    case transactionId = "transaction-id"
    /// A contract (and its orders) has the transaction's `originalTransactionId`.
    case originalTransactionId = "original-transaction-id"
    /// An order's `no` is the transaction's `appAccountToken`.
    case appAccountToken = "app-account-token"
    /// The seed's fallback: the user's pending order for the same product, never linked to a transaction.
    case product
}

/// What a restored transaction is for the restoring user (cli.md "Verdicts").
public enum RestoreVerdict: String, Sendable, Codable, CaseIterable {
    /// The verdict of `result` once its transaction committed: `restored` for a `restorable`
    /// transaction the engine linked to an order, else the verdict as it was (``RestoreService``
    /// already gives the engine's own verdict to one it did not link).
    public static func committed(_ result: RestoreResult) -> RestoreVerdict {
        result.verdict == .restorable && result.engineOutcome != nil && result.linked ? .restored : result.verdict
    }

    /// The engine's verdict, for a restored transaction the engine did not link to an order.
    public init(engine verdict: Verdict) {
        switch verdict {
        // (Rows changed, but no order of the user holds the transaction: nothing was restored.)
        case .applied: self = .unmatched
        case .duplicate: self = .duplicate
        case .stale: self = .stale
        case .ignored: self = .ignored
        case .unmatched: self = .unmatched
        case .conflict: self = .conflict
        case .rejected: self = .rejected
        }
    }

    /// It belongs to the user: it may be granted.
    case restorable
    /// It belonged to the user and `restore --apply` put it through the engine (committed: a dry run
    /// says `restorable`). Set by the caller that commits (``RestoreVerdict/committed(_:)``).
    case restored
    /// It belongs to another user: never moved silently (exit 4).
    case ownedByOther = "owned-by-other"
    /// It belonged to another user and was moved to this one under `--policy transfer…`.
    case transferred
    /// No order or contract matches, or several candidates and none chosen (exit 3).
    case unknown
    /// Failed verification or malformed (decided by the command layer, never by ``RestoreService``).
    case rejected
    /// `--apply`: the engine found no order or contract to attach the transaction to (its facts
    /// are kept for `notify --replay-unmatched`; exit 3).
    case unmatched
    /// `--apply`: the engine refused it, the facts naming two owners (exit 4).
    case conflict
    /// `--apply`: the engine linked no order, every fact already recorded.
    case duplicate
    /// `--apply`: the engine linked no order, the facts older than those that decide the rows.
    case stale
    /// `--apply`: the engine linked no order and had nothing to change.
    case ignored
}

/// Why a result is not a plain match; lets callers and tests tell cases apart without parsing `detail`.
public enum RestoreReason: String, Sendable, Codable, CaseIterable {
    /// Nothing matched on any basis.
    case noMatch = "no-match"
    /// Several pending orders qualify for the product fallback and no explicit order was given.
    case ambiguous
    /// The explicit `--order` is not one of the user's unlinked pending orders for the product.
    case orderNotEligible = "order-not-eligible"
    /// Another user's purchase, left with its owner under `--policy keep`.
    case keptByPolicy = "kept-by-policy"
    /// Another user's purchase, and the policy refused to move it (`transfer-if-inactive`, active contract).
    case refusedByPolicy = "refused-by-policy"
}

/// What `restore --apply` may do with a purchase that belongs to another user.
public enum RestorePolicy: String, Sendable, Codable, CaseIterable {
    /// Never move a purchase (default).
    case keep
    /// Move the contract and all its orders to the restoring user (needs a reason; audited).
    case transfer
    /// Move only when the current owner's contract is not active, in grace period or in billing retry.
    case transferIfInactive = "transfer-if-inactive"
}

/// Errors of ``RestoreService`` that the command layer maps to exit codes.
public enum RestoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--policy transfer` or `transfer-if-inactive` without `--reason` (usage error, exit 64).
    case missingReason(RestorePolicy)
    /// A policy refused the restore (conflict, exit 4). ``RestoreService/apply(_:raw:user:policy:reason:explicitOrder:context:in:)``
    /// reports refusals as a result (`owned-by-other`, ``RestoreReason/refusedByPolicy``) so a batch goes on;
    /// ``RestoreResult/refusal`` turns such a result into this error.
    case refusedByPolicy(String)

    public var description: String {
        switch self {
        case .missingReason(let policy):
            return "--policy \(policy.rawValue) moves a purchase between users and needs --reason TEXT"
        case .refusedByPolicy(let why):
            return "refused by policy: \(why)"
        }
    }
}

/// The answer for one restored transaction: which order(s)/contract it is, on what basis, whose it is,
/// and (with `--apply`) what changed.
public struct RestoreResult: Sendable, Equatable {
    public var verdict: RestoreVerdict
    /// The rule that matched; nil when nothing did.
    public var basis: RestoreBasis?
    /// Orders matched (and, after `--apply`, orders created or moved).
    public var orderNos: [String]
    /// The contract (`originalTransactionId`) matched or created.
    public var contractId: String?
    /// The purchase's owner: the contract's user for subscriptions, else the order's user.
    /// After a transfer, the new owner.
    public var owner: String?
    public var contractStatus: ContractStatus?
    /// The contract's `expires_date` (ms since the epoch).
    public var contractExpires: Int64?
    /// One or more sentences for people: what matched, whose it is, what was done or why not.
    public var detail: String
    /// Rows changed by `--apply` (transfer first, then the engine's changes); empty for lookups.
    public var changes: [Change]
    /// What the engine did with the transaction under `--apply`; nil when the engine was not called.
    public var engineOutcome: Outcome?
    /// Why the result is not a plain match (nil for restorable/transferred without remarks).
    public var reason: RestoreReason?
    /// Candidate order numbers when the product fallback is ambiguous.
    public var candidates: [String]
    /// The owner before a transfer (nil unless `transferred`).
    public var previousOwner: String?
    /// For transfers: Apple still ties the purchase to the original appAccountToken; tell the operator.
    public var reminder: String?
    /// `--apply`: an order of the restoring user holds the transaction once the engine ran.
    public var linked: Bool = false

    public init(
        verdict: RestoreVerdict, basis: RestoreBasis? = nil, orderNos: [String] = [], contractId: String? = nil,
        owner: String? = nil, contractStatus: ContractStatus? = nil, contractExpires: Int64? = nil,
        detail: String, changes: [Change] = [], engineOutcome: Outcome? = nil, reason: RestoreReason? = nil,
        candidates: [String] = [], previousOwner: String? = nil, reminder: String? = nil
    ) {
        self.verdict = verdict
        self.basis = basis
        self.orderNos = orderNos
        self.contractId = contractId
        self.owner = owner
        self.contractStatus = contractStatus
        self.contractExpires = contractExpires
        self.detail = detail
        self.changes = changes
        self.engineOutcome = engineOutcome
        self.reason = reason
        self.candidates = candidates
        self.previousOwner = previousOwner
        self.reminder = reminder
    }

    /// The refusal as an error, for callers that stop on it; nil unless a policy refused the restore.
    public var refusal: RestoreError? {
        guard reason == .refusedByPolicy else { return nil }
        let what = contractId.map { "contract \($0) of \(owner ?? "another user")" } ?? "the purchase of \(owner ?? "another user")"
        return .refusedByPolicy(what + (contractStatus.map { " is \($0.rawValue)" } ?? " has no contract"))
    }
}
