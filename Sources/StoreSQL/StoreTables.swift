import SubscriptionEngine

/// A ledger row as stored: the entry (its `raw` left empty) and what the row holds for the raw.
public struct LedgerRow: Sendable {
    public var entry: LedgerEntry
    public var stored: StoredRaw
}

/// A signed fact as stored: with its row id and digest (the unique key with `fact_key`).
public struct FactRow: Sendable {
    public var id: Int64 = 0
    public var fact: Fact
    public var digest: String
}

/// An exactly-once claim on a notification UUID.
public struct ClaimRow: Sendable {
    public var id: Int64 = 0
    public var notificationUUID: String
}

/// A certificate chain of a packed ledger raw, stored once by its SHA-256.
public struct ChainRow: Sendable {
    public var id: Int64 = 0
    public var digest: [UInt8]
    public var chain: [UInt8]
}

/// The column table of every stored row type: the ONE place that says which property is in which
/// column. The schema (``StoreSchema``) says what type the column has; a test checks the two agree.
public enum StoreTables {
    public static let orders = SQLTable(
        "orders", blank: Order(no: "", userId: "", productId: ""), id: \.id,
        [
            SQLColumn("no", \.no), SQLColumn("user_id", \.userId), SQLColumn("product_id", \.productId),
            SQLColumn("status", \.status), SQLColumn("trade_no", \.tradeNo), SQLColumn("origin_no", \.originNo),
            SQLColumn("purchase_date", \.purchaseDate), SQLColumn("expires_date", \.expiresDate),
            SQLColumn("environment", \.environment), SQLColumn("price", \.price), SQLColumn("currency", \.currency),
            SQLColumn("created_at", \.createdAt), SQLColumn("updated_at", \.updatedAt),
        ])

    public static let contracts = SQLTable(
        "member_contracts", blank: Contract(contractId: "", userId: "", productId: ""), id: \.id,
        [
            SQLColumn("contract_id", \.contractId), SQLColumn("user_id", \.userId),
            SQLColumn("product_id", \.productId), SQLColumn("status", \.status),
            SQLColumn("auto_renew", \.autoRenew), SQLColumn("expires_date", \.expiresDate),
            SQLColumn("environment", \.environment), SQLColumn("next_product_id", \.nextProductId),
            SQLColumn("last_event_date", \.lastEventDate), SQLColumn("created_at", \.createdAt),
            SQLColumn("updated_at", \.updatedAt),
        ])

    /// `raw` is empty when `raw_packed` (``LedgerPacking``) or `raw_of` (the id of an earlier row with
    /// the same notification UUID and identical bytes) holds it; the session rebuilds the text.
    public static let ledger = SQLTable(
        "iap_ledger",
        blank: LedgerRow(
            entry: LedgerEntry(receivedAt: 0, source: .apple, verdict: .rejected, raw: ""),
            stored: StoredRaw(text: "", packed: nil, rawOf: nil)),
        id: \.entry.id,
        [
            SQLColumn("received_at", \.entry.receivedAt), SQLColumn("source", \.entry.source),
            SQLColumn("notification_uuid", \.entry.notificationUUID),
            SQLColumn("notification_type", \.entry.notificationType), SQLColumn("subtype", \.entry.subtype),
            SQLColumn("transaction_id", \.entry.transactionId),
            SQLColumn("original_transaction_id", \.entry.originalTransactionId),
            SQLColumn("app_account_token", \.entry.appAccountToken), SQLColumn("signed_date", \.entry.signedDate),
            SQLColumn("verdict", \.entry.verdict), SQLColumn("detail", \.entry.detail),
            SQLColumn("raw", \.stored.text), SQLColumn("raw_packed", \.stored.packed),
            SQLColumn("raw_of", \.stored.rawOf),
        ])

    public static let audit = SQLTable(
        "iap_audit", blank: AuditEntry(at: 0, actor: "", command: "", entity: .order, key: "", before: nil, after: nil),
        id: \.id,
        [
            SQLColumn("at", \.at), SQLColumn("actor", \.actor), SQLColumn("command", \.command),
            SQLColumn("reason", \.reason), SQLColumn("ticket", \.ticket), SQLColumn("entity", \.entity),
            SQLColumn("entity_key", \.key), SQLColumn("before_json", \.before), SQLColumn("after_json", \.after),
            SQLColumn("ledger_id", \.ledgerId),
        ])

    public static let facts = SQLTable(
        "iap_facts",
        blank: FactRow(
            fact: Fact(kind: .transaction, key: "", originalTransactionId: "", signedDate: 0, source: .apple, body: ""),
            digest: ""),
        id: \.id,
        [
            SQLColumn("kind", \.fact.kind), SQLColumn("fact_key", \.fact.key),
            SQLColumn("original_transaction_id", \.fact.originalTransactionId),
            SQLColumn("signed_date", \.fact.signedDate), SQLColumn("source", \.fact.source),
            SQLColumn("digest", \.digest), SQLColumn("body", \.fact.body),
        ])

    public static let claims = SQLTable(
        "iap_notification_claims", blank: ClaimRow(notificationUUID: ""), id: \.id,
        [SQLColumn("notification_uuid", \.notificationUUID)])

    public static let chains = SQLTable(
        "iap_ledger_chains", blank: ChainRow(digest: [], chain: []), id: \.id,
        [SQLColumn("digest", \.digest), SQLColumn("chain", \.chain)])

    /// Every table's name and columns, for the check against the schema.
    public static var all: [(name: String, columns: [String])] {
        [
            (orders.name, orders.columnNames), (contracts.name, contracts.columnNames),
            (ledger.name, ledger.columnNames), (audit.name, audit.columnNames), (facts.name, facts.columnNames),
            (claims.name, claims.columnNames), (chains.name, chains.columnNames),
        ]
    }
}
