import AppStoreAPI
import AppStoreJWS
import ClientSubmissions
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl apple notifications sync`: Notification History read from where the last run stopped (a
/// checkpoint in the database), each notification verified and applied through the engine as Apple's
/// word (`source: .apple`, exactly like `notify`), and the checkpoint moved in the same transaction as
/// the page of work it marks. A run stopped at any moment (killed, Ctrl-C, Apple or the database
/// failing) resumes without a gap; nothing is applied twice (each notificationUUID is processed once).
public enum NotificationSync {
    /// How far before the checkpoint a run starts again (10 minutes).
    ///
    /// Apple orders the history by when it sent each notification, but nothing promises that a
    /// notification shows up in the history the instant it is sent, nor that two sent in the same
    /// second land on the same side of a page break. Reading a little of what was already read again
    /// costs a few look-ups of the ledger; missing a refund costs money. Re-read notifications are
    /// recognised by their notificationUUID (reported `duplicate`, never applied or stored twice).
    public static let overlap: Int64 = 10 * 60_000

    /// How far behind now a window ends (1 minute): the newest minute is read by the next run, when
    /// Apple has surely recorded it.
    public static let lag: Int64 = 60_000

    /// How far back a first run reads when there is no checkpoint and no `--since` (1 day).
    public static let firstRunDays: Int64 = 1

    /// The checkpoint of one server's history: `notification-history:Production`.
    public static func checkpointName(_ server: APIServer) -> String { "notification-history:\(server.rawValue)" }

    /// What a checkpoint keeps: every notification Apple sent before `through` was read and applied
    /// (saved as `{"through": ms}`).
    public struct Position: Sendable, Equatable {
        public var through: Int64

        public init(through: Int64) { self.through = through }

        /// The position a saved checkpoint holds.
        public init(_ checkpoint: Checkpoint) throws(Refusal) {
            guard let json = try? JSONText.parse(checkpoint.value), let through = json["through"]?.int64Value else {
                throw .unreadableCheckpoint(name: checkpoint.name, value: checkpoint.value)
            }
            self.through = through
        }

        /// The checkpoint's stored value.
        public var value: String { JSONValue.object([("through", .int(through))]).serialized() }
    }

    /// A window Apple would refuse, or a checkpoint that cannot be used.
    public enum Refusal: Error, Sendable, Equatable {
        /// The checkpoint's value is not a position this build wrote.
        case unreadableCheckpoint(name: String, value: String)
        /// The start lies beyond the 180 days Apple keeps; `fromCheckpoint`: the start came from the
        /// checkpoint (the job has not run for months), not from `--since`.
        case beyondRetention(start: Int64, fromCheckpoint: Bool)
        /// The start is not before the window's end (now minus ``lag``): `--since` too recent, or a
        /// checkpoint ahead of this machine's clock.
        case startNotBeforeEnd(start: Int64, end: Int64, fromCheckpoint: Bool)
    }

    /// Where a window's start came from.
    public enum Origin: String, Sendable {
        /// The checkpoint, less ``overlap``.
        case checkpoint
        /// `--since`: a first run's start, or starting over.
        case since
        /// A first run without `--since`: ``firstRunDays`` back.
        case firstRun = "first run"
    }

    /// The part of the history one run reads.
    public struct Window: Sendable, Equatable {
        public var start: Int64
        public var end: Int64
        public var origin: Origin
        /// The checkpoint the run resumes from (nil unless `origin` is `.checkpoint`).
        public var resumed: Position?

        /// Get Notification History's request for the window (every notification, not only failures).
        public var query: NotificationHistoryQuery { NotificationHistoryQuery(start: start, end: end) }
    }

    /// The window of a run at `now`: from `since` when given (starting over), else from the saved
    /// position less ``overlap``, else (a first run) ``firstRunDays`` back; to `now` less ``lag``.
    public static func window(saved: Position?, since: Int64?, now: Int64) throws(Refusal) -> Window {
        let end = now - lag
        let window: Window
        if let since {
            window = Window(start: since, end: end, origin: .since)
        } else if let saved {
            window = Window(start: saved.through - overlap, end: end, origin: .checkpoint, resumed: saved)
        } else {
            window = Window(start: now - firstRunDays * 86_400_000, end: end, origin: .firstRun)
        }
        let fromCheckpoint = window.origin == .checkpoint
        guard window.start < window.end else {
            throw .startNotBeforeEnd(start: window.start, end: window.end, fromCheckpoint: fromCheckpoint)
        }
        do {
            try NotificationHistoryQuery.checkWindow(start: window.start, end: window.end, now: now)
        } catch {
            throw .beyondRetention(start: window.start, fromCheckpoint: fromCheckpoint)
        }
        return window
    }

    /// One notification of a run: its number in the run (1-based, across pages) and what became of it.
    public struct Item {
        public var line: Int
        public var result: IngestResult
    }

    /// What a run did.
    public struct Summary: Sendable, Equatable {
        /// Pages read from Apple.
        public var pages = 0
        /// Notifications in them (repeats within the run not counted twice).
        public var notifications = 0
        /// The checkpoint saved last (nil in a dry run, or when no page was committed).
        public var saved: Position?
    }

    /// A page's answer that is not Get Notification History's, or a dry run too large to hold.
    public enum PageRefusal: Error, Sendable, Equatable {
        /// No `notificationHistory` array, or an item without `signedPayload`.
        case response(NotificationHistory.ResponseRefusal)
        /// A dry run's notifications passed ``maxDryRunBytes`` at page `page`.
        case dryRunTooLarge(page: Int)
    }

    /// The most bytes of signed notifications a dry run holds (64 MiB): it applies the whole window in
    /// one transaction that is rolled back, so it keeps every page's notifications until the end (a
    /// real run keeps one page: each is committed as it arrives).
    public static let maxDryRunBytes = 64 << 20

    /// The position saved under checkpoint `name` in `store` (nil: none yet).
    public static func saved(_ name: String, in store: any Store) throws -> Position? {
        guard let checkpoint = try store.read({ try $0.checkpoint(named: name) }) else { return nil }
        return try Position(checkpoint)
    }

    /// Asks Apple for one page: the request body and, after the first page, the pagination token.
    public typealias Fetch = (_ body: JSONValue, _ paginationToken: String?) throws -> JSONValue
}

/// One run of ``NotificationSync``: the pages of a window, each applied in one write transaction that
/// also saves the checkpoint.
public final class NotificationSyncRun {
    let store: any Store
    let verifier: AppStoreVerifier
    let name: String
    let ingest: NotificationIngest
    let dryRun: Bool
    let clock: () -> Int64
    let limits: WalkLimits
    /// The walk under way (its total deadline bounds each request `fetch` sends: pass it to the client).
    public private(set) var walk: PageWalk?
    /// The checkpoint this run saved last (nil: none yet); still set when the run stopped on an error.
    public private(set) var saved: NotificationSync.Position?

    /// - Parameters:
    ///   - name: the checkpoint (``NotificationSync/checkpointName(_:)``).
    ///   - dryRun: every page is read first, then all are applied in one transaction that is rolled
    ///     back (so later items see earlier ones, as in the real run); the checkpoint does not move.
    ///   - shouldStop: asked between items (Ctrl-C): the open page is rolled back, the ones before
    ///     stay committed with their checkpoint.
    ///   - limits: the walk's page cap and total deadline (``WalkLimits``).
    public init(
        store: any Store, verifier: AppStoreVerifier, checkpoint name: String, context: EngineContext,
        engine: SubscriptionEventEngine = SubscriptionEventEngine(), dryRun: Bool, shouldStop: @escaping () -> Bool = { false },
        limits: WalkLimits = WalkLimits(), clock: @escaping () -> Int64 = Timestamp.now
    ) {
        self.limits = limits
        self.store = store
        self.verifier = verifier
        self.name = name
        self.ingest = NotificationIngest(store: store, engine: engine, context: context, shouldStop: shouldStop, clock: clock)
        self.dryRun = dryRun
        self.clock = clock
    }

    /// Reads `window` page by page through `fetch` and applies each page in its own transaction,
    /// saving the checkpoint in it: after a page, the newest verified signedDate seen so far (within
    /// the window); after the last page, the window's end. `page` hears each page's items once it is
    /// committed (a dry run: once all are applied and rolled back). An expired pagination token
    /// starts the window again once (what was applied is recognised). Errors from `fetch` and the
    /// store are thrown after the pages before them were committed and heard.
    ///
    /// A real run keeps one page in memory. The walk is bounded (``WalkLimits``): a page whose
    /// `paginationToken` repeats an earlier one (or is missing) stops the run before that page is
    /// applied, the page cap and the total deadline after it; the checkpoint stays where the last
    /// committed page put it (``saved``).
    public func run(
        _ window: NotificationSync.Window, fetch: NotificationSync.Fetch, page: ([NotificationSync.Item]) -> Void
    ) throws -> NotificationSync.Summary {
        var summary = NotificationSync.Summary()
        // Never move the checkpoint back: a window that resumes re-reads the overlap.
        var through = window.resumed?.through ?? window.start
        var seen = Set<String>()
        var line = 0
        var pending: [[VerifiedItem]] = []
        var pendingBytes = 0
        var token: String?
        var restarted = false
        walk = PageWalk(what: "notification history", marker: "paginationToken", limits: limits, now: clock())
        defer { walk = nil }
        while true {
            if ingest.shouldStop() { throw NotificationIngest.Stopped() }
            let answer: JSONValue
            do {
                answer = try fetch(window.query.body, token)
            } catch let error as AppStoreAPIError
                where AppStoreServerAPI.expiredTokenCodes.contains(error.appleCode ?? 0) && token != nil && !restarted
            {
                restarted = true
                token = nil
                walk?.restart()
                continue
            }
            let entries: [NotificationHistory.Entry]
            do { entries = try NotificationHistory.entries(in: answer) } catch { throw NotificationSync.PageRefusal.response(error) }
            walk?.received()
            summary.pages += 1
            let more = answer["hasMore"]?.boolValue == true
            let next = more ? answer["paginationToken"]?.stringValue : nil
            // A page that points back at an earlier one is not applied: the walk loops.
            if more { try walk?.check(next) }
            var items: [VerifiedItem] = []
            for entry in entries {
                let verified = VerifiedItem.verify(WebhookBody.Item(line: line + 1, result: .success(entry.jws)), with: verifier)
                // Apple may list one notification twice (a page break, a restarted walk): once is enough.
                if case .event(let event) = verified.verdict, let uuid = event.notificationUUID, !seen.insert(uuid).inserted {
                    continue
                }
                line += 1
                items.append(verified)
                pendingBytes += entry.jws.utf8.count
                // Only a verified date moves the checkpoint (a forged item cannot skip the history).
                if case .event(let event) = verified.verdict, let signed = event.signedDate {
                    through = max(through, min(signed, window.end))
                }
            }
            summary.notifications += items.count
            if !more { through = window.end }
            if dryRun {
                guard pendingBytes <= NotificationSync.maxDryRunBytes else {
                    throw NotificationSync.PageRefusal.dryRunTooLarge(page: summary.pages)
                }
                pending.append(items)
            } else {
                page(try commit(items, through: NotificationSync.Position(through: through)))
                summary.saved = NotificationSync.Position(through: through)
                saved = summary.saved
            }
            if !more { break }
            try walk?.advance(to: next, now: clock())
            token = next
        }
        if dryRun { page(try rollBack(pending)) }
        return summary
    }

    /// One page's items and the checkpoint in one write transaction (retried whole when busy).
    private func commit(_ items: [VerifiedItem], through: NotificationSync.Position) throws -> [NotificationSync.Item] {
        try RetryPolicy.run(retryingConflicts: false) {
            try store.write(commit: true) { session in
                let done = try apply(items, in: session)
                try session.saveCheckpoint(Checkpoint(name: name, value: through.value, updatedAt: clock()))
                return done
            }
        }
    }

    /// A dry run's pages in one transaction, rolled back.
    private func rollBack(_ pages: [[VerifiedItem]]) throws -> [NotificationSync.Item] {
        try store.write(commit: false) { session in
            var done: [NotificationSync.Item] = []
            for items in pages { done += try apply(items, in: session) }
            return done
        }
    }

    /// Each item inside the open transaction: one the ledger already processed (the overlap re-read,
    /// or the webhook delivered it) is a `duplicate` left out of the engine and the ledger; the rest
    /// as `notify` takes them (refused ones kept in the ledger as rejected).
    private func apply(_ items: [VerifiedItem], in session: any StoreSession) throws -> [NotificationSync.Item] {
        try NotificationIngest.lockRows(of: items[...], in: session)
        var done: [NotificationSync.Item] = []
        for item in items {
            if ingest.shouldStop() { throw NotificationIngest.Stopped() }
            if case .event(let event) = item.verdict, let uuid = event.notificationUUID,
                let prior = try session.processedLedgerEntry(notificationUUID: uuid)
            {
                let outcome = Outcome(
                    verdict: .duplicate,
                    detail: "notification \(uuid) was already processed (ledger #\(prior.id): \(prior.verdict.rawValue))",
                    ledgerId: prior.id)
                done.append(NotificationSync.Item(line: item.line, result: .applied(event, outcome)))
                continue
            }
            done.append(NotificationSync.Item(line: item.line, result: try ingest.process(item, in: session, retryingConflicts: true)))
        }
        return done
    }
}
