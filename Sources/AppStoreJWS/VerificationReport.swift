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
public struct VerificationReport: CheckedReport {
    /// One step of verification (shared with the receipt verifier).
    public typealias Check = VerificationCheck

    /// The detected payload kind.
    public var kind: PayloadKind = .unknown
    /// Verified, or refused with the first failure (nested JWS included).
    public var outcome: VerificationOutcome = .verified
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
    /// Reports of nested JWS, in the order they were verified (a failing one ends the list).
    public var nested: [(member: NestedMember, report: VerificationReport)] = []

    /// The report of the nested JWS in `member`, when the payload had one and it was reached.
    public func nested(_ member: NestedMember) -> VerificationReport? {
        nested.first(where: { $0.member == member })?.report
    }

    /// The verified `data.signedTransactionInfo` of a notification, typed.
    public var nestedTransaction: TransactionPayload? { nested(.signedTransactionInfo)?.transaction }

    /// The verified `data.signedRenewalInfo` of a notification, typed.
    public var nestedRenewalInfo: RenewalInfoPayload? { nested(.signedRenewalInfo)?.renewalInfo }

    public init() {}
}

/// A member of a notification's payload that holds a JWS of its own, verified as a nested report.
public enum NestedMember: String, Sendable, Hashable, CaseIterable {
    /// `data.signedTransactionInfo`: a signed transaction.
    case signedTransactionInfo
    /// `data.signedRenewalInfo`: a signed renewal info.
    case signedRenewalInfo
    /// `appData.signedAppTransactionInfo`: an AppTransaction.
    case signedAppTransactionInfo

    /// The payload kind the member promises (a nested JWS of another kind is refused).
    public var kind: PayloadKind {
        switch self {
        case .signedTransactionInfo: .transaction
        case .signedRenewalInfo: .renewalInfo
        case .signedAppTransactionInfo: .appTransaction
        }
    }
}
