/// The name of one verification step, shown (table and JSON) as its ``description``.
///
/// One set for both verifiers: a JWS goes through format, algorithm, x5c, chain, leaf OID,
/// intermediate OID, leaf key, validity, signature, payload, bundle id, app id, environment and
/// its nested JWS; a StoreKit 1 receipt through format, signature, payload, creation date, chain,
/// leaf OID, intermediate OID, validity, bundle id and environment.
public enum CheckName: Sendable, Hashable, CustomStringConvertible {
    case format
    case algorithm
    case x5c
    case chain
    case leafOID
    case intermediateOID
    case leafKey
    case validity
    case signature
    /// A JWS's `signedDate` lies too far ahead of the clock.
    case signedDate
    /// A receipt's creation date (field 12).
    case creationDate
    case payload
    /// A nested JWS is not of the kind its member promises.
    case kind
    case bundleId
    case appId
    case environment
    /// A nested JWS of a notification (`signedTransactionInfo`, `signedRenewalInfo`,
    /// `signedAppTransactionInfo`), verified as a report of its own.
    case nested(NestedMember)

    /// The printed name (`leaf OID`, `bundle id`, `nested signedTransactionInfo`).
    public var description: String {
        switch self {
        case .format: "format"
        case .algorithm: "algorithm"
        case .x5c: "x5c"
        case .chain: "chain"
        case .leafOID: "leaf OID"
        case .intermediateOID: "intermediate OID"
        case .leafKey: "leaf key"
        case .validity: "validity"
        case .signature: "signature"
        case .signedDate: "signed date"
        case .creationDate: "creation date"
        case .payload: "payload"
        case .kind: "kind"
        case .bundleId: "bundle id"
        case .appId: "app id"
        case .environment: "environment"
        case .nested(let member): "nested \(member.rawValue)"
        }
    }
}

/// How a verification ended.
public enum VerificationOutcome: Sendable, Equatable {
    /// Every check passed (or was skipped by the configuration).
    case verified
    /// The first failed check says why.
    case refused(VerificationFailure)
}

/// One step of verification with its verdict and a human-readable detail.
public struct VerificationCheck: Sendable, Equatable {
    /// A check's verdict.
    public enum Status: String, Sendable, Equatable {
        case passed, failed, skipped
    }

    public let name: CheckName
    public let status: Status
    public let detail: String

    public init(_ name: CheckName, _ status: Status, _ detail: String) {
        self.name = name
        self.status = status
        self.detail = detail
    }
}

/// What the JWS and the receipt report share: the checks made, in order (verification stops at
/// the first failure), and the outcome.
public protocol CheckedReport: Sendable {
    /// Every check made, in order.
    var checks: [VerificationCheck] { get set }
    /// Verified, or refused with the first failure.
    var outcome: VerificationOutcome { get set }
}

extension CheckedReport {
    /// Why verification failed; nil when it passed.
    public var failure: VerificationFailure? {
        if case .refused(let failure) = outcome { return failure }
        return nil
    }

    /// True when every check passed.
    public var isValid: Bool { outcome == .verified }

    /// The check with this name, if it was made.
    public func check(_ name: CheckName) -> VerificationCheck? {
        checks.first(where: { $0.name == name })
    }

    /// The check with this printed name (`"leaf OID"`), if it was made.
    public func check(_ name: String) -> VerificationCheck? {
        checks.first(where: { $0.name.description == name })
    }

    package mutating func fail(_ check: CheckName, _ code: VerificationFailure.Code, _ message: String, detail: String? = nil) {
        checks.append(VerificationCheck(check, .failed, detail ?? message))
        outcome = .refused(VerificationFailure(code, message))
    }

    package mutating func pass(_ check: CheckName, _ detail: String) {
        checks.append(VerificationCheck(check, .passed, detail))
    }

    package mutating func skip(_ check: CheckName, _ detail: String) {
        checks.append(VerificationCheck(check, .skipped, detail))
    }
}
