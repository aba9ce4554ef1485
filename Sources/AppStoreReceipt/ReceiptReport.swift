#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// The outcome of verifying one receipt: every check made (stopping at the first failure), the
/// decoded receipt, and what the chain was checked against.
public struct ReceiptReport: CheckedReport {
    /// Verified, or refused with the first failure.
    public var outcome: VerificationOutcome = .verified
    /// Every check made, in order: format, signature, payload, creation date, chain, leaf OID,
    /// intermediate OID, validity, bundle id, environment.
    public var checks: [VerificationCheck] = []
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

    public init() {}
}
