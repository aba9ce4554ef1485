import IAPFoundation
import SubscriptionModel

/// Why a user cannot be forgotten now. Nothing is written when one is thrown.
public enum UserForgetError: Error, Equatable, Sendable {
    /// No row names the user (a typo, or forgotten already).
    case unknownUser(String)
    /// Apple asked for consumption information about one of the user's purchases and the answer is
    /// still due (the request's transaction and deadline): answering needs the account's data.
    case openRefundRequest(transactionId: String, deadline: Int64)
}

/// `users forget USER`: the user's id replaced with a stable alias everywhere iapctl keeps it (the
/// columns the schema marks as holding a user id, and every mention in the free texts it marks as
/// naming users), in the caller's write transaction, audited with the salted hash of the id.
///
/// Kept: every signed fact and the ledger's raw JWS (Apple's signed records of the purchases, which
/// carry no user id of ours: an appAccountToken is an order number), the orders and contracts (money
/// records a tax audit asks for), now under the alias.
public enum UserForgetService {
    /// What a forget did: the alias, the salted hash the audit row keeps, what changed, the audit row.
    public struct Outcome: Sendable, Equatable {
        public var alias: String
        public var saltedHash: String
        public var rows: ForgottenRows
        public var auditId: Int64
    }

    /// Forgets `userId` as `alias` (``UserAlias``'s, computed by the caller with `saltedHash`).
    ///
    /// - Throws: ``UserForgetError/openRefundRequest(transactionId:deadline:)`` while a refund
    ///   request about the user's purchase awaits its answer; ``UserForgetError/unknownUser(_:)``
    ///   when no row names the user; store errors.
    public static func forget(
        _ userId: String, alias: String, saltedHash: String, reason: String, ticket: String?, context: CorrectionContext,
        in session: any StoreSession
    ) throws -> Outcome {
        if let open = try RefundRequests.list(session).first(where: {
            $0.userId == userId && $0.isUnanswered && context.now < $0.deadline
        }) {
            throw UserForgetError.openRefundRequest(transactionId: open.transactionId, deadline: open.deadline)
        }
        let rows = try session.forgetUser(userId, alias: alias) { rewrite($0, userId: userId, alias: alias) }
        guard rows.total > 0 else { throw UserForgetError.unknownUser(userId) }
        var after = JSONObjectWriter(escaping: .foundation, capacity: 256)
        after.add("alias", alias)
        for (column, count) in rows.ids + rows.texts { after.add(column, Int64(count)) }
        after.add("redigested_audit_rows", Int64(rows.redigestedAudit))
        after.add("redigested_ledger_rows", Int64(rows.redigestedLedger))
        var before = JSONObjectWriter(escaping: .foundation, capacity: 96)
        before.add("salted_sha256", saltedHash)
        let auditId = try session.appendAudit(
            AuditEntry(
                at: context.now, actor: context.actor, command: context.command,
                reason: rewrite(reason, userId: userId, alias: alias) ?? reason,
                ticket: ticket.map { rewrite($0, userId: userId, alias: alias) ?? $0 }, entity: .user, key: alias,
                before: before.json, after: after.json))
        return Outcome(alias: alias, saltedHash: saltedHash, rows: rows, auditId: auditId)
    }

    /// `text` with each whole-word mention of `userId` (also as a JSON string escapes it) replaced by
    /// `alias`; nil when there is none. A mention is whole when the characters either side are not
    /// letters, digits, `_`, `-`, `@`, or a `.` inside a word (so `u1` is not found inside `u10` or `u1@example.com`).
    public static func rewrite(_ text: String, userId: String, alias: String) -> String? {
        guard !userId.isEmpty else { return nil }
        var result = text
        var changed = false
        var escaped = JSONValue.string(userId).serialized()
        escaped = String(escaped.dropFirst().dropLast())
        for needle in escaped == userId ? [userId] : [userId, escaped] {
            if let replaced = replaceWords(result, needle, alias) {
                result = replaced
                changed = true
            }
        }
        return changed ? result : nil
    }

    private static func isWordCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "_" || c == "-" || c == "@"
    }

    /// Whether the character at `index` (when there is one) continues a word: a word character, or
    /// a `.` with a letter or digit beyond it (`u1.b`, not the full stop of `… u1.`).
    private static func continuesWord(_ text: String, at index: String.Index, forward: Bool) -> Bool {
        let c = text[index]
        if isWordCharacter(c) { return true }
        guard c == "." else { return false }
        if forward {
            let next = text.index(after: index)
            return next < text.endIndex && (text[next].isLetter || text[next].isNumber)
        }
        guard index > text.startIndex else { return false }
        let previous = text[text.index(before: index)]
        return previous.isLetter || previous.isNumber
    }

    private static func replaceWords(_ text: String, _ needle: String, _ alias: String) -> String? {
        var out = ""
        var changed = false
        var rest = text[...]
        while let range = rest.firstRange(of: needle) {
            let beforeOK =
                range.lowerBound == text.startIndex
                || !continuesWord(text, at: text.index(before: range.lowerBound), forward: false)
            let afterOK = range.upperBound == text.endIndex || !continuesWord(text, at: range.upperBound, forward: true)
            if beforeOK && afterOK {
                out += rest[rest.startIndex..<range.lowerBound]
                out += alias
                changed = true
                rest = rest[range.upperBound...]
            } else {
                let next = text.index(after: range.lowerBound)
                out += rest[rest.startIndex..<next]
                rest = rest[next...]
            }
        }
        out += rest
        return changed ? out : nil
    }
}
