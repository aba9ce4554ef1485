/// What really differs between SQL engines, as data: the session, the transaction runner and the
/// schema renderers read it; no backend writes its own copy of that code.
public struct SQLDialect: Sendable {
    /// Statements that open a read transaction (a consistent snapshot), in order.
    public var beginRead: [String]
    /// Statements that open a write transaction, in order.
    public var beginWrite: [String]
    /// Appended to single-row look-ups the engine updates afterwards, in write transactions
    /// (`" FOR UPDATE"`); empty where a write transaction holds the only write lock.
    public var forUpdate: String
    /// Whether ``StoreSession/lockRows(contractIds:orderNos:)`` takes row locks (else a no-op).
    public var locksRows: Bool
    /// The bound value of `LIMIT ?` that means no limit.
    public var noLimit: Int64
    /// Savepoint statements; `{name}` is replaced with the savepoint's name.
    public var savepoint: String
    public var releaseSavepoint: String
    public var rollbackToSavepoint: String
    /// Whether a savepoint rolled back to is then released (SQLite keeps it on the stack otherwise).
    public var releaseAfterRollbackTo: Bool
    /// Whether a kept savepoint is released. SQLite stacks savepoints of one name, so it must be;
    /// MySQL replaces a savepoint by the next one of the same name, and COMMIT (or the unit marker's
    /// release before it) drops them all, so the RELEASE, one round trip per item, is left out.
    public var releaseKeptSavepoint: Bool
    /// `INSERT OR IGNORE` / `INSERT IGNORE`: an insert that skips rows violating a unique key.
    public var insertIgnore: String
    /// The clause after an insert's VALUES that turns a duplicate of the unique `{key}` into a no-op.
    public var onDuplicateDoNothing: String
    /// The statement opening the schema-version probe outside a transaction (nil: none needed).
    public var schemaProbeBegin: String?
    /// Whether the iap_schema_migrations table exists: one `?`, bound to the table name.
    public var tableExists: String
    /// Whether a failed COMMIT on a lost connection leaves the outcome unknown (a server), so the
    /// error says so.
    public var commitOutcomeCanBeUnknown: Bool
    /// Type names for ``SQLType``; `{size}` is replaced with the type's size.
    public var typeNames: [SQLType.Kind: String]
    /// Statements run before a write transaction's COMMIT: they fail when the transaction open now
    /// is not the one the unit began (a server that ended it silently), so nothing commits.
    public var beforeCommit: [String]
    /// Whether a row inserted in a write transaction gets the id after the table's largest (one
    /// writer at a time, no AUTOINCREMENT gaps): SQLite's rowid. The session then knows the ids of
    /// the audit rows it is about to write (``DetailReference``).
    public var nextIdFollowsLargest: Bool
    /// Whether an INSERT can return a result (`INSERT … RETURNING`, MariaDB 10.5+): the claim of a
    /// notification then also says whether the ledger holds a copy of it (``StoreSQL/claimReturningCopy``).
    public var insertReturning = false
    /// Whether a batch's rows are locked by one `SELECT … WHERE key IN (…) ORDER BY key FOR UPDATE`
    /// (PostgreSQL: `FOR UPDATE` is not allowed in a `UNION`, and it locks rows in the order the
    /// sort returns them, the same in every process) instead of one locking look-up per key.
    public var locksRowsInOneSortedScan = false
    /// Statements run after a committed erasure (`users forget`), outside any transaction, so the
    /// replaced bytes are gone from the files too, not only from the rows: SQLite rewrites the
    /// file (its free pages may still hold them) and empties its write-ahead log.
    public var afterErasure: [String] = []

    public init(
        beginRead: [String], beginWrite: [String], forUpdate: String, locksRows: Bool, noLimit: Int64,
        savepoint: String, releaseSavepoint: String, rollbackToSavepoint: String, releaseAfterRollbackTo: Bool,
        releaseKeptSavepoint: Bool = true, insertIgnore: String, onDuplicateDoNothing: String,
        schemaProbeBegin: String?, tableExists: String,
        commitOutcomeCanBeUnknown: Bool, typeNames: [SQLType.Kind: String], beforeCommit: [String] = [],
        nextIdFollowsLargest: Bool = false
    ) {
        self.beforeCommit = beforeCommit
        self.nextIdFollowsLargest = nextIdFollowsLargest
        self.beginRead = beginRead
        self.beginWrite = beginWrite
        self.forUpdate = forUpdate
        self.locksRows = locksRows
        self.noLimit = noLimit
        self.savepoint = savepoint
        self.releaseSavepoint = releaseSavepoint
        self.rollbackToSavepoint = rollbackToSavepoint
        self.releaseAfterRollbackTo = releaseAfterRollbackTo
        self.releaseKeptSavepoint = releaseKeptSavepoint
        self.insertIgnore = insertIgnore
        self.onDuplicateDoNothing = onDuplicateDoNothing
        self.schemaProbeBegin = schemaProbeBegin
        self.tableExists = tableExists
        self.commitOutcomeCanBeUnknown = commitOutcomeCanBeUnknown
        self.typeNames = typeNames
    }

    /// The engine's name for `type`.
    public func typeName(_ type: SQLType) -> String {
        let template = typeNames[type.kind] ?? "?"
        return template.replacing("{size}", with: String(type.size ?? 0))
    }

    /// `template` with `{name}` replaced (savepoint statements; names are never values).
    public static func fill(_ template: String, _ key: String, _ value: String) -> String {
        template.replacing("{\(key)}", with: value)
    }

    /// An insert of `columns` into `table` that ignores a duplicate of the unique `key`.
    public func insertIgnoringDuplicate(into table: String, columns: [String], key: String) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES ("
            + StoreSQL.placeholders(columns.count) + ") " + Self.fill(onDuplicateDoNothing, "key", key)
    }
}
