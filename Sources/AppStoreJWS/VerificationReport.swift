/// What a verified (or refused) JWS turned out to be.
public enum PayloadKind: String, Sendable, Equatable {
    /// App Store Server Notification V2 (has `notificationType`).
    case notification
    /// A signed transaction (has `transactionId`).
    case transaction
    /// A signed renewal info (renewal fields, no `transactionId`).
    case renewalInfo
    /// An AppTransaction (has `receiptType` / application versions).
    case appTransaction
    /// Not recognised (or not decodable).
    case unknown
}

/// The outcome of verifying one JWS: every check made, the decoded payload, the typed model.
public struct VerificationReport: Sendable {
    /// One step of verification with its verdict and a human-readable detail.
    public struct Check: Sendable, Equatable {
        /// A check's verdict.
        public enum Status: String, Sendable, Equatable {
            case passed, failed, skipped
        }

        /// e.g. "format", "algorithm", "x5c", "chain", "leaf OID", "intermediate OID", "leaf key",
        /// "validity", "signature", "bundle id", "app id", "environment", "nested signedTransactionInfo".
        public let name: String
        public let status: Status
        public let detail: String

        public init(_ name: String, _ status: Status, _ detail: String) {
            self.name = name
            self.status = status
            self.detail = detail
        }
    }

    /// The detected payload kind.
    public var kind: PayloadKind = .unknown
    /// Why verification failed; nil when the JWS is valid.
    public var failure: VerificationFailure?
    /// Every check made, in order; verification stops at the first failure.
    public var checks: [Check] = []
    /// Things the caller should know about an accepted JWS (e.g. unsigned Xcode data).
    public var warnings: [String] = []
    /// The decoded JOSE header.
    public var header: JSONValue?
    /// The decoded payload with every field, known or not, in document order.
    public var payload: JSONValue?
    /// The payload's environment as used by the checks (derived for external purchase tokens).
    public var environment: String?
    /// The instant the chain was checked at (ms), when it was checked.
    public var validationTime: Int64?
    /// Typed notification, when ``kind`` is `.notification` and decoding succeeded.
    public var notification: NotificationPayload?
    /// Typed transaction, when ``kind`` is `.transaction`.
    public var transaction: TransactionPayload?
    /// Typed renewal info, when ``kind`` is `.renewalInfo`.
    public var renewalInfo: RenewalInfoPayload?
    /// Typed AppTransaction, when ``kind`` is `.appTransaction`.
    public var appTransaction: AppTransactionPayload?
    /// Reports of nested JWS (`signedTransactionInfo`, `signedRenewalInfo`, `signedAppTransactionInfo`).
    public var nested: [(name: String, report: VerificationReport)] = []

    /// True when every check passed, nested JWS included.
    public var isValid: Bool { failure == nil }

    /// The nested report with this name, if any.
    public func nestedReport(_ name: String) -> VerificationReport? {
        nested.first(where: { $0.name == name })?.report
    }

    /// The check with this name, if it was made.
    public func check(_ name: String) -> Check? {
        checks.first(where: { $0.name == name })
    }

    public init() {}

    mutating func fail(_ check: String, _ code: VerificationFailure.Code, _ message: String, detail: String? = nil) {
        checks.append(Check(check, .failed, detail ?? message))
        failure = VerificationFailure(code, message)
    }

    mutating func pass(_ check: String, _ detail: String) {
        checks.append(Check(check, .passed, detail))
    }

    mutating func skip(_ check: String, _ detail: String) {
        checks.append(Check(check, .skipped, detail))
    }
}
