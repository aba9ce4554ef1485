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

    /// The pages of a revision-paginated endpoint (transaction and refund history): the same query again
    /// with each answer's `revision` while `hasMore`. The server of the first answer serves the rest.
    public func walkRevisions(
        _ call: APICall, _ environment: APIEnvironment, maxPages: Int = 100_000, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(AppStoreAPIError) -> (server: APIServer, pages: [JSONValue]) {
        var first = try send(call, environment)
        var pages: [JSONValue] = []
        var items = 0
        while true {
            guard let page = first.json, case .array(let list)? = page["signedTransactions"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no signedTransactions array")
            }
            pages.append(page)
            items += list.count
            progress(pages.count, items)
            guard page["hasMore"]?.boolValue == true else { break }
            guard let revision = page["revision"]?.stringValue, !revision.isEmpty else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): hasMore without a revision")
            }
            guard pages.count < maxPages else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): more than \(maxPages) pages; stopped")
            }
            var next = call
            next.query.removeAll { $0.0 == "revision" }
            next.query.append(("revision", revision))
            first = try send(next, to: first.server)
        }
        return (first.server, pages)
    }

    /// The pages of Get Notification History: `paginationToken` while `hasMore`.
    public func walkNotificationHistory(
        body: JSONValue, _ server: APIServer, maxPages: Int = 100_000, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(AppStoreAPIError) -> [JSONValue] {
        var call = Endpoint.notificationHistory(body: body)
        var pages: [JSONValue] = []
        var items = 0
        var restarted = false
        while true {
            let answer: APIAnswer
            do {
                answer = try send(call, to: server)
            } catch let error where Self.expiredTokenCodes.contains(error.appleCode ?? 0) && !restarted {
                // Apple's pagination token expired mid-walk: start again from the first page, once.
                log("notification history: \(error.appleMessage ?? "pagination token expired"); starting again")
                restarted = true
                call.query = []
                pages = []
                items = 0
                continue
            }
            guard let page = answer.json, case .array(let list)? = page["notificationHistory"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no notificationHistory array")
            }
            pages.append(page)
            items += list.count
            progress(pages.count, items)
            guard page["hasMore"]?.boolValue == true else { break }
            guard let token = page["paginationToken"]?.stringValue, !token.isEmpty else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): hasMore without a paginationToken")
            }
            guard pages.count < maxPages else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): more than \(maxPages) pages; stopped")
            }
            call.query = [("paginationToken", token)]
        }
        return pages
    }
}
