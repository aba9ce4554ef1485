import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// How the record-keeping commands show orders, contracts, ledger events and audit rows.
///
/// Records carry every column under its schema name (dates as integer ms under `*_date`/`*_at`
/// keys, so the framework shows them as ISO-8601); the `…Columns` lists choose what tables show.
enum RowRendering {
    /// Every column of a row under its column name, in schema order, `id` last: from the row's
    /// column table, so a new column shows without a change here.
    static func record<Row>(_ row: Row, columns: [ModelColumn<Row>]) -> Record {
        var r = Record()
        for column in columns.dropFirst() + columns.prefix(1) {
            switch column.value(of: row) {
            case .null: r.append(column.name, nil as String?)
            case .int(let number): r.append(column.name, number)
            case .text(let text): r.append(column.name, text)
            case .bool(let flag): r.append(column.name, flag)
            case .bytes: continue  // not shown
            }
        }
        return r
    }

    /// Every column of an order, in schema order, and after `currency` the price as a decimal
    /// (`price_decimal`): `price` is Apple's integer in thousandths of the currency unit (9990 is 9.99).
    static func record(_ order: Order) -> Record {
        var r = record(order, columns: Order.columns)
        let decimal = order.price.map { JSONValue.string(priceDecimal($0)) } ?? .null
        if let index = r.fields.firstIndex(where: { $0.key == "currency" }) {
            r.fields.insert(("price_decimal", decimal), at: index + 1)
        } else {
            r.append("price_decimal", decimal)
        }
        return r
    }

    /// A price in thousandths of its currency unit (Apple's unit) as an exact decimal text with at
    /// least two decimals: 9990 → `9.99`, 1000 → `1.00`, 1234 → `1.234`, -500 → `-0.50`.
    static func priceDecimal(_ milli: Int64) -> String {
        let magnitude = milli.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        if fraction.hasSuffix("0") { fraction.removeLast() }
        return (milli < 0 ? "-" : "") + String(magnitude / 1000) + "." + fraction
    }

    /// The table columns of `orders list`.
    static let orderColumns: [Column] = [
        Column("no", title: "NO"), Column("user_id", title: "USER", owner: true), Column("product_id", title: "PRODUCT", important: true),
        Column("status", title: "STATUS", important: true), Column("trade_no", title: "TRADE_NO"),
        Column("origin_no", title: "ORIGIN_NO"), Column("expires_date", title: "EXPIRES", important: true),
        Column("updated_at", title: "UPDATED"),
    ]

    /// Every column of an order (CSV, even for no rows).
    static let allOrderColumns: [Column] = record(Order(no: "", userId: "", productId: "")).keys.map { Column($0) }

    /// Every column of a contract, then `lapsed` and `paid_until_date` (CSV, even for no rows).
    static let allContractColumns: [Column] = record(Contract(contractId: "", userId: "", productId: ""), at: 0, table: false)
        .keys.map { Column($0) }

    /// Every column of a contract, in schema order.
    static func record(_ contract: Contract) -> Record { record(contract, columns: Contract.columns) }

    /// Every column of a contract, then whether it had lapsed at `now` (``Lapse``: paid until a past
    /// moment, nothing from Apple since): `lapsed` (true/false) and `paid_until_date` (when the paid period
    /// ended; null unless lapsed). Derived, not stored: `status` keeps the stored value. A `table`
    /// (what people read) says the lapse in `status` instead ("active (lapsed)", "canceled (lapsed)")
    /// and leaves the two keys out.
    static func record(_ contract: Contract, at now: Int64, table: Bool) -> Record {
        var r = record(contract)
        let lapse = Lapse.of(contract, at: now)
        if table {
            if let lapse { r["status"] = .string(lapsedStatus(contract.status, lapse)) }
        } else {
            r.append("lapsed", lapse != nil)
            r.append("paid_until_date", lapse?.paidUntil)
        }
        return r
    }

    /// A lapsed contract's status as people read it.
    /// The stored status first (what the row holds), then that it lapsed: `active (lapsed)`; the
    /// paid-until moment is the EXPIRES column.
    static func lapsedStatus(_ status: ContractStatus, _ lapse: Lapse) -> String {
        "\(status.rawValue) (lapsed)"
    }

    /// The table columns of `contracts list`.
    static let contractColumns: [Column] = [
        Column("contract_id", title: "CONTRACT_ID"), Column("user_id", title: "USER", owner: true),
        Column("product_id", title: "PRODUCT", important: true), Column("status", title: "STATUS", important: true),
        Column("auto_renew", title: "AUTO_RENEW"), Column("expires_date", title: "EXPIRES", important: true),
        Column("updated_at", title: "UPDATED"),
    ]

    /// A ledger row without its raw JWS.
    static func record(_ entry: LedgerEntry) -> Record {
        var r = Record()
        r.append("signed_date", entry.signedDate)
        r.append("event", eventName(entry))
        r.append("verdict", entry.verdict.rawValue)
        r.append("source", entry.source.rawValue)
        r.append("transaction_id", entry.transactionId)
        r.append("original_transaction_id", entry.originalTransactionId)
        r.append("app_account_token", entry.appAccountToken)
        r.append("notification_type", entry.notificationType)
        r.append("subtype", entry.subtype)
        r.append("notification_uuid", entry.notificationUUID)
        r.append("detail", entry.detail.map(storedDetail))
        r.append("received_at", entry.receivedAt)
        r.append("ledger_id", entry.id)
        return r
    }

    /// The table columns of an event timeline. On a narrow terminal TRANSACTION stays (what support
    /// looks up next); SOURCE and DETAIL give way first.
    static let ledgerColumns: [Column] = [
        Column("signed_date", title: "SIGNED"), Column("event", title: "EVENT", important: true, folds: true),
        Column("verdict", title: "VERDICT", important: true),
        Column("source", title: "SOURCE"), Column("transaction_id", title: "TRANSACTION", important: true),
        Column("detail", title: "DETAIL", maxWidth: 80, wraps: true),
    ]

    /// `DID_RENEW/BILLING_RECOVERY`, `transaction` for client submissions without a type.
    static func eventName(_ entry: LedgerEntry) -> String {
        guard let type = entry.notificationType else {
            return entry.source == .apple ? "-" : entry.isReceiptSubmission ? "receipt entry" : "transaction"
        }
        return entry.subtype.map { "\(type)/\($0)" } ?? type
    }

    /// An audit row; `structured` gives the changes as an array of objects (JSON), else as text.
    /// Its `id` comes first: the number `audit show` and `audit undo` take.
    static func record(_ entry: AuditEntry, structured: Bool) -> Record {
        var r = Record()
        r.append("id", entry.id)
        r.append("changed_at", entry.at)
        r.append("actor", entry.actor)
        r.append("command", entry.command)
        r.append("reason", entry.reason)
        r.append("ticket", entry.ticket)
        r.append("entity", entry.entity.rawValue)
        r.append("key", entry.key)
        let changes = auditChanges(entry)
        if structured {
            r.append("changes", .array(changes.map(changeObject)))
        } else {
            r.append("changes", changeText(changes, separator: "; "))
        }
        r.append("ledger_id", entry.ledgerId)
        return r
    }

    /// The table columns of an audit trail.
    static let auditColumns: [Column] = [
        Column("id", title: "AUDIT"), Column("changed_at", title: "WHEN"), Column("actor", title: "ACTOR"),
        Column("command", title: "COMMAND"),
        Column("reason", title: "REASON", maxWidth: 40), Column("ticket", title: "TICKET"),
        Column("key", title: "ROW"), Column("changes", title: "CHANGES", important: true, wraps: true),
    ]

    // MARK: field-level changes

    /// Field-level difference of an audit row's before and after (``AuditEntry/changedFields``) as
    /// people read it (dates ISO-8601, `auto_renew` true/false).
    static func auditChanges(_ entry: AuditEntry) -> [FieldChange] {
        entry.changedFields.compactMap { field in
            let before = field.before.flatMap { display($0, column: field.column) }
            let after = field.after.flatMap { display($0, column: field.column) }
            return before == after ? nil : FieldChange(column: field.column, before: before, after: after)
        }
    }

    /// Changes as the engine reports them (values as stored) as people read them: dates ISO-8601,
    /// `auto_renew` true/false.
    static func displayed(_ changes: [FieldChange]) -> [FieldChange] {
        changes.map { change in
            FieldChange(
                column: change.column, before: change.before.map { displayText($0, column: change.column) },
                after: change.after.map { displayText($0, column: change.column) })
        }
    }

    /// `status: pending → paid` parts, `∅` for no value.
    static func changeText(_ changes: [FieldChange], separator: String) -> String {
        changes.map { "\($0.column): \($0.before ?? "∅") → \($0.after ?? "∅")" }.joined(separator: separator)
    }

    /// `{"field": …, "before": …, "after": …}`.
    static func changeObject(_ change: FieldChange) -> JSONValue {
        .object([
            ("field", .string(change.column)),
            ("before", change.before.map(JSONValue.string) ?? .null),
            ("after", change.after.map(JSONValue.string) ?? .null),
        ])
    }

    /// A ledger detail as people read it: earlier builds of the engine wrote `auto_renew` changes as
    /// stored (`auto_renew 1 → 0`); such rows are shown as the engine writes them now (`true → false`).
    static func storedDetail(_ text: String) -> String {
        guard text.contains("auto_renew ") else { return text }
        var result = text
        for (raw, shown) in [
            ("∅ → 1", "∅ → true"), ("∅ → 0", "∅ → false"), ("1 → 0", "true → false"), ("0 → 1", "false → true"),
        ] {
            result = result.replacing("auto_renew " + raw, with: "auto_renew " + shown)
        }
        return result
    }

    /// A JSON value as text for a change line; dates (ms under `*_date`/`*_at`) as ISO-8601.
    static func display(_ value: JSONValue, column: String) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        case .int(let number):
            return DateFields.isDateKey(column) ? Timestamp.iso8601(number) : String(number)
        case .bool(let flag): return flag ? "true" : "false"
        default: return value.serialized()
        }
    }

    /// A `columnValues` text for a change line: dates as ISO-8601, `auto_renew` as true/false.
    static func displayText(_ text: String, column: String) -> String {
        if DateFields.isDateKey(column), let ms = Int64(text) { return Timestamp.iso8601(ms) }
        if column == "auto_renew" { return text == "1" ? "true" : text == "0" ? "false" : text }
        return text
    }
}
