import AppStoreAPI
import AppStoreJWS

/// Signed items Apple's API returned, verified before anything of them is shown decoded.
public enum AppleItems {
    /// The first item that does not verify (0-based `index`), and why.
    public struct Unverified: Error, Sendable {
        public var index: Int
        public var failure: VerificationFailure
    }

    /// The verifier for items `server` sent: `configuration` (the trust options), accepting only that
    /// server's environment.
    public static func verifier(_ configuration: TrustConfiguration, for server: APIServer) throws(TrustConfigurationError)
        -> AppStoreVerifier
    {
        var configuration = configuration
        configuration.environments = [server.rawValue]
        return try AppStoreVerifier(configuration: configuration)
    }

    /// Verifies each JWS as `kind`, in order; the first that does not verify stops it, so no
    /// unverified item is ever returned decoded.
    public static func verified(_ items: [String], as kind: PayloadKind, with verifier: AppStoreVerifier) throws(Unverified)
        -> [VerificationReport]
    {
        var reports: [VerificationReport] = []
        reports.reserveCapacity(items.count)
        for (index, jws) in items.enumerated() {
            let report = verifier.verify(jws, as: kind)
            if let failure = report.failure { throw Unverified(index: index, failure: failure) }
            reports.append(report)
        }
        return reports
    }
}
