/// The bounds of one paginated walk (Get Transaction History, Get Refund History, Get Notification
/// History): whatever Apple answers, a walk ends.
///
/// Apple's pages are small (at most 20 items) and each answer names the next page with a `revision`
/// or `paginationToken`. An answer that names a page again, a walk longer than ``maxPages`` pages or
/// one that lasts longer than ``deadline`` in all stops with an error that says which page and which
/// marker; each answer's size is bounded by ``CurlTransport``'s answer cap.
public struct WalkLimits: Sendable, Equatable {
    /// The most pages one walk reads (10,000: 200,000 items of Apple's pages of 20).
    public var maxPages = 10_000
    /// The longest one walk may take in all (ms), every page and wait included; nil: no limit. Unlike
    /// the per-answer ``AppStoreServerAPI/Policy/deadline`` it does not start afresh with each answer.
    public var deadline: Int64? = 1_800_000
    /// The longest `revision` or `paginationToken` taken (Apple's are a few dozen bytes): the markers
    /// seen are kept to notice a repeat, so their size is bounded.
    public static let maxMarkerBytes = 1024

    public init(maxPages: Int = 10_000, deadline: Int64? = 1_800_000) {
        self.maxPages = maxPages
        self.deadline = deadline
    }
}

/// One walk under way: its pages counted, the markers it was given, its total deadline.
public struct PageWalk: Sendable {
    /// What is walked, for messages ("GET /inApps/v2/history/1000", "notification history").
    public let what: String
    /// The answer member naming the next page: `revision` or `paginationToken`.
    public let marker: String
    public let limits: WalkLimits
    /// When the walk started (ms since the epoch).
    public let startedAt: Int64
    /// Pages received so far.
    public private(set) var pages = 0
    /// Each marker given, with the page that gave it.
    private var seen: [String: Int] = [:]

    public init(what: String, marker: String, limits: WalkLimits, now: Int64) {
        self.what = what
        self.marker = marker
        self.limits = limits
        self.startedAt = now
    }

    /// When the walk must be over (ms since the epoch); nil: no total deadline.
    public var endsAt: Int64? { limits.deadline.map { startedAt + $0 } }

    /// Counts a page that arrived.
    public mutating func received() { pages += 1 }

    /// The page just received has more after it, at `next`: throws (exit 65) when ``check(_:)`` does
    /// or the page cap is reached; throws (69) when the walk's total deadline has passed at `now`.
    public mutating func advance(to next: String?, now: Int64) throws(AppStoreAPIError) {
        try check(next)
        guard pages < limits.maxPages else {
            throw AppStoreAPIError(
                .malformedResponse, "\(what): more than \(limits.maxPages) pages (the page cap); stopped after page \(pages)",
                hint: "narrow the query, or raise the cap with --max-pages (IAPCTL_APPLE_MAX_PAGES, 'apple-max-pages')")
        }
        try checkDeadline(now: now)
        seen[next ?? ""] = pages
    }

    /// Throws (exit 65) when `next`, the marker of the page just received that says hasMore, is
    /// missing, empty, too long, or was given before (Apple's pagination does not advance).
    public func check(_ next: String?) throws(AppStoreAPIError) {
        guard let next, !next.isEmpty else {
            throw AppStoreAPIError(.malformedResponse, "\(what): page \(pages) says hasMore but gives no \(marker)")
        }
        guard next.utf8.count <= WalkLimits.maxMarkerBytes else {
            throw AppStoreAPIError(
                .malformedResponse,
                "\(what): page \(pages) gives a \(marker) of \(next.utf8.count) bytes (more than \(WalkLimits.maxMarkerBytes)); stopped")
        }
        if let first = seen[next] {
            throw AppStoreAPIError(
                .malformedResponse,
                "\(what): page \(pages) repeats the \(marker) '\(next)' of page \(first) (Apple's pagination does not "
                    + "advance); stopped",
                hint: "Apple's answers loop; try again later, and report it to Apple if it persists")
        }
    }

    /// Throws (69) when the walk's total deadline has passed at `now`.
    public func checkDeadline(now: Int64) throws(AppStoreAPIError) {
        guard let endsAt, now >= endsAt else { return }
        throw Self.deadlinePassed(what, pages: pages, deadline: limits.deadline ?? 0)
    }

    /// The walk starts again from its first page (an expired pagination token): the markers given so
    /// far may come again; the page count and the deadline go on.
    public mutating func restart() { seen = [:] }

    /// The error of a walk its total deadline stopped.
    static func deadlinePassed(_ what: String, pages: Int, deadline: Int64) -> AppStoreAPIError {
        AppStoreAPIError(
            .unavailable,
            "\(what): the walk took longer than its total deadline of \(AppStoreServerAPI.seconds(deadline)) "
                + "after \(pages) page\(pages == 1 ? "" : "s"); stopped",
            hint: "to allow longer walks, raise --walk-deadline (IAPCTL_APPLE_WALK_DEADLINE, 'apple-walk-deadline')")
    }
}
