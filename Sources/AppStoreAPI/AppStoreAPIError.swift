/// Why a call to the App Store Server API failed, with Apple's own code and message when it sent one.
///
/// Messages name the endpoint and the input, never the key or a token.
public struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// The class of failure (the command line maps each to an exit code).
    public enum Kind: String, Sendable {
        /// Missing or unusable key, key id, issuer id or bundle id; a bad base URL.
        case configuration
        /// 401: Apple refused the token.
        case unauthorized
        /// 404: the transaction, order or other id is unknown to Apple (in that environment).
        case notFound
        /// 400 and other 4xx: Apple refused the request as invalid.
        case invalidRequest
        /// 429 whose Retry-After lies beyond the allowed wait, or retries ran out.
        case rateLimited
        /// 5xx after retries, or the network/TLS failed.
        case unavailable
        /// Apple's answer was not the documented JSON.
        case malformedResponse
        /// A bug or an OpenSSL/libcurl failure that should not happen.
        case `internal`
    }

    public var kind: Kind
    public var message: String
    public var hint: String?
    /// The HTTP status, when Apple answered.
    public var httpStatus: Int?
    /// Apple's `errorCode`, when the body had one.
    public var appleCode: Int64?
    /// Apple's `errorMessage`, when the body had one.
    public var appleMessage: String?
    /// For `rateLimited`: when Apple said to try again (ms since the epoch).
    public var retryAt: Int64?
    /// Whether trying again may help (false for an untrusted certificate).
    public var isRetryable = true
    /// Set when the command's total deadline (ms) stopped the call (see `AppStoreServerAPI.Policy.deadline`).
    public var deadline: Int64?

    public init(_ kind: Kind, _ message: String, hint: String? = nil) {
        self.kind = kind
        self.message = message
        self.hint = hint
    }

    public var description: String { message }
}

extension AppStoreAPIError {
    /// One of Apple's error codes support meets: Apple's name for it, what it means, what to do.
    public struct NamedCode: Sendable, Equatable {
        public var name: String
        public var meaning: String
        public var fix: String
    }

    /// Apple's error codes support meets, by number. The numbers and names are Apple's: the App Store
    /// Server API's "Error codes" page (developer.apple.com/documentation/appstoreserverapi/error-codes,
    /// each error's page gives its `errorCode`) and Apple's app-store-server-library `APIError`
    /// enumerations. Codes not listed here are echoed as Apple sent them.
    public static let namedCodes: [Int64: NamedCode] = [
        4000047: NamedCode(
            name: "InvalidTransactionTypeNotSupportedError",
            meaning: "the endpoint does not support this kind of In-App Purchase",
            fix: "check the transaction's product type ('iapctl apple transaction ID'); this call does not apply to it"),
        4000048: NamedCode(
            name: "AppTransactionIdNotSupportedError",
            meaning: "the endpoint does not take an app transaction id",
            fix: "give the In-App Purchase's transactionId (from the notification or 'iapctl apple history'), "
                + "not the appTransactionId"),
        4000185: NamedCode(
            name: "FamilyTransactionNotSupportedError",
            meaning: "the purchase was obtained through Family Sharing, which this endpoint does not support",
            fix: "act on the family organizer's purchase (its originalTransactionId), not the shared copy"),
        4000187: NamedCode(
            name: "TransactionIdIsNotOriginalTransactionIdError",
            meaning: "the endpoint expects an original transaction id",
            fix: "give the purchase's originalTransactionId ('iapctl apple transaction ID' shows it)"),
        4000209: NamedCode(
            name: "ConsumptionPercentageAutoRenewableSubscriptionError",
            meaning: "consumptionPercentage is not accepted for an auto-renewable subscription",
            fix: "send the answer without consumptionPercentage: Apple computes it from elapsed time"),
        4030004: NamedCode(
            name: "SubscriptionExtensionIneligibleError",
            meaning: "the subscription's state does not allow a renewal-date extension",
            fix: "only active subscriptions can be extended; check 'iapctl apple status ORIGINAL_ID'"),
        4030005: NamedCode(
            name: "SubscriptionMaxExtensionError",
            meaning: "the subscription already received the maximum number of extensions",
            fix: "Apple allows two extensions per year per subscription; compensate another way"),
        4030007: NamedCode(
            name: "FamilySharedSubscriptionExtensionIneligibleError",
            meaning: "a subscription obtained through Family Sharing cannot be extended directly",
            fix: "extend the family organizer's subscription instead"),
        4040019: NamedCode(
            name: "AppTransactionDoesNotExistError",
            meaning: "no app transaction exists for this customer",
            fix: "check the id and the environment (--environment Sandbox for test purchases)"),
    ]

    /// Apple's name and advice for `code`, when it is one support meets.
    public static func named(_ code: Int64?) -> NamedCode? { code.flatMap { namedCodes[$0] } }
}
