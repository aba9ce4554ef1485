import AppStoreAPI
import AppStoreJWS
import IAPOperations

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

    /// A subscription of Get All Subscription Statuses with its verified items.
    public struct VerifiedStatus: Sendable {
        public var item: SubscriptionStatusItem
        public var transaction: VerificationReport
        public var renewal: VerificationReport?
    }

    /// The first item of a status answer that does not verify: a transaction (`index` among the
    /// transactions) or a renewal info (`index` among those present).
    public struct UnverifiedStatus: Error, Sendable {
        public var isRenewalInfo: Bool
        public var unverified: Unverified
    }

    /// Verifies every subscription's latest transaction, then every renewal info, and pairs each
    /// renewal info with its subscription; the first that does not verify stops it.
    public static func verified(_ items: [SubscriptionStatusItem], with verifier: AppStoreVerifier) throws(UnverifiedStatus)
        -> [VerifiedStatus]
    {
        let transactions: [VerificationReport]
        var renewals: [VerificationReport]
        do {
            transactions = try verified(items.map(\.transaction), as: .transaction, with: verifier)
        } catch { throw UnverifiedStatus(isRenewalInfo: false, unverified: error) }
        do {
            renewals = try verified(items.compactMap(\.renewal), as: .renewalInfo, with: verifier)
        } catch { throw UnverifiedStatus(isRenewalInfo: true, unverified: error) }
        renewals.reverse()
        return zip(items, transactions).map { item, transaction in
            VerifiedStatus(item: item, transaction: transaction, renewal: item.renewal == nil ? nil : renewals.popLast())
        }
    }
}
