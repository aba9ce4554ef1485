public import AppStoreJWS

/// The `apple` commands' requests and answers as typed values: the command layer parses options into
/// these, calls the operation and prints what it returns.

/// The filter body of Get Notification History.
public struct NotificationHistoryQuery: Sendable {
    /// Apple filters by a notification type (and subtype) or by a transaction, not both.
    public enum Filter: Sendable {
        case all
        case type(String, subtype: String?)
        case transaction(String)
    }

    public var start: Int64
    public var end: Int64
    public var filter: Filter
    public var onlyFailures: Bool

    public init(start: Int64, end: Int64, filter: Filter = .all, onlyFailures: Bool = false) {
        self.start = start
        self.end = end
        self.filter = filter
        self.onlyFailures = onlyFailures
    }

    /// The request body, members in Apple's documented order.
    public var body: JSONValue {
        var body: [(key: String, value: JSONValue)] = [("startDate", .int(start)), ("endDate", .int(end))]
        switch filter {
        case .all: break
        case .type(let type, let subtype):
            body.append(("notificationType", .string(type)))
            if let subtype { body.append(("notificationSubtype", .string(subtype))) }
        case .transaction(let transaction): body.append(("transactionId", .string(transaction)))
        }
        if onlyFailures { body.append(("onlyFailures", .bool(true))) }
        return .object(body)
    }
}

extension NotificationHistoryQuery {
    /// A query Apple would refuse.
    public enum Refusal: Error, Sendable, Equatable {
        /// The start is not before the end.
        case startNotBeforeEnd
        /// The start lies beyond the ``retentionDays`` Apple keeps.
        case startBeyondRetention
        /// Both a notification type and a transaction (Apple filters by one or the other).
        case typeAndTransaction
        /// A subtype without a type.
        case subtypeWithoutType
    }

    /// How long Apple keeps notification history.
    public static let retentionDays: Int64 = 180

    /// Throws unless `start` is before `end` and within ``retentionDays`` of `now` (all ms).
    public static func checkWindow(start: Int64, end: Int64, now: Int64) throws(Refusal) {
        guard start < end else { throw .startNotBeforeEnd }
        guard now - start <= retentionDays * 86_400_000 else { throw .startBeyondRetention }
    }

    /// The filter of a type (and subtype) or a transaction; none given: all.
    public static func filter(type: String?, subtype: String?, transaction: String?) throws(Refusal) -> Filter {
        if let type {
            guard transaction == nil else { throw .typeAndTransaction }
            return .type(type, subtype: subtype)
        }
        guard subtype == nil else { throw .subtypeWithoutType }
        return transaction.map(Filter.transaction) ?? .all
    }
}

/// The query of Get Transaction History.
public struct TransactionHistoryQuery: Sendable {
    public var start: Int64?
    public var end: Int64?
    public var products: [String]
    public var productTypes: [String]
    /// `ascending` or `descending` (by modification date).
    public var sort: String
    /// Only revoked (`true`) or only not revoked (`false`) transactions.
    public var revoked: Bool?
    /// Only transactions of these subscription groups (`subscriptionGroupIdentifier`, repeatable).
    public var subscriptionGroups: [String]
    /// Only `PURCHASED` or only `FAMILY_SHARED` transactions (`inAppOwnershipType`).
    public var ownership: String?

    public init(
        start: Int64? = nil, end: Int64? = nil, products: [String] = [], productTypes: [String] = [],
        sort: String = "ascending", revoked: Bool? = nil, subscriptionGroups: [String] = [], ownership: String? = nil
    ) {
        self.start = start
        self.end = end
        self.products = products
        self.productTypes = productTypes
        self.sort = sort
        self.revoked = revoked
        self.subscriptionGroups = subscriptionGroups
        self.ownership = ownership
    }

    /// The query string's items, in order.
    public var items: [(String, String)] {
        var query: [(String, String)] = []
        if let start { query.append(("startDate", String(start))) }
        if let end { query.append(("endDate", String(end))) }
        query += products.map { ("productId", $0) }
        query += productTypes.map { ("productType", $0) }
        query.append(("sort", sort.uppercased()))
        query += subscriptionGroups.map { ("subscriptionGroupIdentifier", $0) }
        if let ownership { query.append(("inAppOwnershipType", ownership)) }
        if let revoked { query.append(("revoked", revoked ? "true" : "false")) }
        return query
    }
}

/// Signed transactions and the server that sent them.
public struct SignedTransactions: Sendable {
    public var server: APIServer
    public var items: [String]
    /// How many pages the items came in (1 for a single answer).
    public var pages: Int

    public init(server: APIServer, items: [String], pages: Int) {
        self.server = server
        self.items = items
        self.pages = pages
    }

    /// A JSON array of strings (Apple's signedTransactions lists); `optional`: a missing list is empty.
    public static func list(_ value: JSONValue?, call: APICall, optional: Bool) throws(AppStoreAPIError) -> [String] {
        guard let value, case .array(let list) = value else {
            if optional { return [] }
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no signedTransactions array")
        }
        let items = list.compactMap(\.stringValue)
        guard items.count == list.count else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): signedTransactions holds a non-string")
        }
        return items
    }
}

/// Look Up Order ID's answer: Apple's status (0 valid, 1 invalid) and the order's signed transactions.
public struct OrderLookup: Sendable {
    public var status: Int64?
    public var transactions: SignedTransactions

    public init(_ answer: APIAnswer, call: APICall) throws(AppStoreAPIError) {
        status = answer.json?["status"]?.int64Value
        let items = try SignedTransactions.list(answer.json?["signedTransactions"], call: call, optional: status == 1)
        transactions = SignedTransactions(server: answer.server, items: items, pages: 1)
    }

    /// Apple's status 0: the order ID is valid (1: invalid; nil: Apple did not say).
    public var isValid: Bool { status == 0 }
}

/// One subscription of Get All Subscription Statuses: its latest signed transaction and renewal info.
public struct SubscriptionStatusItem: Sendable {
    public var group: String?
    public var status: Int64?
    public var original: String?
    public var transaction: String
    public var renewal: String?
    /// The `lastTransactions` item as Apple sent it (`status`, `originalTransactionId`, the signed
    /// transaction and renewal info): what `apple reconcile` keeps in the ledger.
    public var json: JSONValue? = nil

    /// Apple's status numbers by name.
    public static let statusNames: [Int64: String] = Dictionary(
        uniqueKeysWithValues: AppleChoices.SubscriptionStatus.allCases.map { (Int64($0.rawValue)!, $0.name) })

    /// Every `lastTransactions` item of every subscription group of the answer, in Apple's order.
    public static func items(_ answer: APIAnswer, call: APICall) throws(AppStoreAPIError) -> [SubscriptionStatusItem] {
        guard case .array(let groups)? = answer.json?["data"] else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no data array")
        }
        var rows: [SubscriptionStatusItem] = []
        for group in groups {
            guard case .array(let last)? = group["lastTransactions"] else {
                throw AppStoreAPIError(.malformedResponse, "\(call.path): a data item has no lastTransactions array")
            }
            for item in last {
                guard let tx = item["signedTransactionInfo"]?.stringValue else {
                    throw AppStoreAPIError(.malformedResponse, "\(call.path): a lastTransactions item has no signedTransactionInfo")
                }
                rows.append(
                    SubscriptionStatusItem(
                        group: group["subscriptionGroupIdentifier"]?.stringValue, status: item["status"]?.int64Value,
                        original: item["originalTransactionId"]?.stringValue, transaction: tx,
                        renewal: item["signedRenewalInfo"]?.stringValue, json: item))
            }
        }
        return rows
    }
}

extension AppStoreServerAPI {
    /// The most bytes of signed transactions ``signedTransactionHistory(_:_:progress:)`` keeps (64 MiB):
    /// years of a customer's purchases are a few hundred kilobytes.
    public static let maxHistoryBytes = 64 << 20

    /// The signed transactions of every page of a revision-paginated history (transactions, refunds):
    /// each page's items are kept (at most ``maxHistoryBytes``), the page itself let go as the next arrives.
    public func signedTransactionHistory(
        _ call: APICall, _ environment: APIEnvironment, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(AppStoreAPIError) -> SignedTransactions {
        var found = SignedTransactions(server: .production, items: [], pages: 0)
        var bytes = 0
        try Self.typed {
            try forEachRevisionPage(call, environment) { server, page, number in
                found.server = server
                found.pages = number
                let items = try SignedTransactions.list(page["signedTransactions"], call: call, optional: false)
                bytes += items.reduce(0) { $0 + $1.utf8.count }
                guard bytes <= Self.maxHistoryBytes else {
                    throw AppStoreAPIError(
                        .malformedResponse,
                        "\(call.method) \(call.path): page \(number) brings the signed transactions past "
                            + "\(Self.maxHistoryBytes >> 20) MiB; stopped",
                        hint: "narrow the query (a start or end date, a product)")
                }
                found.items += items
                progress(number, found.items.count)
            }
        }
        return found
    }

    /// The one field a single-item answer must have, as a string.
    public static func requiredString(_ answer: APIAnswer, _ key: String, call: APICall) throws(AppStoreAPIError) -> String {
        guard let value = answer.json?[key]?.stringValue else {
            throw AppStoreAPIError(.malformedResponse, "\(call.path): the answer has no \(key)")
        }
        return value
    }
}

/// Request a Test Notification's check, Get Test Notification Status.
public enum TestNotification {
    /// The test notification reached the server when Apple's last send attempt's `sendAttemptResult`
    /// is `SUCCESS` (nil: no attempt yet).
    public static func delivered(lastAttemptResult: String?) -> Bool { lastAttemptResult == "SUCCESS" }
}
