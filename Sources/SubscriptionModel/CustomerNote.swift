/// What support learned about a customer (`iapctl customer note add`): plain text kept in
/// `iap_customer_notes`, each with the audit row that recorded it. Notes are only ever added.
public struct CustomerNote: Sendable, Equatable {
    public var id: Int64
    /// The user the note is about.
    public var userId: String
    /// When it was written (ms since the epoch).
    public var at: Int64
    public var actor: String
    public var text: String
    public var ticket: String?
    /// The audit row that recorded it.
    public var auditId: Int64

    public init(
        id: Int64 = 0, userId: String, at: Int64, actor: String, text: String, ticket: String? = nil, auditId: Int64 = 0
    ) {
        self.id = id
        self.userId = userId
        self.at = at
        self.actor = actor
        self.text = text
        self.ticket = ticket
        self.auditId = auditId
    }
}
