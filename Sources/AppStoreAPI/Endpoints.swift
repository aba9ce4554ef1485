public import AppStoreJWS

/// The requests of the endpoints iapctl uses, shaped as Apple documents them.
public enum Endpoint {
    public static func lookup(orderId: String) -> APICall {
        APICall("GET", "/inApps/v1/lookup/\(APICall.segment(orderId))")
    }

    public static func transaction(_ id: String) -> APICall {
        APICall("GET", "/inApps/v1/transactions/\(APICall.segment(id))")
    }

    /// Get App Transaction Info: `id` is any transactionId, originalTransactionId or appTransactionId of
    /// the customer; the answer's `signedAppTransactionInfo` is the signed AppTransaction.
    public static func appTransaction(_ id: String) -> APICall {
        APICall("GET", "/inApps/v1/transactions/appTransactions/\(APICall.segment(id))")
    }

    /// Get Transaction History v2; `revision` is added by the walker.
    public static func transactionHistory(_ id: String, query: [(String, String)]) -> APICall {
        APICall("GET", "/inApps/v2/history/\(APICall.segment(id))", query: query)
    }

    public static func subscriptionStatuses(_ id: String, statuses: [Int]) -> APICall {
        APICall("GET", "/inApps/v1/subscriptions/\(APICall.segment(id))", query: statuses.map { ("status", String($0)) })
    }

    public static func refundHistory(_ id: String) -> APICall {
        APICall("GET", "/inApps/v2/refund/lookup/\(APICall.segment(id))")
    }

    public static func notificationHistory(body: JSONValue) -> APICall {
        APICall("POST", "/inApps/v1/notifications/history", body: body)
    }

    public static func requestTestNotification() -> APICall {
        APICall("POST", "/inApps/v1/notifications/test")
    }

    public static func testNotificationStatus(_ token: String) -> APICall {
        APICall("GET", "/inApps/v1/notifications/test/\(APICall.segment(token))")
    }

    public static func extend(original: String, days: Int64, reasonCode: Int64, requestIdentifier: String) -> APICall {
        APICall(
            "PUT", "/inApps/v1/subscriptions/extend/\(APICall.segment(original))",
            body: .object([
                ("extendByDays", .int(days)), ("extendReasonCode", .int(reasonCode)),
                ("requestIdentifier", .string(requestIdentifier)),
            ]))
    }

    public static func massExtend(
        productId: String, days: Int64, reasonCode: Int64, requestIdentifier: String, storefronts: [String]
    ) -> APICall {
        var members: [(key: String, value: JSONValue)] = [
            ("extendByDays", .int(days)), ("extendReasonCode", .int(reasonCode)),
            ("requestIdentifier", .string(requestIdentifier)),
        ]
        if !storefronts.isEmpty { members.append(("storefrontCountryCodes", .array(storefronts.map(JSONValue.string)))) }
        members.append(("productId", .string(productId)))
        return APICall("POST", "/inApps/v1/subscriptions/extend/mass", body: .object(members))
    }

    public static func massExtendStatus(productId: String, requestIdentifier: String) -> APICall {
        APICall(
            "GET",
            "/inApps/v1/subscriptions/extend/mass/\(APICall.segment(productId))/\(APICall.segment(requestIdentifier))")
    }

    public static func consumption(_ id: String, body: JSONValue) -> APICall {
        APICall("PUT", "/inApps/v2/transactions/consumption/\(APICall.segment(id))", body: body)
    }

    /// Finish Transaction: tells the App Store the server has delivered what `id` bought (for apps
    /// that manage entitlements on their server instead of calling StoreKit's `finish()`).
    public static func finishTransaction(_ id: String) -> APICall {
        APICall("POST", "/inApps/v1/transactions/\(APICall.segment(id))/finish")
    }

    public static func setAppAccountToken(original: String, token: String) -> APICall {
        APICall(
            "PUT", "/inApps/v1/transactions/\(APICall.segment(original))/appAccountToken",
            body: .object([("appAccountToken", .string(token))]))
    }
}

extension AppStoreServerAPI {
    /// Apple's "pagination token expired" codes (restart the walk).
    public static let expiredTokenCodes: Set<Int64> = [4000014, 4000017]

    /// The pages of a revision-paginated endpoint (transaction and refund history), each handed to
    /// `page` as it arrives and then let go (a walk keeps one page in memory): the same query again with
    /// each answer's `revision` while `hasMore`. The server of the first answer serves the rest. Bounded
    /// by `limits` (``WalkLimits``; the policy's when nil): a repeated revision, the page cap and the
    /// total deadline stop it with an error naming the page. `storedIn`: the server the database has the
    /// id from (``send(_:_:sandboxOnNotFound:storedIn:within:)``).
    public func forEachRevisionPage(
        _ call: APICall, _ environment: APIEnvironment, limits: WalkLimits? = nil, storedIn: APIServer? = nil,
        page: (_ server: APIServer, _ page: JSONValue, _ number: Int) throws -> Void
    ) throws {
        var walk = PageWalk(what: "\(call.method) \(call.path)", marker: "revision", limits: limits ?? policy.walk, now: nowMs())
        var answer = try send(call, environment, storedIn: storedIn, within: walk)
        while true {
            guard let json = answer.json, case .array? = json["signedTransactions"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no signedTransactions array")
            }
            walk.received()
            try page(answer.server, json, walk.pages)
            guard json["hasMore"]?.boolValue == true else { return }
            let revision = json["revision"]?.stringValue
            try walk.advance(to: revision, now: nowMs())
            var next = call
            next.query.removeAll { $0.0 == "revision" }
            next.query.append(("revision", revision ?? ""))
            answer = try send(next, to: answer.server, within: walk)
        }
    }

    /// Every page of a revision-paginated endpoint, collected (``forEachRevisionPage(_:_:limits:storedIn:page:)``).
    public func walkRevisions(
        _ call: APICall, _ environment: APIEnvironment, maxPages: Int? = nil, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(AppStoreAPIError) -> (server: APIServer, pages: [JSONValue]) {
        var limits = policy.walk
        if let maxPages { limits.maxPages = maxPages }
        var pages: [JSONValue] = []
        var server = APIServer.production
        var items = 0
        try Self.typed {
            try forEachRevisionPage(call, environment, limits: limits) { from, page, number in
                server = from
                pages.append(page)
                if case .array(let list)? = page["signedTransactions"] { items += list.count }
                progress(number, items)
            }
        }
        return (server, pages)
    }

    /// The pages of Get Notification History, each handed to `page` as it arrives and then let go:
    /// `paginationToken` while `hasMore`. An expired token starts the walk again from the first page,
    /// once (`page` hears `restarted` true for that first page again). Bounded like
    /// ``forEachRevisionPage(_:_:limits:storedIn:page:)``.
    public func forEachNotificationHistoryPage(
        body: JSONValue, _ server: APIServer, limits: WalkLimits? = nil,
        page: (_ page: JSONValue, _ number: Int, _ restarted: Bool) throws -> Void
    ) throws {
        var call = Endpoint.notificationHistory(body: body)
        var walk = PageWalk(what: "notification history", marker: "paginationToken", limits: limits ?? policy.walk, now: nowMs())
        var restarted = false
        var fresh = false
        while true {
            let sent: Result<APIAnswer, AppStoreAPIError>
            do { sent = .success(try send(call, to: server, within: walk)) } catch { sent = .failure(error) }
            let answer: APIAnswer
            switch sent {
            case .success(let got): answer = got
            case .failure(let error):
                guard Self.expiredTokenCodes.contains(error.appleCode ?? 0), !restarted, !call.query.isEmpty else { throw error }
                // Apple's pagination token expired mid-walk: start again from the first page, once.
                log("notification history: \(error.appleMessage ?? "pagination token expired"); starting again")
                restarted = true
                fresh = true
                walk.restart()
                call.query = []
                continue
            }
            guard let json = answer.json, case .array? = json["notificationHistory"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no notificationHistory array")
            }
            walk.received()
            try page(json, walk.pages, fresh)
            fresh = false
            guard json["hasMore"]?.boolValue == true else { return }
            let token = json["paginationToken"]?.stringValue
            try walk.advance(to: token, now: nowMs())
            call.query = [("paginationToken", token ?? "")]
        }
    }

    /// Every page of Get Notification History, collected (after an expired token, those of the
    /// restarted walk only).
    public func walkNotificationHistory(
        body: JSONValue, _ server: APIServer, maxPages: Int? = nil, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(AppStoreAPIError) -> [JSONValue] {
        var limits = policy.walk
        if let maxPages { limits.maxPages = maxPages }
        var pages: [JSONValue] = []
        var items = 0
        try Self.typed {
            try forEachNotificationHistoryPage(body: body, server, limits: limits) { page, _, restarted in
                if restarted {
                    pages = []
                    items = 0
                }
                pages.append(page)
                if case .array(let list)? = page["notificationHistory"] { items += list.count }
                progress(pages.count, items)
            }
        }
        return pages
    }

    /// Runs `body`, whose only errors are the client's.
    static func typed(_ body: () throws -> Void) throws(AppStoreAPIError) {
        do { try body() } catch let error as AppStoreAPIError { throw error } catch {
            throw AppStoreAPIError(.internal, "\(error)")
        }
    }
}
