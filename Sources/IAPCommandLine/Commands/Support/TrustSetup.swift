import AppStoreJWS
import AppStoreReceipt
import IAPOperations

/// Reads the trust options (`--root-ca`, `--receipt-root-ca`, `--bundle-id`, `--app-apple-id`,
/// `--environment`, `--at`) shared by `notify`, `verify` and `restore` into ``TrustSettings``,
/// and words what they refuse.
enum TrustSetup {
    static let builtInRoot = "Apple Root CA - G3 (built in)"

    /// The hint for a chain that does not lead to the trusted root: which root is in use (`roots`,
    /// the JWS verifier's) and how to choose another.
    static func untrustedHint(_ roots: TrustSettings.Roots) -> String {
        let inUse =
            switch roots {
            case .builtIn: builtInRoot
            case .files(let paths, _): paths.joined(separator: ", ") + " (--root-ca)"
            case .certificates(let certificates): "\(certificates.count) given certificate\(certificates.count == 1 ? "" : "s")"
            }
        return "the trusted root in use is \(inUse); the JWS is not signed under it. If it comes from "
            + "Apple, it is forged or damaged; if it is signed by another CA (a test CA, Xcode), name that "
            + "root with --root-ca FILE"
    }

    /// The settings the verifier of `kind` needs (a receipt verifier reads neither `--root-ca` nor
    /// `--app-apple-id`).
    static func settings(_ invocation: Invocation, for kind: ClientVerifiers.Kind) throws -> TrustSettings {
        var settings = TrustSettings()
        switch kind {
        case .jws: settings.roots = try roots(invocation, option: CommandTree.rootCAOption)
        case .receipts: settings.receiptRoots = try roots(invocation, option: CommandTree.receiptRootCAOption)
        }
        settings.bundleId = invocation[CommandTree.bundleIdOption]
        if kind == .jws, let id = invocation[CommandTree.appAppleIdOption] { settings.appAppleId = id }
        let environments = invocation[CommandTree.environmentOption]
        if !environments.isEmpty { settings.environments = Set(environments.map(\.rawValue)) }
        settings.validationTime = invocation[CommandTree.atOption]
        return settings
    }

    /// The JWS verifier of `settings`.
    static func verifier(_ settings: TrustSettings) throws -> AppStoreVerifier {
        do { return try settings.appStoreVerifier() } catch { throw unusable(error, kind: .jws) }
    }

    /// The receipt verifier of the trust options.
    static func receiptVerifier(_ invocation: Invocation) throws -> ReceiptVerifier {
        let settings = try settings(invocation, for: .receipts)
        do { return try settings.receiptVerifier() } catch { throw unusable(error, kind: .receipts) }
    }

    /// Settings that cannot make a verifier (exit 78).
    static func unusable(_ error: TrustConfigurationError, kind: ClientVerifiers.Kind) -> CLIError {
        switch kind {
        case .jws:
            CLIError(
                .config, "\(error)",
                hint: "Production needs the app's Apple id: pass --app-apple-id N (or IAPCTL_APP_APPLE_ID), "
                    + "or accept only Sandbox with --environment Sandbox")
        case .receipts: CLIError(.config, "\(error)", hint: "check --receipt-root-ca")
        }
    }

    /// The certificates of every `--OPTION FILE` (DER or PEM); the built-in root when the option
    /// is not given.
    static func roots(_ invocation: Invocation, option: Option<[String]>) throws(CLIError) -> TrustSettings.Roots {
        do { return try TrustSettings.Roots.read(files: invocation[option]) } catch {
            switch error {
            case .cannotOpen(let path, let code): throw FileSystem.openError(path: path, errno: code)
            case .cannotRead(let path, let code): throw CLIError(.ioError, "cannot read \(path): \(FileSystem.describe(errno: code))")
            case .tooLarge(let path, let maxBytes): throw CLIError(.dataError, "\(path) is larger than \(maxBytes) bytes")
            case .notACertificate(let path, let why):
                throw CLIError(.config, "--\(option.spec.long) \(path): \(why)", hint: "give a DER or PEM certificate file")
            }
        }
    }

}

/// `--at`: `signed`, `now`, or a time in the grammar of every time option (``Timestamp/parse(_:now:)``).
extension TrustConfiguration.ValidationTime: OptionValue {
    public init(optionText text: String) throws(OptionValueProblem) {
        do { self = try .parse(text, now: Timestamp.now()) } catch {
            throw OptionValueProblem(
                "'\(error.text)' is not signed, now, or a time", hint: "use signed or " + Timestamp.inputForms,
                naming: .subject)
        }
    }
}

extension ClientVerifiers {
    /// The verifiers of one run, made from the trust options when the first item needs one (a run
    /// of receipts needs no `--app-apple-id`, which only JWS of Production carry).
    convenience init(_ invocation: Invocation) {
        self.init(settings: { try TrustSetup.settings(invocation, for: $0) })
    }
}

extension ClientVerifiers.SetupError: CLIErrorConvertible {
    public var cliError: CLIError { TrustSetup.unusable(error, kind: kind) }
}
