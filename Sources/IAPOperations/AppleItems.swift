import AppStoreJWS

/// Signed items Apple's API returned, verified before anything of them is shown decoded.
public enum AppleItems {
    /// The first item that does not verify (0-based `index`), and why.
    public struct Unverified: Error, Sendable {
        public var index: Int
        public var failure: VerificationFailure
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
