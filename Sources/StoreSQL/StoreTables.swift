import SubscriptionModel

/// A ledger row as stored: the entry (its `raw` left empty) and what holds the raw: one zstd
/// frame of its exact bytes (``ZstdCodec/rawFrame(_:)``), or the id of the first row holding the
/// same bytes for the same notification UUID; and the row's ``RowDigest``.
public struct LedgerRow: Sendable {
    public var entry: LedgerEntry
    public var rawOf: Int64? = nil
    public var rawZstd: [UInt8]? = nil
    public var rowDigest: String = ""
}

/// An audit row as stored: the entry (every column plain) and its ``RowDigest``.
public struct AuditRow: Sendable {
    public var entry: AuditEntry
    public var rowDigest: String = ""
}

/// A signed fact as stored: with its row id and digest (``FactDigest`` of its identity: the unique
/// key with `fact_key`, and its check on read).
public struct FactRow: Sendable {
    public var id: Int64 = 0
    public var fact: Fact
    public var digest: String

    public init(id: Int64 = 0, fact: Fact, digest: String) {
        self.id = id
        self.fact = fact
        self.digest = digest
    }
}

/// An exactly-once claim on a notification UUID.
public struct ClaimRow: Sendable {
    public var id: Int64 = 0
    public var notificationUUID: String
}

/// The table of every stored row type over its column table: the ONE place that says which property
/// is in which column (orders' and contracts' tables are the engine's, beside the models). The schema
/// (``StoreSchema``) says what type each column has; a test checks the two agree.
public enum StoreTables {
    /// Orders and contracts: the engine's column tables (beside the models).
    public static let orders = SQLTable("orders", blank: Order(no: "", userId: "", productId: ""), Order.columns)
    public static let contracts = SQLTable(
        "member_contracts", blank: Contract(contractId: "", userId: "", productId: ""), Contract.columns)

    /// The raw is in `raw_zstd` (a zstd frame) or, for a re-delivery of identical bytes, in the
    /// row `raw_of` names; the session rebuilds the text and checks `row_digest`.
    public static let ledger = SQLTable(
        "iap_ledger",
        blank: LedgerRow(entry: LedgerEntry(receivedAt: 0, source: .apple, verdict: .rejected, raw: "")),
        [
            ModelColumn("id", \.entry.id),
            ModelColumn("received_at", \.entry.receivedAt), ModelColumn("source", \.entry.source),
            ModelColumn("notification_uuid", \.entry.notificationUUID),
            ModelColumn("notification_type", \.entry.notificationType), ModelColumn("subtype", \.entry.subtype),
            ModelColumn("transaction_id", \.entry.transactionId),
            ModelColumn("original_transaction_id", \.entry.originalTransactionId),
            ModelColumn("app_account_token", \.entry.appAccountToken), ModelColumn("signed_date", \.entry.signedDate),
            ModelColumn("verdict", \.entry.verdict), ModelColumn("detail", \.entry.detail),
            ModelColumn("raw_of", \.rawOf), ModelColumn("raw_zstd", \.rawZstd), ModelColumn("row_digest", \.rowDigest),
        ])

    public static let audit = SQLTable(
        "iap_audit",
        blank: AuditRow(entry: AuditEntry(at: 0, actor: "", command: "", entity: .order, key: "", before: nil, after: nil)),
        [
            ModelColumn("id", \.entry.id),
            ModelColumn("at", \.entry.at), ModelColumn("actor", \.entry.actor), ModelColumn("command", \.entry.command),
            ModelColumn("reason", \.entry.reason), ModelColumn("ticket", \.entry.ticket),
            ModelColumn("entity", \.entry.entity), ModelColumn("entity_key", \.entry.key),
            ModelColumn("before_json", \.entry.before), ModelColumn("after_json", \.entry.after),
            ModelColumn("ledger_id", \.entry.ledgerId), ModelColumn("row_digest", \.rowDigest),
        ])

    public static let facts = SQLTable(
        "iap_facts",
        blank: FactRow(
            fact: Fact(kind: .transaction, key: "", originalTransactionId: "", signedDate: 0, source: .apple, body: ""),
            digest: ""),
        [
            ModelColumn("id", \.id),
            ModelColumn("kind", \.fact.kind), ModelColumn("fact_key", \.fact.key),
            ModelColumn("original_transaction_id", \.fact.originalTransactionId),
            ModelColumn("signed_date", \.fact.signedDate), ModelColumn("source", \.fact.source),
            ModelColumn("digest", \.digest), ModelColumn("body", \.fact.body),
        ])

    public static let claims = SQLTable(
        "iap_notification_claims", blank: ClaimRow(notificationUUID: ""),
        [ModelColumn("id", \.id), ModelColumn("notification_uuid", \.notificationUUID)])

    public static let checkpoints = SQLTable(
        "iap_checkpoints", blank: Checkpoint(name: "", value: "", updatedAt: 0),
        [
            ModelColumn("id", \.id), ModelColumn("name", \.name), ModelColumn("value", \.value),
            ModelColumn("updated_at", \.updatedAt),
        ])

    public static let overrides = SQLTable(
        "iap_overrides",
        blank: Override(
            entity: .order, key: "", originalTransactionId: "", field: "", value: nil, auditId: 0, actor: "", reason: nil,
            ticket: nil, at: 0, seenPeriod: nil, seenFacts: 0),
        [
            ModelColumn("id", \.id),
            ModelColumn("entity", \.entity), ModelColumn("entity_key", \.key),
            ModelColumn("original_transaction_id", \.originalTransactionId), ModelColumn("field", \.field),
            ModelColumn("value", \.value), ModelColumn("audit_id", \.auditId), ModelColumn("actor", \.actor),
            ModelColumn("reason", \.reason), ModelColumn("ticket", \.ticket), ModelColumn("at", \.at),
            ModelColumn("seen_period", \.seenPeriod), ModelColumn("seen_facts", \.seenFacts),
            ModelColumn("lifted_at", \.liftedAt), ModelColumn("lifted_by", \.liftedBy),
        ])

    public static let refundAnswers = SQLTable(
        "iap_refund_answers", blank: RefundAnswerClaim(requestKey: "", transactionId: "", claimedAt: 0, claimedBy: ""),
        [
            ModelColumn("id", \.id), ModelColumn("request_key", \.requestKey),
            ModelColumn("transaction_id", \.transactionId), ModelColumn("state", \.state),
            ModelColumn("claimed_at", \.claimedAt), ModelColumn("claimed_by", \.claimedBy), ModelColumn("rule", \.rule),
            ModelColumn("body", \.body), ModelColumn("apple_status", \.appleStatus),
            ModelColumn("apple_error", \.appleError), ModelColumn("audit_id", \.auditId),
            ModelColumn("answered_at", \.answeredAt),
        ])

    /// Grants of access by hand: the model's column table.
    public static let grants = SQLTable(
        "iap_grants",
        blank: Grant(userId: "", productId: "", startsAt: 0, untilDate: 0, actor: "", reason: "", ticket: nil),
        Grant.columns)
    public static let customerNotes = SQLTable(
        "iap_customer_notes", blank: CustomerNote(userId: "", at: 0, actor: "", text: ""),
        [
            ModelColumn("id", \.id), ModelColumn("user_id", \.userId), ModelColumn("at", \.at),
            ModelColumn("actor", \.actor), ModelColumn("text", \.text), ModelColumn("ticket", \.ticket),
            ModelColumn("audit_id", \.auditId),
        ])

    /// Columns of `member_contracts` outside the contract row: the engine's snapshot
    /// (``StoreSQL/contractSnapshot``, ``StoreSQL/saveContractSnapshot``), read and written by its own
    /// statements, never with the row (a contract read or written whole leaves it alone).
    public static let contractsOwnColumns = ["snapshot"]

    /// Every table's name and columns, for the check against the schema.
    public static var all: [(name: String, columns: [String])] {
        [
            (orders.name, orders.columnNames), (contracts.name, contracts.columnNames + contractsOwnColumns),
            (ledger.name, ledger.columnNames), (audit.name, audit.columnNames), (facts.name, facts.columnNames),
            (claims.name, claims.columnNames),
            (checkpoints.name, checkpoints.columnNames),
            (overrides.name, overrides.columnNames),
            (refundAnswers.name, refundAnswers.columnNames),
            (grants.name, grants.columnNames),
            (customerNotes.name, customerNotes.columnNames),
        ]
    }
}
