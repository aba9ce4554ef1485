import AppStoreAPI
import AppStoreJWS
import AppleFlows
import ClientSubmissions
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `apple notifications sync`'s core on every backend: Notification History read from a checkpoint,
/// each page applied in one transaction with the checkpoint, nothing applied twice, no gap after a
/// run that stopped.
@Suite("Notification history sync")
struct NotificationSyncTests {
    static let name = NotificationSync.checkpointName(.sandbox)
    /// The time the runs happen at: 100 days after the world's first purchase.
    static let now = World.t0 + 100 * World.day

    /// Apple's Get Notification History as pages of signed payloads: the first page without a token,
    /// page `i` (i ≥ 1) with token `p<i+1>`; `failing` pages throw; every request is recorded.
    final class History {
        var pages: [[String]]
        var failing: Set<Int> = []
        /// Tokens refused once as expired (Apple's 4000014).
        var expiring: Set<String> = []
        private(set) var requests: [(start: Int64?, end: Int64?, token: String?)] = []

        init(_ pages: [[String]]) { self.pages = pages }

        struct Down: Error {}

        func fetch(_ body: JSONValue, _ token: String?) throws -> JSONValue {
            requests.append((body["startDate"]?.int64Value, body["endDate"]?.int64Value, token))
            if let token, expiring.remove(token) != nil {
                var error = AppStoreAPIError(.invalidRequest, "pagination token expired")
                error.appleCode = 4_000_014
                throw error
            }
            let index = token.map { Int($0.dropFirst())! - 1 } ?? 0
            if failing.contains(index) { throw Down() }
            var page: [(key: String, value: JSONValue)] = [
                ("notificationHistory", .array(pages[index].map { .object([("signedPayload", .string($0))]) })),
                ("hasMore", .bool(index + 1 < pages.count)),
            ]
            if index + 1 < pages.count { page.append(("paginationToken", .string("p\(index + 2)"))) }
            return .object(page)
        }
    }

    func run(_ world: World, dryRun: Bool = false, shouldStop: @escaping () -> Bool = { false }) -> NotificationSyncRun {
        NotificationSyncRun(
            store: world.store, verifier: world.verifier, checkpoint: Self.name, context: world.context, dryRun: dryRun,
            shouldStop: shouldStop, clock: { Self.now })
    }

    /// One run of `history` at `now` (from `since`, else the checkpoint); its items' verdicts in order.
    func sync(
        _ world: World, _ history: History, since: Int64? = nil, now: Int64 = NotificationSyncTests.now, dryRun: Bool = false
    ) throws -> (verdicts: [Verdict], summary: NotificationSync.Summary) {
        let window = try NotificationSync.window(saved: try saved(world), since: since, now: now)
        var verdicts: [Verdict] = []
        let summary = try run(world, dryRun: dryRun).run(window, fetch: history.fetch) { items in
            verdicts += items.map(\.result.verdict)
        }
        return (verdicts, summary)
    }

    func saved(_ world: World) throws -> NotificationSync.Position? { try NotificationSync.saved(Self.name, in: world.store) }

    func ledgerCount(_ world: World) throws -> Int { try world.counts.ledger }

    /// The newest signedDate of `items` (what a page of them moves the checkpoint to).
    func newest(_ world: World, _ items: [String]) throws -> Int64 {
        try items.map { try #require(world.verifier.verify($0, as: .notification).notification?.signedDate) }.max()!
    }

    @Test(arguments: Backend.available)
    func aDryRunPastItsBoundStopsNamingThePageAndWritesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        // 3 MiB of (unverifiable) notifications a page: a dry run keeps them all until it rolls back.
        let big = String(repeating: "x", count: 3 << 20)
        let history = History((1...30).map { ["\(big)\($0)"] })
        let before = try world.counts
        #expect(throws: NotificationSync.PageRefusal.dryRunTooLarge(page: 22)) {
            try sync(world, history, since: World.t0 - World.day, dryRun: true)
        }
        #expect(history.requests.count == 22)
        #expect(try world.counts == before)
        #expect(try saved(world) == nil)
    }

    @Test(arguments: Backend.available)
    func aRepeatedPaginationTokenStopsBeforeThatPageKeepingTheLastCheckpoint(_ backend: Backend) throws {
        let world = try World(backend)
        let history = History([try world.lifecycle(0), try world.lifecycle(1), []])
        let run = run(world)
        let window = try NotificationSync.window(saved: nil, since: World.t0 - World.day, now: Self.now)
        var verdicts: [Verdict] = []
        // Page 2 names p2 again (as page 1 did).
        let error = #expect(throws: AppStoreAPIError.self) {
            try run.run(
                window,
                fetch: { body, token in
                    var page = try history.fetch(body, token)
                    if token == "p2", case .object(var members) = page {
                        members.removeAll { $0.key == "paginationToken" || $0.key == "hasMore" }
                        members += [("hasMore", .bool(true)), ("paginationToken", .string("p2"))]
                        page = .object(members)
                    }
                    return page
                }, page: { verdicts += $0.map(\.result.verdict) })
        }
        #expect(error?.message.contains("page 2 repeats the paginationToken 'p2' of page 1") == true, "\(String(describing: error))")
        #expect(verdicts == [.applied, .applied], "page 1 only: page 2 is not applied")
        #expect(try world.order(1)?.status != .paid)
        let checkpoint = try saved(world)
        #expect(run.saved != nil && run.saved == checkpoint)
        #expect(history.requests.map(\.token) == [nil, "p2"])
    }

    @Test(arguments: Backend.available)
    func aFirstRunAppliesEveryPageAndSavesTheWindowsEnd(_ backend: Backend) throws {
        let world = try World(backend)
        let history = History([try world.lifecycle(0), try world.lifecycle(1)])
        let since = World.t0 - World.day
        let (verdicts, summary) = try sync(world, history, since: since)
        #expect(verdicts == [.applied, .applied, .applied, .applied])
        #expect(summary.pages == 2 && summary.notifications == 4)
        // The whole window was read, so the checkpoint is its end: now less the lag.
        #expect(try saved(world) == NotificationSync.Position(through: Self.now - NotificationSync.lag))
        #expect(summary.saved == (try saved(world)))
        #expect(history.requests.map(\.token) == [nil, "p2"])
        #expect(history.requests.allSatisfy { $0.start == since && $0.end == Self.now - NotificationSync.lag })
        #expect(try world.order(1)?.status == .paid)
        #expect(try world.contract("orig-1")?.expiresDate == World.t0 + 60 * World.day)
    }

    @Test(arguments: Backend.available)
    func theNextRunReadsFromTheCheckpointLessTheOverlapAndAppliesNothingTwice(_ backend: Backend) throws {
        let world = try World(backend)
        let first = try world.lifecycle(0)
        _ = try sync(world, History([first]), since: World.t0 - World.day)
        let checkpoint = try #require(try saved(world))
        let ledger = try ledgerCount(world)

        // Apple lists the last one again (the overlap) and one new notification.
        let renewal = try world.notification(
            "DID_RENEW", uuid: "renew-0-2", tx: world.transaction("0002", original: "orig-0", period: 2))
        let history = History([[first[1], renewal]])
        let later = Self.now + 5 * 60_000
        let (verdicts, _) = try sync(world, history, now: later)
        #expect(history.requests.first?.start == checkpoint.through - NotificationSync.overlap)
        #expect(history.requests.first?.end == later - NotificationSync.lag)
        #expect(verdicts == [.duplicate, .applied])
        // The re-read one is neither applied nor stored again: one ledger row more, the new renewal's.
        #expect(try ledgerCount(world) == ledger + 1)
        #expect(try saved(world) == NotificationSync.Position(through: later - NotificationSync.lag))
    }

    @Test(arguments: Backend.available)
    func aRunStoppedByAFailingPageKeepsThePagesBeforeAndTheNextOneLeavesNoGap(_ backend: Backend) throws {
        let world = try World(backend)
        let page1 = try world.lifecycle(0), page2 = try world.lifecycle(1)
        let history = History([page1, page2])
        history.failing = [1]
        let since = World.t0 - World.day
        #expect(throws: History.Down.self) { try sync(world, history, since: since) }
        // Page 1 is committed with its checkpoint: the newest signedDate it held.
        #expect(try saved(world) == NotificationSync.Position(through: try newest(world, page1)))
        #expect(try world.order(0)?.status == .paid)
        #expect(try world.order(1)?.status == .pending)

        history.failing = []
        let (verdicts, _) = try sync(world, history)
        #expect(history.requests.last?.start == (try newest(world, page1)) - NotificationSync.overlap)
        #expect(verdicts == [.duplicate, .duplicate, .applied, .applied])
        #expect(try world.order(1)?.status == .paid)
        #expect(try saved(world) == NotificationSync.Position(through: Self.now - NotificationSync.lag))
    }

    @Test(arguments: Backend.available)
    func aRunStoppedMidPageRollsBackThatPageWithItsCheckpoint(_ backend: Backend) throws {
        let world = try World(backend)
        let page1 = try world.lifecycle(0), page2 = try world.lifecycle(1)
        let window = try NotificationSync.window(saved: nil, since: World.t0 - World.day, now: Self.now)
        var asked = 0
        // Stops at the second item of page 2 (asked before each page and each item: page 1, its 2
        // items, page 2, its first item, then its second).
        let stopping = run(world) {
            asked += 1
            return asked == 6
        }
        var heard: [Verdict] = []
        #expect(throws: NotificationIngest.Stopped.self) {
            try stopping.run(window, fetch: History([page1, page2]).fetch) { heard += $0.map(\.result.verdict) }
        }
        #expect(heard == [.applied, .applied])
        #expect(try saved(world) == NotificationSync.Position(through: try newest(world, page1)))
        // The first item of page 2 was rolled back with the page.
        #expect(try world.order(1)?.status == .pending)
        #expect(try world.ledger(original: "orig-1").isEmpty)
    }

    @Test(arguments: Backend.available)
    func aRejectedItemIsKeptInTheLedgerAndNeverMovesTheCheckpoint(_ backend: Backend) throws {
        let world = try World(backend)
        let good = try world.lifecycle(0)
        // Signed by a stranger's CA, dated after everything else: it must not move the checkpoint.
        let stranger = PayloadBuilder(pki: try TestPKI.make(), bundleId: World.bundleId, environment: "Sandbox")
        let forged = try stranger.notification(
            type: "DID_RENEW", uuid: "forged-sync", signedDate: World.t0 + 50 * World.day,
            transaction: world.transaction("0009", original: "orig-0", period: 1))
        let history = History([[good[0], forged], [good[1]]])
        history.failing = [1]
        #expect(throws: History.Down.self) { try sync(world, history, since: World.t0 - World.day) }
        #expect(try saved(world) == NotificationSync.Position(through: try newest(world, [good[0]])))
        #expect(try world.counts.ledger == 2)

        history.failing = []
        let (verdicts, _) = try sync(world, history)
        #expect(verdicts == [.duplicate, .rejected, .applied])
        // The refused bytes are kept once, however often the overlap reads them.
        #expect(try world.counts.ledger == 3)
    }

    @Test(arguments: Backend.available)
    func aDryRunPredictsTheRunAndMovesNothing(_ backend: Backend) throws {
        let world = try World(backend)
        let history = History([try world.lifecycle(0), try world.lifecycle(1)])
        let since = World.t0 - World.day
        let (dry, summary) = try sync(world, history, since: since, dryRun: true)
        #expect(summary.saved == nil)
        #expect(try saved(world) == nil)
        #expect(try ledgerCount(world) == 0)
        #expect(try world.order(0)?.status == .pending)
        let (real, _) = try sync(world, history, since: since)
        #expect(dry == real)
        #expect(real == [.applied, .applied, .applied, .applied])
    }

    @Test(arguments: Backend.available)
    func anExpiredPaginationTokenStartsTheWindowAgainOnce(_ backend: Backend) throws {
        let world = try World(backend)
        let history = History([try world.lifecycle(0), try world.lifecycle(1)])
        history.expiring = ["p2"]
        let (verdicts, summary) = try sync(world, history, since: World.t0 - World.day)
        #expect(history.requests.map(\.token) == [nil, "p2", nil, "p2"])
        // Page 1 read twice is listed once.
        #expect(verdicts == [.applied, .applied, .applied, .applied])
        #expect(summary.notifications == 4)
    }

    @Test func theWindowStartsAtSinceTheCheckpointOrADayBackAndStaysInApplesHistory() throws {
        let now = Self.now, lag = NotificationSync.lag
        let first = try NotificationSync.window(saved: nil, since: nil, now: now)
        #expect(first.start == now - World.day && first.end == now - lag && first.origin == .firstRun)
        let resumed = try NotificationSync.window(saved: .init(through: now - 3_600_000), since: nil, now: now)
        #expect(resumed.start == now - 3_600_000 - NotificationSync.overlap && resumed.origin == .checkpoint)
        #expect(resumed.resumed == .init(through: now - 3_600_000))
        let over = try NotificationSync.window(saved: .init(through: now - 3_600_000), since: now - 7 * World.day, now: now)
        #expect(over.start == now - 7 * World.day && over.origin == .since && over.resumed == nil)

        #expect(throws: NotificationSync.Refusal.beyondRetention(start: now - 200 * World.day, fromCheckpoint: true)) {
            try NotificationSync.window(saved: .init(through: now - 200 * World.day + NotificationSync.overlap), since: nil, now: now)
        }
        #expect(throws: NotificationSync.Refusal.beyondRetention(start: now - 181 * World.day, fromCheckpoint: false)) {
            try NotificationSync.window(saved: nil, since: now - 181 * World.day, now: now)
        }
        // A checkpoint ahead of the clock, --since within the lag.
        #expect(throws: NotificationSync.Refusal.startNotBeforeEnd(start: now, end: now - lag, fromCheckpoint: true)) {
            try NotificationSync.window(saved: .init(through: now + NotificationSync.overlap), since: nil, now: now)
        }
        #expect(throws: NotificationSync.Refusal.startNotBeforeEnd(start: now - 1_000, end: now - lag, fromCheckpoint: false)) {
            try NotificationSync.window(saved: nil, since: now - 1_000, now: now)
        }
    }

    @Test func aCheckpointIsSavedAsJSONAndAValueOfAnotherKindIsRefused() throws {
        let position = NotificationSync.Position(through: 1_764_600_000_000)
        #expect(position.value == #"{"through":1764600000000}"#)
        let saved = Checkpoint(name: Self.name, value: position.value, updatedAt: 0)
        #expect(try NotificationSync.Position(saved) == position)
        let other = Checkpoint(name: Self.name, value: "yesterday", updatedAt: 0)
        #expect(throws: NotificationSync.Refusal.unreadableCheckpoint(name: Self.name, value: "yesterday")) {
            try NotificationSync.Position(other)
        }
    }
}
