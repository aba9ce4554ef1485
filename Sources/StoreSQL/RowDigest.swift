import CryptoDigest
import IAPFoundation
import SubscriptionModel

/// The check of an audit or ledger row whose columns are plain text (`row_digest`): the SHA-256,
/// as 64 lower-case hex digits, of the row's fields in a fixed order, each written as `~` when
/// NULL, else as its UTF-8 byte count in decimal, `:` and its bytes (numbers in decimal). Written
/// with the row and on every update of it, checked on every read: a changed byte in any field is
/// reported as ``StoreError/corrupt(table:id:what:)`` instead of being shown or restored.
/// Sources/StoreSQL/FORMATS.md lists the fields.
public enum RowDigest {
    /// The ledger's fields, in order: received_at, source, notification_uuid, notification_type,
    /// subtype, transaction_id, original_transaction_id, app_account_token, signed_date, verdict,
    /// detail, raw_of, raw_zstd (its bytes).
    public static func ledger(_ entry: LedgerEntry, rawOf: Int64?, rawZstd: [UInt8]?) -> String {
        var fields = Fields()
        fields.add(entry.receivedAt)
        fields.add(entry.source.rawValue)
        fields.add(entry.notificationUUID)
        fields.add(entry.notificationType)
        fields.add(entry.subtype)
        fields.add(entry.transactionId)
        fields.add(entry.originalTransactionId)
        fields.add(entry.appAccountToken)
        fields.add(entry.signedDate)
        fields.add(entry.verdict.rawValue)
        fields.add(entry.detail)
        fields.add(rawOf)
        fields.add(rawZstd)
        return fields.digest
    }

    /// The audit's fields, in order: at, actor, command, reason, ticket, entity, entity_key,
    /// before_json, after_json, ledger_id.
    public static func audit(_ entry: AuditEntry) -> String {
        var fields = Fields()
        fields.add(entry.at)
        fields.add(entry.actor)
        fields.add(entry.command)
        fields.add(entry.reason)
        fields.add(entry.ticket)
        fields.add(entry.entity.rawValue)
        fields.add(entry.key)
        fields.add(entry.before)
        fields.add(entry.after)
        fields.add(entry.ledgerId)
        return fields.digest
    }

    /// The canonical byte string of a row's fields.
    struct Fields {
        var bytes: [UInt8] = []

        mutating func add(_ value: [UInt8]?) {
            guard let value else {
                bytes.append(UInt8(ascii: "~"))
                return
            }
            bytes += Array(String(value.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes += value
        }

        mutating func add(_ value: String?) { add(value.map { Array($0.utf8) }) }
        mutating func add(_ value: Int64?) { add(value.map { String($0) }) }

        var digest: String { Hex.encode(SHA256Digest.of(bytes)) }
    }
}
