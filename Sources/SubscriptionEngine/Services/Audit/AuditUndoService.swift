import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why an audited change cannot be undone. Nothing is written when one is thrown.
public indirect enum AuditUndoError: Error, Equatable, Sendable {
    /// No audit row with this id.
    case notFound(Int64)
    /// The row was undone already, by audit row `by`.
    case alreadyUndone(Int64, by: Int64)
    /// The row recorded a creation: there is no earlier state.
    case creation(Int64, EntityKind, key: String)
    /// The row's `after` state cannot be read.
    case unreadable(Int64)
    /// The audited order or contract no longer exists.
    case rowGone(Int64, EntityKind, key: String)
    /// The row changed since the audited change (the changes since, values as stored).
    case changedSince(Int64, EntityKind, key: String, drift: [FieldChange])
    /// The audited change set a column that cannot be set by hand.
    case notEditable(Int64, EntityKind, column: String)
    /// Putting the old values back broke a rule (a transactionId now on another order, a unique key).
    case refused(Int64, CorrectionError)
    /// A member of the engine's change set of one ledger event could not be undone, so none was.
    case changeSet(Int64, ledgerId: Int64, members: [AuditUndoService.Member], because: AuditUndoError)
    /// The row records a change that cannot be undone (why).
    case notUndoable(Int64, why: String)
}

/// `audit undo ID`: puts back the values an audited change replaced, as a new audited correction.
///
/// The row must still be exactly as that change left it (else ``AuditUndoError/changedSince(_:_:key:drift:)``:
/// someone or something changed it since, and undoing would silently discard that). The engine changes an
/// order and its contract together for one notification: that change set is undone as a whole (newest row
/// first) or not at all. Works in the caller's write transaction.
public enum AuditUndoService {
    /// One audit row of a change set.
    public struct Member: Sendable, Equatable {
        public var id: Int64
        public var entity: EntityKind

        public init(id: Int64, entity: EntityKind) {
            self.id = id
            self.entity = entity
        }
    }

    /// The command an undo of audit row `id` is recorded under.
    public static func command(undoing id: Int64) -> String { commandPrefix + String(id) }

    /// The start of the command of every undo row (`audit undo `, then the id undone).
    static let commandPrefix = "audit undo "

    /// Undoes audit row `id` (and the rest of its engine change set) inside `session`.
    ///
    /// - Returns: one result per undone audit row (newest first); a result without changes (and without
    ///   an audit id) when the row already holds the old values; then, when the undo removed overrides,
    ///   one result (without an audit id of its own) per row the re-derivation from the facts changed.
    /// - Throws: ``AuditUndoError``; store errors.
    public static func undo(
        _ id: Int64, reason: String, ticket: String?, actor: String, now: Int64, in session: any StoreSession
    ) throws -> [CorrectionResult] {
        try undo([id], reason: reason, ticket: ticket, actor: actor, now: now, in: session)
    }

    /// Undoes the audit rows `ids` (each with the rest of its engine change set) inside `session`,
    /// newest row first, all or nothing: every row is checked before any is written, and a row that
    /// cannot be undone throws (naming it) so the caller's transaction changes nothing. Each row's undo
    /// is its own audit row, recorded under the command `audit undo ID`.
    ///
    /// - Returns: as ``undo(_:reason:ticket:actor:now:in:)``, for all rows, newest first.
    /// - Throws: ``AuditUndoError``; store errors.
    public static func undo(
        _ ids: [Int64], reason: String, ticket: String?, actor: String, now: Int64, in session: any StoreSession
    ) throws -> [CorrectionResult] {
        let all = try session.auditEntries(matching: AuditFilter())
        // Each requested row with its change set (the requested id names it in errors).
        var sets: [(requested: Int64, ledgerId: Int64?, members: [AuditEntry])] = []
        for id in ids {
            guard let entry = try session.auditEntry(id: id) else { throw AuditUndoError.notFound(id) }
            var set = [entry]
            if let ledgerId = entry.ledgerId {
                set = all.filter { $0.ledgerId == ledgerId }.sorted { $0.id > $1.id }
            }
            sets.append((id, entry.ledgerId, set))
        }
        let undone = undoneBy(all)
        for set in sets {
            for member in set.members {
                if let undo = undone[member.id] { throw AuditUndoError.alreadyUndone(member.id, by: undo) }
            }
        }
        // Newest first, each row once: a later change to a row is undone before an earlier one.
        var seen = Set<Int64>()
        let ordered = sets.flatMap { set in set.members.map { (member: $0, set: set) } }
            .sorted { $0.member.id > $1.member.id }
            .filter { seen.insert($0.member.id).inserted }
        var results: [CorrectionResult] = []
        for (member, set) in ordered {
            do {
                results += try undoOne(member, reason: reason, ticket: ticket, actor: actor, now: now, in: session)
            } catch let error as AuditUndoError where set.members.count > 1 {
                throw AuditUndoError.changeSet(
                    set.requested, ledgerId: set.ledgerId ?? 0,
                    members: set.members.map { Member(id: $0.id, entity: $0.entity) }, because: error)
            }
        }
        return results
    }

    /// The audit rows recorded under `ticket` that an undo of the whole batch takes: every row of the
    /// ticket but the undos themselves, newest first. Empty when there are none.
    public static func ids(ticket: String, in session: any StoreSession) throws -> [Int64] {
        try session.auditEntries(matching: AuditFilter(ticket: ticket))
            .filter { !$0.command.hasPrefix(commandPrefix) }
            .map(\.id)
    }

    /// For each audit row undone among `entries`' later rows: the id of the row that undid it.
    /// `entries` must hold the undo rows (an undo is recorded after what it undoes).
    public static func undoneBy(_ entries: [AuditEntry]) -> [Int64: Int64] {
        let prefix = commandPrefix
        var undone: [Int64: Int64] = [:]
        for entry in entries where entry.command.hasPrefix(prefix) {
            guard let id = Int64(entry.command.dropFirst(prefix.count)) else { continue }
            undone[id] = min(undone[id] ?? entry.id, entry.id)
        }
        return undone
    }

    /// For each of `entries` that was undone: the id of the row that undid it (read from the trail
    /// since the oldest of them, inside the caller's read transaction).
    public static func undoneBy(of entries: [AuditEntry], in session: any StoreSession) throws -> [Int64: Int64] {
        guard let oldest = entries.map(\.at).min() else { return [:] }
        let ids = Set(entries.map(\.id))
        return undoneBy(try session.auditEntries(matching: AuditFilter(since: oldest))).filter { ids.contains($0.key) }
    }

    /// Undoes one audit row: puts back its values and removes the overrides it made.
    static func undoOne(
        _ member: AuditEntry, reason: String, ticket: String?, actor: String, now: Int64, in session: any StoreSession
    ) throws -> [CorrectionResult] {
        let context = CorrectionContext(actor: actor, command: command(undoing: member.id), now: now)
        // An undo removes the overrides the undone correction made (then the row is re-derived
        // from the facts); otherwise its changes of derived fields are overrides like any hand change.
        let made = try session.overrides(entity: member.entity, key: member.key).filter { $0.auditId == member.id && $0.inForce }
        let result: CorrectionResult
        switch member.entity {
        case .order:
            result = try undo(
                member, as: Order.self, reason: reason, ticket: ticket, context, in: session, keepsOverrides: made.isEmpty)
        case .contract:
            result = try undo(
                member, as: Contract.self, reason: reason, ticket: ticket, context, in: session, keepsOverrides: made.isEmpty)
        case .grant:
            return [try GrantService.undo(member, reason: reason, ticket: ticket, context: context, in: session)]
        case .user:
            throw AuditUndoError.notUndoable(
                member.id, why: "forgetting a user cannot be undone: iapctl keeps no copy of the old id")
        case .note:
            // A note is only ever added: a correction is another note.
            throw AuditUndoError.creation(member.id, member.entity, key: member.key)
        }
        var results = [result]
        if !made.isEmpty {
            let why = "removed by audit undo" + (result.auditId.map { " (audit #\($0))" } ?? "")
            let removed = try OverrideService.remove(
                entity: member.entity, key: member.key, why: why, ticket: ticket, context: context, in: session,
                matching: { $0.auditId == member.id })
            results += zip(removed.rederived, removed.auditIds).map {
                CorrectionResult(line: nil, entity: $0.entity, key: $0.key, changes: $0.fields, auditId: $1)
            }
        }
        return results
    }

    /// Checks the row is as the audited change left it, then writes back the replaced values.
    static func undo<Row: CorrectableRow>(
        _ entry: AuditEntry, as _: Row.Type, reason: String, ticket: String?, _ context: CorrectionContext,
        in session: any StoreSession, keepsOverrides: Bool
    ) throws -> CorrectionResult {
        guard let before: Row = decode(entry.before) else {
            throw AuditUndoError.creation(entry.id, entry.entity, key: entry.key)
        }
        guard let after: Row = decode(entry.after) else { throw AuditUndoError.unreadable(entry.id) }
        guard let current = try Row.find(entry.key, field: Row.keyFields[0], in: session) else {
            throw AuditUndoError.rowGone(entry.id, entry.entity, key: entry.key)
        }
        let drift = diff(after.columnValues, current.columnValues)
        if !drift.isEmpty { throw AuditUndoError.changedSince(entry.id, entry.entity, key: entry.key, drift: drift) }
        var row = current
        for (old, new) in zip(before.columnValues, after.columnValues) where old.1 != new.1 {
            guard Row.editableFields.contains(old.0), let edit = Row.edit(copying: old.0, from: before) else {
                throw AuditUndoError.notEditable(entry.id, entry.entity, column: old.0)
            }
            row.apply(edit)
        }
        do {
            return try CorrectionService.save(
                row, replacing: current, reason: reason, ticket: ticket, context: context, in: session,
                keepsOverrides: keepsOverrides)
        } catch let error as CorrectionError {
            throw AuditUndoError.refused(entry.id, error)
        }
    }

    /// A row from its audit JSON.
    static func decode<Row: Decodable>(_ json: String?) -> Row? { EngineAuditJSON.decode(json) }
}
