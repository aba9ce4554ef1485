/// A named position a repeated job resumes from, kept in the database (`iap_checkpoints`): how far
/// Notification History has been read and applied, how far an `apple reconcile --all` got. Saved in
/// the same transaction as the work it marks, so a job that is stopped at any moment resumes exactly
/// where its last committed work ended.
public struct Checkpoint: Sendable, Equatable {
    public var id: Int64
    /// What it marks, e.g. `notification-history:Production`.
    public var name: String
    /// The job's own position (a time, a revision token, a JSON document).
    public var value: String
    /// When it was last saved (ms since the epoch).
    public var updatedAt: Int64

    public init(id: Int64 = 0, name: String, value: String, updatedAt: Int64) {
        self.id = id
        self.name = name
        self.value = value
        self.updatedAt = updatedAt
    }
}
