#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// What a ``ReceiptVerifier`` trusts and accepts.
public struct ReceiptTrust: Sendable {
    /// Trusted root certificates (DER). Default: the embedded Apple Inc. Root. A self-signed
    /// certificate given here is trusted as a signer by itself (Xcode StoreKit testing).
    public var roots: [[UInt8]]
    /// The app's bundle id; nil skips the bundle id check (reported as skipped).
    public var bundleId: String?
    /// Accepted environments (`Production`, `Sandbox`, `Xcode`); empty accepts any, unchecked.
    public var environments: Set<String>
    /// When the chain must be valid: `.signedDate` means the receipt's creation date (field 12).
    public var validationTime: TrustConfiguration.ValidationTime
    /// Current time in milliseconds since the epoch (injectable for tests).
    public var clock: @Sendable () -> Int64
    /// How far the creation date may lie ahead of the clock before the receipt is refused (ms).
    public var maxFutureSkewMillis: Int64
    /// The extension the intermediate must carry: Apple's WWDR marker by default (every Apple
    /// receipt chain, G1 to G5, has it). Nil skips the check (reported as skipped): only for
    /// synthetic test chains whose intermediate lacks it; the CLI never sets it.
    public var intermediateOID: String? = "1.2.840.113635.100.6.2.1"

    public init(
        roots: [[UInt8]] = [AppleIncRootCA.der],
        bundleId: String? = nil,
        environments: Set<String> = [EnvironmentName.production.rawValue],
        validationTime: TrustConfiguration.ValidationTime = .signedDate,
        clock: @escaping @Sendable () -> Int64 = Timestamp.now,
        maxFutureSkewMillis: Int64 = 300_000
    ) {
        self.roots = roots
        self.bundleId = bundleId
        self.environments = environments
        self.validationTime = validationTime
        self.clock = clock
        self.maxFutureSkewMillis = maxFutureSkewMillis
    }
}
