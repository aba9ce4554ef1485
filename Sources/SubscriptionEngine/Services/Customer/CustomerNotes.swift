import IAPFoundation
import SubscriptionModel

/// Why a note cannot be kept. Nothing is written when one is thrown.
public enum CustomerNoteError: Error, Equatable, Sendable {
    /// The text is empty (after trimming).
    case empty
    /// The text is longer than ``CustomerNotes/maxLength`` characters.
    case tooLong(Int)
    /// The text holds a control character other than a newline or a tab (it would drive a terminal).
    case controlCharacter(UInt32)
}

/// `iapctl customer note add|list`: what support learned about a customer, audited. A note is only
/// ever added (its audit row records it; `audit undo` refuses it); a correction is another note.
public enum CustomerNotes {
    /// The longest note kept, in characters.
    public static let maxLength = 4000

    /// The command a note's audit row is recorded under.
    public static let command = "customer note add"

    /// Checks `text` and returns it trimmed.
    public static func checked(_ text: String) throws(CustomerNoteError) -> String {
        let trimmed = String(text.trimmed(.whitespace))
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.count <= maxLength else { throw .tooLong(trimmed.count) }
        for scalar in trimmed.unicodeScalars
        where (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value) {
            throw .controlCharacter(scalar.value)
        }
        return trimmed
    }

    /// Keeps a note about `user` with its audit row, in the caller's write transaction.
    public static func add(
        user: String, text: String, ticket: String?, actor: String, now: Int64, in session: any StoreSession
    ) throws -> CustomerNote {
        let text = try checked(text)
        var after: [(key: String, value: JSONValue)] = [("user_id", .string(user)), ("text", .string(text))]
        after.append(("ticket", ticket.map(JSONValue.string) ?? .null))
        let auditId = try session.appendAudit(
            AuditEntry(
                at: now, actor: actor, command: command, reason: "note about the customer", ticket: ticket, entity: .note,
                key: user, before: nil, after: JSONValue.object(after).serialized()))
        var note = CustomerNote(userId: user, at: now, actor: actor, text: text, ticket: ticket, auditId: auditId)
        note.id = try session.insertCustomerNote(note)
        return note
    }

    /// The notes about `user`, newest first, each checked against the audit row that recorded it
    /// (itself checked by its digest): a note whose user, text or ticket differ from what its audit
    /// row says was changed outside iapctl and is refused (``StoreError/corrupt(table:id:what:)``).
    public static func list(user: String, in session: any StoreSession) throws -> [CustomerNote] {
        let notes = try session.customerNotes(userId: user)
        guard !notes.isEmpty else { return [] }
        var recorded: [Int64: AuditEntry] = [:]
        for entry in try session.audit(entity: .note, key: user) { recorded[entry.id] = entry }
        for note in notes {
            guard let entry = recorded[note.auditId], let after = entry.after,
                let json = try? JSONParser.parse(after),
                json["user_id"]?.stringValue == note.userId, json["text"]?.stringValue == note.text,
                json["ticket"]?.stringValue == note.ticket, entry.actor == note.actor, entry.at == note.at
            else {
                throw StoreError.corrupt(
                    table: "iap_customer_notes", id: note.id,
                    what: "it does not hold what its audit row #\(note.auditId) recorded")
            }
        }
        return notes
    }
}
