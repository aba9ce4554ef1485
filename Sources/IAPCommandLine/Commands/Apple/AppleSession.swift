import AppStoreAPI
import AppStoreJWS
import IAPOperations

extension AppStoreAPIError: CLIErrorConvertible {
    /// Exit codes of iapctl(1): 401 and a bad key are configuration (78), unknown ids not found (3), Apple's
    /// "invalid request" malformed input (65), a rate limit still in force "retry" (75), a server or network
    /// failure "unavailable" (69).
    public var cliError: CLIError {
        let code: ExitCode
        switch kind {
        case .configuration, .unauthorized: code = .config
        case .notFound: code = .notFound
        case .invalidRequest, .malformedResponse: code = .dataError
        case .rateLimited: code = .tempFail
        case .unavailable: code = .unavailable
        case .internal: code = .software
        }
        if deadline != nil {
            let raise = "to wait longer, raise --deadline (IAPCTL_APPLE_DEADLINE, 'apple-deadline')"
            return CLIError(code, message, hint: hint.map { $0 + "; " + raise } ?? "Apple or the network may be down; " + raise)
        }
        return CLIError(code, message, hint: hint)
    }
}

/// Everything an `iapctl apple …` command needs: the API client made from the key settings, the
/// environment, and the verifier for decoded output.
final class AppleSession {
    let invocation: Invocation
    let api: AppStoreServerAPI
    let environment: APIEnvironment
    let keyFile: String
    let keyId: String

    /// `environment`: the server(s) to ask when the command has no `--environment` of its own
    /// (`restore`, whose `--environment` names the accepted environments); otherwise `--environment`.
    /// Settings the command does not declare (timeouts, waits, walk bounds) keep their defaults.
    init(_ invocation: Invocation, environment: APIEnvironment? = nil) throws {
        self.invocation = invocation
        self.environment = environment ?? invocation[AppleCommands.environmentOption]
        func given<Value>(_ option: Option<Value>) -> Value? {
            invocation.declares(option.spec) ? invocation[option] : nil
        }
        let setup = try APIClientSetup(
            keyFile: invocation[AppleCommands.keyFileOption], keyId: invocation[AppleCommands.keyIdOption],
            issuerId: invocation[AppleCommands.issuerIdOption], bundleId: invocation[AppleCommands.bundleIdOption],
            connectTimeout: given(AppleCommands.connectTimeoutOption), totalTimeout: given(AppleCommands.timeoutOption),
            deadline: given(AppleCommands.deadlineOption), maxRateLimitWait: given(AppleCommands.maxWaitOption),
            maxPages: given(AppleCommands.maxPagesOption), walkDeadline: given(AppleCommands.walkDeadlineOption),
            environment: invocation.environment)
        keyFile = setup.keyFile
        keyId = setup.settings.key.keyId
        api = try AppStoreServerAPI.make(setup.settings)
        if let base = setup.testServer {
            invocation.warn("talking to the test server \(base) (\(APIClientSetup.baseURLVariable)), not to Apple")
        }
        api.log = { [invocation] in invocation.note($0) }
        api.whileSilent = { [weak self] server, waited in self?.silent(server, waitedMs: waited) }
        if let mismatch = setup.keyIdMismatch {
            invocation.warn(
                "--key-id \(mismatch.keyId) differs from the key file's name \(mismatch.fileName); Apple will refuse a mismatch")
        }
    }

    /// Sends one call to the server(s) of `--environment`; a 401 gets the likely cause. `storedIn`: the
    /// server the database has the id from, asked first under `auto`.
    func send(_ call: APICall, sandboxOnNotFound: Bool = true, storedIn: APIServer? = nil) throws -> APIAnswer {
        do {
            return try api.send(call, environment, sandboxOnNotFound: sandboxOnNotFound, storedIn: storedIn)
        } catch { throw explained(error, sandboxTried: environment.mayHaveAskedSandbox(followsEnvironment: true)) }
    }

    /// Runs `body`, explaining a 401; `followsEnvironment`: it asked the server(s) of `--environment`
    /// (else Production, or Sandbox with `--environment Sandbox`).
    func explaining<T>(followsEnvironment: Bool = false, _ body: () throws(AppStoreAPIError) -> T) throws -> T {
        do { return try body() } catch {
            throw explained(error, sandboxTried: environment.mayHaveAskedSandbox(followsEnvironment: followsEnvironment))
        }
    }

    /// A 401 says which of key, issuer, bundle id or "never released" is likely (``UnauthorizedCause``).
    func explained(_ error: AppStoreAPIError, sandboxTried: Bool) -> AppStoreAPIError {
        guard error.kind == .unauthorized else { return error }
        var error = error
        let causes = UnauthorizedCause.likely(
            keyFile: keyFile, keyId: keyId, bundleId: invocation[AppleCommands.bundleIdOption],
            environment: environment, sandboxTried: sandboxTried)
        error.hint = "likely: " + causes.map(Self.describe).joined(separator: "; ")
        return error
    }

    static func describe(_ cause: UnauthorizedCause) -> String {
        switch cause {
        case .keyIdDiffersFromFileName(let keyId, let fileName): "the key id: --key-id \(keyId) but the key file is \(fileName)"
        case .appNeverReleased: "an app never released on the App Store is known only to Sandbox: try --environment Sandbox"
        case .issuerOrBundleId(let bundleId):
            "the issuer id (--issuer-id) or the bundle id (--bundle-id \(bundleId ?? "?")) "
                + "does not belong to this key's team, or the key was revoked in App Store Connect"
        case .sandboxRefusedToo: "(Sandbox refused it too, so it is not an unreleased app)"
        }
    }

    /// Whether progress and waiting lines are drawn: stderr is a terminal that can redraw a line, no `-q`.
    var drawsOnStderr: Bool { invocation.isStderrTTY && !invocation.quiet && !invocation.dumbTerminal }

    /// The progress line shown now (redrawn after a waiting line).
    private var progressLine: String?
    /// Whether a "waiting for Apple" line is on screen.
    private var waitingShown = false

    /// How long Apple may be silent before the waiting line shows (ms).
    static let silenceShownAfter: Int64 = 1500

    /// A progress line on stderr, only on a terminal.
    func progress(_ text: String) {
        guard drawsOnStderr else { return }
        progressLine = text
        invocation.stderr.write("\r\u{1B}[K" + text)
        try? invocation.stderr.flush()
    }

    func endProgress() {
        guard drawsOnStderr else { return }
        progressLine = nil
        invocation.stderr.write("\r\u{1B}[K")
        try? invocation.stderr.flush()
    }

    /// On a terminal, while `server` has not answered for ``silenceShownAfter``: a line saying iapctl waits
    /// for it, how long, and until when; erased (the progress line, if any, drawn again) when it answers.
    func silent(_ server: APIServer, waitedMs: Int64?) {
        guard drawsOnStderr else { return }
        guard let waited = waitedMs else {
            guard waitingShown else { return }
            waitingShown = false
            invocation.stderr.write("\r\u{1B}[K" + (progressLine ?? ""))
            try? invocation.stderr.flush()
            return
        }
        guard waited >= Self.silenceShownAfter else { return }
        waitingShown = true
        var line = "waiting for Apple (\(server.rawValue))… no answer for \(waited / 1000) s"
        if let deadline = api.deadlineMs { line += " (deadline \(deadline / 1000) s)" }
        // One line that \r can erase: never wider than the terminal.
        let width = invocation.stderr.terminalColumns ?? 80
        invocation.stderr.write("\r\u{1B}[K" + TextWidth.truncate(line, to: max(width - 1, 10)))
        try? invocation.stderr.flush()
    }

    /// Whether to print the signed items as Apple sent them (no `-o` chosen anywhere).
    /// Signed items one per line when the output goes to a pipe or a file without `-o`; on a terminal
    /// the decoded purchases (transaction, product, dates, status) are what a person reads.
    var printsSignedItems: Bool {
        invocation.source(of: StandardOptions.output) == .defaultValue && !invocation.isStdoutTTY
    }

    /// The verifier for items `server` sent: the trust options, accepting that server's environment.
    func verifier(for server: APIServer) throws -> AppStoreVerifier {
        var settings = TrustSettings()
        settings.roots = try TrustSetup.roots(invocation, option: AppleCommands.rootCAOption)
        settings.bundleId = invocation[AppleCommands.bundleIdOption]
        settings.appAppleId = invocation[AppleCommands.appAppleIdOption]
        settings.validationTime = invocation[AppleCommands.atOption]
        do {
            return try settings.appStoreVerifier(for: server)
        } catch {
            throw CLIError(
                .config, "\(error)",
                hint: "decoding Production items needs the app's Apple id: pass --app-apple-id N (or IAPCTL_APP_APPLE_ID)")
        }
    }

    /// Verifies each JWS as `kind`; the first that does not verify is an error (exit 2), so nothing
    /// unverified is ever shown decoded.
    func verified(_ items: [String], as kind: PayloadKind, from server: APIServer, what: String) throws
        -> [VerificationReport]
    {
        let verifier = try verifier(for: server)
        do {
            return try AppleItems.verified(items, as: kind, with: verifier)
        } catch { throw Self.unverified(error, from: server, what: what) }
    }

    /// Verifies each subscription's items of a status answer (see ``AppleItems/verified(_:with:)``).
    func verified(_ items: [SubscriptionStatusItem], from server: APIServer, what: String) throws
        -> [AppleItems.VerifiedStatus]
    {
        let verifier = try verifier(for: server)
        do {
            return try AppleItems.verified(items, with: verifier)
        } catch {
            throw Self.unverified(error.unverified, from: server, what: error.isRenewalInfo ? what + " renewal info" : what)
        }
    }

    static func unverified(_ error: AppleItems.Unverified, from server: APIServer, what: String) -> CLIError {
        CLIError(
            ExitCode(ItemOutcome(error.failure)),
            "\(what) item \(error.index + 1) from \(server.rawValue) does not verify: \(error.failure.message)",
            hint: "nothing was printed; check the trust options (--root-ca, --bundle-id, --app-apple-id), "
                + "or print the signed items (without -o, into a pipe or file) and inspect them with 'iapctl verify'")
    }

    /// Prints signed items one per line (default), or decoded after verification (`-o`).
    func emitTransactions(_ items: [String], from server: APIServer, what: String) throws {
        if printsSignedItems {
            for item in items { invocation.print(item) }
            return
        }
        let reports = try verified(items, as: .transaction, from: server, what: what)
        invocation.emit(
            reports.map { Self.transactionRecord($0, structured: invocation.output.isStructured) }, columns: Self.transactionColumns)
    }

    static let transactionColumns: [Column] = [
        Column("transaction_id", title: "TRANSACTION"), Column("original_transaction_id", title: "ORIGINAL"),
        Column("product_id", title: "PRODUCT"), Column("type", title: "TYPE"),
        Column("purchase_date", title: "PURCHASED"), Column("expires_date", title: "EXPIRES"),
        Column("revocation_date", title: "REVOKED"), Column("app_account_token", title: "ACCOUNT_TOKEN"),
        Column("environment", title: "ENV"),
    ]

    static func transactionRecord(_ report: VerificationReport, structured: Bool) -> Record {
        var r = Record()
        let tx = report.transaction
        r.append("transaction_id", tx?.transactionId)
        r.append("original_transaction_id", tx?.originalTransactionId)
        r.append("product_id", tx?.productId)
        r.append("type", tx?.type?.rawValue)
        r.append("purchase_date", tx?.purchaseDate)
        r.append("expires_date", tx?.expiresDate)
        r.append("revocation_date", tx?.revocationDate)
        r.append("app_account_token", tx?.appAccountToken)
        r.append("environment", tx?.environment)
        if structured { r.append("payload", report.payload ?? .null) }
        return r
    }
}

extension APIClientSetup.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .missing(let settings):
            CLIError(
                .config,
                "the App Store Server API settings are incomplete: "
                    + settings.map { "--\($0.rawValue)" }.joined(separator: ", ") + " not set",
                hint: settings.map(Self.whereToSet).joined(separator: "; ")
                    + "; see which are set, and from where: iapctl apple settings; the App Store Connect steps: "
                    + "iapctl help apple")
        case .credentials(let refusal): refusal.cliError
        case .keyFile(let refusal): refusal.cliError
        case .key(let error): error.cliError
        }
    }
}

extension APIClientSetup.Refusal {
    /// Where `setting` comes from, and what it is.
    static func whereToSet(_ setting: APIClientSetup.Setting) -> String {
        switch setting {
        case .keyFile:
            "--key-file: the In-App Purchase key AuthKey_KEYID.p8 (IAPCTL_APPLE_KEY_FILE, 'apple-key-file' in --config)"
        case .keyId:
            "--key-id: the 10-character id App Store Connect shows next to the key, or the KEYID of the file name "
                + "AuthKey_KEYID.p8 (IAPCTL_APPLE_KEY_ID, 'apple-key-id')"
        case .issuerId:
            "--issuer-id: the UUID above the keys in App Store Connect → Users and Access → Integrations → In-App "
                + "Purchase (IAPCTL_APPLE_ISSUER_ID, 'apple-issuer-id')"
        case .bundleId: "--bundle-id: the app's bundle id (IAPCTL_BUNDLE_ID, 'bundle-id')"
        }
    }
}

extension APIKeyFile.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .inaccessible(let path, let code):
            CLIError(
                .config, "cannot read the key file \(path): \(FileSystem.describe(errno: code))",
                hint: "check --key-file (or IAPCTL_APPLE_KEY_FILE / 'apple-key-file')")
        case .notAFile(let path): CLIError(.config, "the key file \(path) is not a file")
        case .readableByOthers(let path, let mode):
            CLIError(
                .config,
                "the key file \(path) is readable by "
                    + (mode & 0o004 != 0 ? "every user of this machine" : "its group") + " (mode \(String(mode, radix: 8)))",
                hint: "it is a secret only its owner may read: chmod 600 \(path) (run iapctl as its owner; "
                    + "keep it out of version control)")
        case .cannotOpen(let path, let code): Self.unreadable("cannot open \(path): \(FileSystem.describe(errno: code))")
        case .cannotRead(let path, let code): Self.unreadable("cannot read \(path): \(FileSystem.describe(errno: code))")
        case .tooLarge(let path, let maxBytes): Self.unreadable("\(path) is larger than \(maxBytes) bytes")
        }
    }

    static func unreadable(_ why: String) -> CLIError {
        CLIError(.config, "cannot read the key file: \(why)", hint: "check its owner and permissions")
    }
}

extension APICredentials.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .keyId(let keyId): CLIError(.config, "--key-id '\(keyId)' is not a key id (letters and digits, e.g. 2X9R4HXF34)")
        case .issuerId(let issuerId):
            CLIError(.config, "--issuer-id '\(issuerId)' is not a UUID", hint: "copy it from App Store Connect")
        }
    }
}

extension OutputFormat {
    /// JSON or NDJSON: nested values are shown whole.
    var isStructured: Bool { self == .json || self == .ndjson }
}
