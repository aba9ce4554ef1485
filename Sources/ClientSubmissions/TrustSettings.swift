import AppStoreAPI
import AppStoreJWS
import AppStoreReceipt
import IAPOperations

/// What a run trusts and accepts when it verifies Apple's signed items (the trust options of
/// `notify`, `verify`, `restore` and the `apple` commands): it makes the JWS verifier
/// (``appStoreVerifier()``, or ``appStoreVerifier(for:)`` for items an API server sent) and the
/// StoreKit 1 receipt verifier (``receiptVerifier()``), and says which roots are in use.
public struct TrustSettings: Sendable {
    /// Where a verifier's trusted roots come from.
    public enum Roots: Sendable, Equatable {
        /// The verifier's own: Apple Root CA - G3 for JWS, Apple Inc. Root for receipts.
        case builtIn
        /// The certificates read from these files (DER or PEM), in order.
        case files([String], certificates: [[UInt8]])
        /// Certificates given as DER bytes.
        case certificates([[UInt8]])

        /// The certificates of every file of `paths` (each DER or PEM, at most 1 MiB), read now;
        /// ``builtIn`` when there are none.
        public static func read(files paths: [String]) throws(RootFileRefusal) -> Roots {
            guard !paths.isEmpty else { return .builtIn }
            var certificates: [[UInt8]] = []
            for path in paths { certificates += try TrustConfiguration.roots(fromFile: path) }
            return .files(paths, certificates: certificates)
        }

        /// The certificates; nil for the built-in root.
        public var certificates: [[UInt8]]? {
            switch self {
            case .builtIn: nil
            case .files(_, let certificates), .certificates(let certificates): certificates
            }
        }
    }

    /// The JWS verifier's trusted roots.
    public var roots: Roots
    /// The receipt verifier's trusted roots.
    public var receiptRoots: Roots
    /// The app's bundle id; nil skips the check.
    public var bundleId: String?
    /// The app's Apple id; a JWS verifier accepting Production needs it.
    public var appAppleId: Int64?
    /// Accepted environments ("Production", "Sandbox", "Xcode", "LocalTesting").
    public var environments: Set<String>
    /// When a chain must be valid (`signedDate`: a JWS's signedDate, a receipt's creation date).
    public var validationTime: TrustConfiguration.ValidationTime

    public init(
        roots: Roots = .builtIn, receiptRoots: Roots = .builtIn, bundleId: String? = nil, appAppleId: Int64? = nil,
        environments: Set<String> = [EnvironmentName.production.rawValue],
        validationTime: TrustConfiguration.ValidationTime = .signedDate
    ) {
        self.roots = roots
        self.receiptRoots = receiptRoots
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
        self.validationTime = validationTime
    }

    /// The JWS verifier's configuration.
    public var configuration: TrustConfiguration {
        var configuration = TrustConfiguration()
        if let certificates = roots.certificates { configuration.roots = certificates }
        configuration.bundleId = bundleId
        configuration.appAppleId = appAppleId
        configuration.environments = environments
        configuration.validationTime = validationTime
        return configuration
    }

    /// The receipt verifier's trust.
    public var receiptTrust: ReceiptTrust {
        var trust = ReceiptTrust()
        if let certificates = receiptRoots.certificates { trust.roots = certificates }
        trust.bundleId = bundleId
        trust.environments = environments
        trust.validationTime = validationTime
        return trust
    }

    /// The JWS verifier; throws when Production is accepted without the app's Apple id, or a root
    /// is unusable.
    public func appStoreVerifier() throws(TrustConfigurationError) -> AppStoreVerifier {
        try AppStoreVerifier(configuration: configuration)
    }

    /// The JWS verifier for items `server` sent: accepting only that server's environment
    /// (``AppleItems/verifier(_:for:)``).
    public func appStoreVerifier(for server: APIServer) throws(TrustConfigurationError) -> AppStoreVerifier {
        try AppleItems.verifier(configuration, for: server)
    }

    /// The StoreKit 1 receipt verifier; throws when a root is unusable.
    public func receiptVerifier() throws(TrustConfigurationError) -> ReceiptVerifier {
        try ReceiptVerifier(trust: receiptTrust)
    }
}
