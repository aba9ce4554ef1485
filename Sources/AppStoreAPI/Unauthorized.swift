/// What a 401 (Apple refused the token) most likely means, in the order worth checking.
public enum UnauthorizedCause: Sendable, Equatable {
    /// The key id differs from the one in the key file's name `AuthKey_KEYID.p8`.
    case keyIdDiffersFromFileName(keyId: String, fileName: String)
    /// Sandbox was not asked: an app never released on the App Store is known only to Sandbox.
    case appNeverReleased
    /// The issuer id or the bundle id does not belong to the key's team, or the key was revoked.
    case issuerOrBundleId(bundleId: String?)
    /// `auto` asked Sandbox too and it refused as well: not an unreleased app.
    case sandboxRefusedToo

    /// The likely causes of a 401 for a token signed with `keyId` from `keyFile`, naming `bundleId`,
    /// sent with `environment`; `sandboxTried`: whether Sandbox was (or may have been) asked.
    public static func likely(
        keyFile: String, keyId: String, bundleId: String?, environment: APIEnvironment, sandboxTried: Bool
    ) -> [UnauthorizedCause] {
        var causes: [UnauthorizedCause] = []
        if let named = APIKeyFile.keyId(inFileName: keyFile), named != keyId {
            causes.append(.keyIdDiffersFromFileName(keyId: keyId, fileName: APIKeyFile.baseName(keyFile)))
        }
        if !sandboxTried { causes.append(.appNeverReleased) }
        causes.append(.issuerOrBundleId(bundleId: bundleId))
        if sandboxTried && environment == .auto { causes.append(.sandboxRefusedToo) }
        return causes
    }
}

extension APIEnvironment {
    /// The one server an endpoint that names no transaction asks: Production, or Sandbox with `sandbox`
    /// (`auto` means Production there).
    public var singleServer: APIServer { self == .sandbox ? .sandbox : .production }

    /// Whether Sandbox was (or may have been) asked: by a call that follows the environment (a
    /// transaction id: `auto` falls back to Sandbox) unless it is `production`; by one sent to
    /// ``singleServer`` only with `sandbox`.
    public func mayHaveAskedSandbox(followsEnvironment: Bool) -> Bool {
        followsEnvironment ? self != .production : self == .sandbox
    }
}
