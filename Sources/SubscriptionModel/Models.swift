/// Rows of the two money tables and of the ledger and audit tables.
///
/// Dates are integers: milliseconds since the Unix epoch (Apple's unit).

/// Status of one payment row in `orders`.
public enum OrderStatus: String, Sendable, Codable, CaseIterable {
    case pending, paid, refunded, revoked
}

/// Status of one subscription row in `member_contracts`.
public enum ContractStatus: String, Sendable, Codable, CaseIterable {
    case active, canceled
    case gracePeriod = "grace_period"
    case billingRetry = "billing_retry"
    case expired, revoked

    /// Whether the status gives access while its paid period runs: active, canceled (auto-renew off)
    /// and the billing grace period; billing retry, expired and revoked do not.
    public var givesAccess: Bool {
        switch self {
        case .active, .canceled, .gracePeriod: return true
        case .billingRetry, .expired, .revoked: return false
        }
    }
}

/// One row of `orders`: one payment.
public struct Order: Sendable, Equatable, Codable {
    public var id: Int64
    /// Order number: the UUID the app passes to StoreKit as `appAccountToken`.
    public var no: String
    public var userId: String
    public var productId: String
    public var status: OrderStatus
    /// Apple `transactionId`.
    public var tradeNo: String?
    /// Apple `originalTransactionId`.
    public var originNo: String?
    public var purchaseDate: Int64?
    public var expiresDate: Int64?
    public var environment: String?
    /// Price in milliunits of `currency` (Apple's unit: 10990 = 10.99).
    public var price: Int64?
    public var currency: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: Int64 = 0, no: String, userId: String, productId: String, status: OrderStatus = .pending,
        tradeNo: String? = nil, originNo: String? = nil, purchaseDate: Int64? = nil,
        expiresDate: Int64? = nil, environment: String? = nil, price: Int64? = nil,
        currency: String? = nil, createdAt: Int64 = 0, updatedAt: Int64 = 0
    ) {
        self.id = id
        self.no = no
        self.userId = userId
        self.productId = productId
        self.status = status
        self.tradeNo = tradeNo
        self.originNo = originNo
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.environment = environment
        self.price = price
        self.currency = currency
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One row of `member_contracts`: one auto-renewable subscription, keyed by `originalTransactionId`.
public struct Contract: Sendable, Equatable, Codable {
    public var id: Int64
    /// The subscription's `originalTransactionId`.
    public var contractId: String
    public var userId: String
    public var productId: String
    public var status: ContractStatus
    public var autoRenew: Bool
    public var expiresDate: Int64?
    public var environment: String?
    /// The product the subscription renews into next (DID_CHANGE_RENEWAL_PREF).
    public var nextProductId: String?
    /// `signedDate` of the newest event that changed this contract's state (ordering guard).
    public var lastEventDate: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: Int64 = 0, contractId: String, userId: String, productId: String,
        status: ContractStatus = .active, autoRenew: Bool = true, expiresDate: Int64? = nil,
        environment: String? = nil, nextProductId: String? = nil, lastEventDate: Int64? = nil,
        createdAt: Int64 = 0, updatedAt: Int64 = 0
    ) {
        self.id = id
        self.contractId = contractId
        self.userId = userId
        self.productId = productId
        self.status = status
        self.autoRenew = autoRenew
        self.expiresDate = expiresDate
        self.environment = environment
        self.nextProductId = nextProductId
        self.lastEventDate = lastEventDate
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Where a ledger item came from, and so with what authority it speaks (README "Sources of truth").
///
/// Every fact is Apple-signed; the source says who brought it. Apple's own word — a notification it
/// pushed, or an answer iapctl pulled itself from the App Store Server API over verified TLS with its
/// own key — can lift a refund (a newer Apple version of the transaction) and states the
/// subscription's status; the app's submissions and restores prove payments but are Apple's word
/// only as far as the signed payload goes.
public enum EventSource: String, Sendable, Codable, CaseIterable {
    /// App Store Server Notification V2 (Apple pushed; also a notification of Notification History).
    case apple
    /// The app's client-side verification request (`verify --apply`).
    case client
    /// A restored transaction (`restore --apply`).
    case restore
    /// An answer of the App Store Server API that iapctl fetched itself (Apple pulled): a signed
    /// transaction of Get Transaction History / Info, a subscription's latest transaction, renewal info
    /// and `status` of Get All Subscription Statuses (`iapctl apple reconcile`).
    case appleAPI = "apple_api"

    /// Apple's own word: pushed (notifications) or pulled (API answers iapctl fetched itself).
    public var isApple: Bool { self == .apple || self == .appleAPI }

    /// How the README's sources table and `contracts explain` name the source and its authority:
    /// `Apple pushed` (a notification), `Apple pulled` (an API answer iapctl fetched), `the app`, `a restore`.
    public var authorityName: String {
        switch self {
        case .apple: return "Apple pushed"
        case .appleAPI: return "Apple pulled"
        case .client: return "the app"
        case .restore: return "a restore"
        }
    }

    /// What a hand correction's source is called beside ``authorityName`` (people, not Apple).
    public static let handAuthorityName = "by hand"
}

/// The outcome class of one input item (cli.md "Verdicts").
public enum Verdict: String, Sendable, Codable, CaseIterable {
    case applied, duplicate, stale, ignored, unmatched, rejected
    /// The transaction names another user's order while the subscription belongs to someone else:
    /// nothing changed (one owner per contract; exit 4).
    case conflict
}

/// One received JWS and what became of it. Nothing received is ever lost.
public struct LedgerEntry: Sendable, Equatable, Codable {
    public var id: Int64
    public var receivedAt: Int64
    public var source: EventSource
    public var notificationUUID: String?
    public var notificationType: String?
    public var subtype: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    public var appAccountToken: String?
    public var signedDate: Int64?
    public var verdict: Verdict
    /// Human-readable summary of the changes made (or why none were made).
    public var detail: String?
    /// The JWS (or body) exactly as received.
    public var raw: String

    public init(
        id: Int64 = 0, receivedAt: Int64, source: EventSource, notificationUUID: String? = nil,
        notificationType: String? = nil, subtype: String? = nil, transactionId: String? = nil,
        originalTransactionId: String? = nil, appAccountToken: String? = nil, signedDate: Int64? = nil,
        verdict: Verdict, detail: String? = nil, raw: String
    ) {
        self.id = id
        self.receivedAt = receivedAt
        self.source = source
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.signedDate = signedDate
        self.verdict = verdict
        self.detail = detail
        self.raw = raw
    }
}

/// What kind of row an audit entry or change is about.
public enum EntityKind: String, Sendable, Codable {
    case order, contract
    /// A grant of access by hand (`iap_grants`, key: the grant's id).
    case grant
    /// A user as a whole (`users forget`; key: the user's alias).
    case user
    /// A customer note (`iap_customer_notes`); the audit row's key is the user id.
    case note
}

/// One audited change: who, when, why, before and after.
public struct AuditEntry: Sendable, Equatable, Codable {
    public var id: Int64
    public var at: Int64
    /// OS user or `--actor`; `engine` for changes made by the subscription-event engine.
    public var actor: String
    /// The command line that made the change (`orders update`, `notify`, …).
    public var command: String
    public var reason: String?
    public var ticket: String?
    public var entity: EntityKind
    /// Order `no` or contract `contract_id`.
    public var key: String
    /// JSON of the row before (nil for an insert).
    public var before: String?
    /// JSON of the row after.
    public var after: String?
    /// The ledger item that caused the change, if any.
    public var ledgerId: Int64?

    public init(
        id: Int64 = 0, at: Int64, actor: String, command: String, reason: String? = nil,
        ticket: String? = nil, entity: EntityKind, key: String, before: String?, after: String?,
        ledgerId: Int64? = nil
    ) {
        self.id = id
        self.at = at
        self.actor = actor
        self.command = command
        self.reason = reason
        self.ticket = ticket
        self.entity = entity
        self.key = key
        self.before = before
        self.after = after
        self.ledgerId = ledgerId
    }
}
