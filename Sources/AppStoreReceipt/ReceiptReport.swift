#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// The outcome of verifying one receipt: every check made (stopping at the first failure), the
/// decoded receipt, and what the chain was checked against.
public struct ReceiptReport: Sendable {
    /// Why verification failed; nil when the receipt is valid.
    public var failure: ReceiptFailure?
    /// Every check made, in order: format, signature, payload, creation date, chain, leaf OID,
    /// intermediate OID, validity, bundle id, environment.
    public var checks: [VerificationReport.Check] = []
    /// Things the caller should know about an accepted receipt (e.g. an Xcode test certificate).
    public var warnings: [String] = []
    /// The decoded payload (set once the payload decoded, even when a later check failed).
    public var receipt: AppReceipt?
    /// The environment the receipt type means (Production, Sandbox, Xcode).
    public var environment: String? { receipt?.environment }
    /// The instant the chain was checked at (ms), when it was checked.
    public var validationTime: Int64?
    /// True when the signer is a self-signed certificate trusted explicitly (Xcode StoreKit testing).
    public var isSelfSigned = false

    /// True when every check passed.
    public var isValid: Bool { failure == nil }

    /// The check with this name, if it was made.
    public func check(_ name: String) -> VerificationReport.Check? {
        checks.first(where: { $0.name == name })
    }

    public init() {}

    mutating func fail(_ check: String, _ code: ReceiptFailure.Code, _ message: String, detail: String? = nil) {
        checks.append(VerificationReport.Check(check, .failed, detail ?? message))
        failure = ReceiptFailure(code, message)
    }

    mutating func pass(_ check: String, _ detail: String) {
        checks.append(VerificationReport.Check(check, .passed, detail))
    }

    mutating func skip(_ check: String, _ detail: String) {
        checks.append(VerificationReport.Check(check, .skipped, detail))
    }
}
