import AppStoreJWS
import AppStoreReceipt

/// Builds the verifier from the trust options (`--root-ca`, `--bundle-id`, `--app-apple-id`,
/// `--environment`, `--at`) shared by `notify`, `verify` and `restore`.
enum TrustSetup {
    /// The trusted roots of this run, in words (for trust errors).
    nonisolated(unsafe) static var rootsInUse = builtInRoot

    static let builtInRoot = "Apple Root CA - G3 (built in)"

    /// The hint for a chain that does not lead to the trusted root: which root is in use and how
    /// to choose another.
    static var untrustedHint: String {
        "the trusted root in use is \(rootsInUse); the JWS is not signed under it. If it comes from "
            + "Apple, it is forged or damaged; if it is signed by another CA (a test CA, Xcode), name that "
            + "root with --root-ca FILE"
    }

    /// OpenSSL's words for why a chain failed, in a person's words.
    static func plainWords(_ message: String) -> String {
        let phrases: [(String, String)] = [
            ("unable to get local issuer certificate", "it was not issued under the trusted root"),
            ("self-signed certificate in certificate chain", "it leads to a root that is not the trusted one"),
            ("self signed certificate in certificate chain", "it leads to a root that is not the trusted one"),
            ("unable to get issuer certificate", "its issuer is missing from the chain"),
            ("certificate signature failure", "a certificate's signature does not match its issuer"),
        ]
        var text = message
        for (openssl, plain) in phrases { text = text.replacing(openssl, with: plain) }
        return text
    }

    static func verifier(_ invocation: Invocation) throws -> AppStoreVerifier {
        var configuration = TrustConfiguration()
        let rootFiles = invocation.values(CommandTree.rootCAOption)
        rootsInUse = rootFiles.isEmpty ? builtInRoot : rootFiles.joined(separator: ", ") + " (--root-ca)"
        if let roots = try roots(invocation, option: CommandTree.rootCAOption) { configuration.roots = roots }
        configuration.bundleId = invocation.value(CommandTree.bundleIdOption)
        if let raw = invocation.value(CommandTree.appAppleIdOption) {
            guard let id = Int64(raw), id > 0 else {
                throw CLIError.usage("--app-apple-id must be a positive integer, got '\(raw)'")
            }
            configuration.appAppleId = id
        }
        let environments = invocation.values(CommandTree.environmentOption)
        configuration.environments = Set(environments.isEmpty ? [EnvironmentName.production.rawValue] : environments)
        configuration.validationTime = try validationTime(invocation.value(CommandTree.atOption) ?? "signed")
        do {
            return try AppStoreVerifier(configuration: configuration)
        } catch {
            throw CLIError(
                .config, "\(error)",
                hint: "Production needs the app's Apple id: pass --app-apple-id N (or IAPCTL_APP_APPLE_ID), "
                    + "or accept only Sandbox with --environment Sandbox")
        }
    }

    /// The receipt verifier from `--receipt-root-ca`, `--bundle-id`, `--environment` and `--at`
    /// (`signed` = the receipt's creation date).
    static func receiptVerifier(_ invocation: Invocation) throws -> ReceiptVerifier {
        var trust = ReceiptTrust()
        if let roots = try roots(invocation, option: CommandTree.receiptRootCAOption) { trust.roots = roots }
        trust.bundleId = invocation.value(CommandTree.bundleIdOption)
        let environments = invocation.values(CommandTree.environmentOption)
        trust.environments = Set(environments.isEmpty ? [EnvironmentName.production.rawValue] : environments)
        trust.validationTime = try validationTime(invocation.value(CommandTree.atOption) ?? "signed")
        do {
            return try ReceiptVerifier(trust: trust)
        } catch {
            throw CLIError(.config, "\(error)", hint: "check --receipt-root-ca")
        }
    }

    /// The certificates of every `--OPTION FILE` (DER or PEM); nil when the option is not given.
    static func roots(_ invocation: Invocation, option: OptionSpec) throws -> [[UInt8]]? {
        let files = invocation.values(option)
        guard !files.isEmpty else { return nil }
        var roots: [[UInt8]] = []
        for path in files {
            let bytes = try FileSystem.readAll(path: path, maxBytes: 1 << 20)
            do {
                roots += try TrustConfiguration.roots(fromDERorPEM: bytes)
            } catch {
                throw CLIError(.config, "--\(option.long) \(path): \(error)", hint: "give a DER or PEM certificate file")
            }
        }
        return roots
    }

    /// `signed`, `now`, or a time in the grammar of every time option (``Timestamp/parse(_:now:)``).
    static func validationTime(_ raw: String) throws(CLIError) -> TrustConfiguration.ValidationTime {
        switch raw.lowercased() {
        case "signed", "signeddate", "signed-date": return .signedDate
        case "now": return .now
        default:
            guard let ms = Timestamp.parse(raw, now: Timestamp.now()) else {
                throw CLIError.usage("--at '\(raw)' is not signed, now, or a time", hint: "use signed or " + Timestamp.inputForms)
            }
            return .fixed(ms)
        }
    }
}
