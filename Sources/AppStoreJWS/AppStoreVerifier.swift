#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Verifies App Store JWS the way Apple's App Store Server Library does (offline mode), and
/// decodes them: compact JWS → ES256 header with a 3-certificate `x5c` → chain leaf → intermediate
/// → a configured root with Apple's marker OIDs, valid at the validation time → ES256 signature →
/// bundle id, app Apple id (Production), environment → nested JWS with the same rules.
///
/// One verifier parses its roots once and caches verified chains; it is safe to share between
/// threads.
public final class AppStoreVerifier: Sendable {
    /// The settings this verifier applies.
    public let configuration: TrustConfiguration
    private let trust: TrustStore
    private let cache = ChainCache()

    /// Largest accepted JWS, in bytes (Apple's notifications are a few KB).
    public static let maxInputBytes = 1 << 20

    /// Builds a verifier; throws when the configuration cannot be used (e.g. Production without
    /// `appAppleId`, no roots, a root that is not a certificate).
    public init(configuration: TrustConfiguration = TrustConfiguration()) throws(TrustConfigurationError) {
        guard !configuration.roots.isEmpty else { throw .noRoots }
        if configuration.acceptsProduction && configuration.appAppleId == nil { throw .missingAppAppleId }
        var roots: [X509Certificate] = []
        for (index, der) in configuration.roots.enumerated() {
            guard let root = X509Certificate.parse(der: der) else {
                throw .invalidRoot(index: index, reason: "not a DER X.509 certificate")
            }
            roots.append(root)
        }
        self.configuration = configuration
        self.trust = try TrustStore(roots: roots)
    }

    /// Chain-cache counters (hits, misses, entries): how often chain building was skipped.
    public var chainCacheStatistics: (hits: Int, misses: Int, entries: Int) { cache.statistics }

    /// Verifies one raw compact JWS (surrounding whitespace is ignored) and decodes it; the
    /// payload kind is detected.
    public func verify(_ input: String) -> VerificationReport {
        verifyToken(input.trimmed(.spacesAndNewlines), expected: nil, depth: 0)
    }

    /// Verifies one raw compact JWS that must be of `kind` (e.g. transactions a device restored).
    /// A payload whose kind cannot be detected is read as `kind`; one detected as another kind fails
    /// with ``VerificationFailure/Code/invalidPayload``.
    public func verify(_ input: String, as kind: PayloadKind) -> VerificationReport {
        verifyToken(input.trimmed(.spacesAndNewlines), expected: kind == .unknown ? nil : kind, depth: 0)
    }

    // MARK: - One JWS

    private func verifyToken(_ token: Substring, expected: PayloadKind?, depth: Int) -> VerificationReport {
        var report = VerificationReport()
        let size = token.utf8.count
        if size == 0 {
            report.fail(.format, .invalidJWTFormat, "input is empty")
            return report
        }
        if size > Self.maxInputBytes {
            report.fail(.format, .invalidJWTFormat, "input is \(size) bytes; the limit is \(Self.maxInputBytes)")
            return report
        }

        // Segments (scan the contiguous UTF-8 bytes; the generic index walk is slow).
        let utf8 = token.utf8
        var scanned = token
        let dotOffsets: [Int] = scanned.withUTF8 { buffer in
            var offsets: [Int] = []
            guard let base = buffer.baseAddress else { return offsets }
            // memchr (vectorised) rather than a byte loop: a notification is ~10 KB.
            var start = 0
            while start < buffer.count, let hit = memchr(base + start, Int32(UInt8(ascii: ".")), buffer.count - start) {
                let offset = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
                offsets.append(offset)
                start = offset + 1
            }
            return offsets
        }
        guard dotOffsets.count == 2 else {
            let segments = dotOffsets.count + 1
            report.fail(
                .format, .invalidJWTFormat, "not a compact JWS: \(segments) dot-separated segment\(segments == 1 ? "" : "s"), 3 expected")
            return report
        }
        let dots = dotOffsets.map { utf8.index(utf8.startIndex, offsetBy: $0) }
        let headerSegment = token[token.startIndex..<dots[0]]
        let payloadSegment = token[utf8.index(after: dots[0])..<dots[1]]
        let signatureSegment = token[utf8.index(after: dots[1])...]
        guard !headerSegment.isEmpty else {
            report.fail(.format, .invalidJWTFormat, "the header segment is empty")
            return report
        }
        guard !payloadSegment.isEmpty else {
            report.fail(.format, .invalidJWTFormat, "the payload segment is empty")
            return report
        }

        // Header (decoded JSON may come from the cache).
        let key = ChainCache.Key(headerSegment)
        let header: JSONValue
        if let cached = cache.header(for: key) {
            header = cached
        } else {
            guard let bytes = Base64.decodeURL(headerSegment) else {
                report.fail(.format, .invalidJWTFormat, "the header segment is not base64url")
                return report
            }
            guard let json = decodeJSON(bytes, what: "header", into: &report) else { return report }
            header = json
        }
        report.header = header
        // RFC 7515 §4.1.11: `crit` names extensions the recipient must understand; iapctl
        // understands none, so such a JWS is refused (Apple never sends one).
        if let crit = header["crit"] {
            report.fail(
                .format, .invalidJWTFormat, "header crit \(crit.serialized().prefix(80)) names extensions iapctl does not understand")
            return report
        }

        // Payload.
        guard let payloadBytes = Base64.decodeURL(payloadSegment) else {
            report.fail(.format, .invalidJWTFormat, "the payload segment is not base64url")
            return report
        }
        guard let payload = decodeJSON(payloadBytes, what: "payload", into: &report) else { return report }
        report.payload = payload
        report.kind = Self.detectKind(payload)
        if let expected, report.kind == .unknown { report.kind = expected }
        report.pass(.format, "compact JWS: header \(headerSegment.utf8.count) B, payload \(payloadBytes.count) B, \(report.kind.rawValue)")

        if let expected, report.kind != expected {
            report.fail(
                .kind, .invalidPayload, "payload is \(Self.describe(report.kind)), expected \(Self.describe(expected))")
            return report
        }

        // Fields needed before the cryptography: environment and signing date.
        let environment: String?
        let signedDate: Int64?
        do throws(VerificationFailure) {
            let fields = try PayloadFields(payload, path: "")
            environment = try Self.environment(of: report.kind, fields)
            signedDate = try fields.date(report.kind == .appTransaction ? "receiptCreationDate" : "signedDate")
        } catch {
            report.fail(.payload, error.code, error.message)
            return report
        }
        report.environment = environment

        if let environment, AppleEnvironment(rawValue: environment).isUnsignedTesting,
            configuration.environments.contains(environment)
        {
            let why = "environment \(environment): signature and certificate chain are not verified (Apple's libraries skip them)"
            report.skip(.algorithm, why)
            report.skip(.chain, why)
            report.skip(.signature, why)
            report.warnings.append("\(environment) data accepted WITHOUT signature or certificate chain verification")
        } else {
            guard
                verifyCryptography(
                    token: token, key: key, header: header, signatureSegment: signatureSegment,
                    signingInputLength: dotOffsets[1],
                    signedDate: signedDate, into: &report)
            else { return report }
        }

        guard decodeModel(payload, into: &report) else { return report }
        guard checkApp(environment: environment, into: &report) else { return report }
        if depth == 0 { verifyNested(into: &report, depth: depth) }
        return report
    }

    private func decodeJSON(_ bytes: [UInt8], what: String, into report: inout VerificationReport) -> JSONValue? {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            report.fail(.format, .invalidJSON, "the \(what) is not valid JSON: \(error)")
            return nil
        }
        guard case .object = value else {
            report.fail(.format, .invalidJSON, "the \(what) is JSON \(value.typeName), not an object")
            return nil
        }
        return value
    }

    // MARK: - Cryptography

    private func verifyCryptography(
        token: Substring, key: ChainCache.Key, header: JSONValue, signatureSegment: Substring,
        signingInputLength: Int, signedDate: Int64?, into report: inout VerificationReport
    ) -> Bool {
        // Validation time.
        let now = configuration.clock()
        if let signedDate, signedDate > now + configuration.maxFutureSkewMillis {
            report.fail(
                .signedDate, .futureSignedDate,
                "signedDate \(Timestamp.iso8601Millis(signedDate)) is \((signedDate - now) / 1000) s ahead of the clock (\(Timestamp.iso8601Millis(now))); the limit is \(configuration.maxFutureSkewMillis / 1000) s"
            )
            return false
        }
        let (time, label) = configuration.validationTime.instant(signed: signedDate, named: "signedDate", now: now)
        report.validationTime = time
        let seconds = Timestamp.floorDivMod(time, 1000).0

        // Chain: cached when this header's chain is known valid at this time.
        let chain: ValidatedChain
        if let entry = cache.lookup(key, at: seconds) {
            chain = entry.chain
            report.pass(.algorithm, "ES256")
            report.pass(.x5c, "3 certificates")
            report.pass(.chain, "\(chain.leafName) → \(chain.intermediateName) → \(chain.rootName) (trusted root; cached)")
            report.pass(.leafOID, AppleOID.receiptSigning)
            report.pass(.intermediateOID, AppleOID.wwdrIntermediate)
            report.pass(.leafKey, "EC P-256")
            report.pass(
                .validity,
                "\(label); chain valid \(Timestamp.iso8601(chain.windowStart * 1000)) … \(Timestamp.iso8601(chain.windowEnd * 1000))"
            )
        } else {
            guard let certificates = Self.certificates(in: header, into: &report) else { return false }
            let evaluation = trust.evaluate(leaf: certificates[0], intermediate: certificates[1], at: seconds, timeLabel: label)
            report.checks.append(contentsOf: evaluation.checks)
            if let failure = evaluation.failure {
                report.outcome = .refused(failure)
                return false
            }
            guard let validated = evaluation.chain else { return false }
            chain = validated
            cache.insert(key, ChainCache.Entry(header: header, chain: validated))
        }

        // Signature over ASCII(header.payload).
        guard let signature = Base64.decodeURL(signatureSegment) else {
            report.fail(.signature, .invalidJWTFormat, PasteDamage.signatureNotBase64URL)
            return false
        }
        var text = token
        let problem: String? = text.withUTF8 { buffer in
            ES256.verify(
                signature: signature, message: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<signingInputLength]),
                key: chain.leafKey)
        }
        if let problem {
            report.fail(.signature, .invalidSignature, problem)
            return false
        }
        report.pass(.signature, "ES256 by \"\(chain.leafName)\"")
        return true
    }

    /// `alg` and `x5c` checks; the three parsed certificates.
    private static func certificates(in header: JSONValue, into report: inout VerificationReport) -> [X509Certificate]? {
        switch header["alg"] {
        case .string("ES256"):
            report.pass(.algorithm, "ES256")
        case .string(let other):
            report.fail(.algorithm, .unsupportedAlgorithm, "header alg is \"\(other.prefix(40))\"; only ES256 is accepted")
            return nil
        case nil, .null:
            report.fail(.algorithm, .unsupportedAlgorithm, "header has no alg; only ES256 is accepted")
            return nil
        case let other?:
            report.fail(.algorithm, .unsupportedAlgorithm, "header alg is a JSON \(other.typeName); only ES256 is accepted")
            return nil
        }
        guard let x5c = header["x5c"], !x5c.isNull else {
            report.fail(.x5c, .missingX5C, "header has no x5c certificate chain")
            return nil
        }
        guard case .array(let items) = x5c else {
            report.fail(.x5c, .missingX5C, "header x5c is a JSON \(x5c.typeName), not an array")
            return nil
        }
        guard !items.isEmpty else {
            report.fail(.x5c, .missingX5C, "header x5c is empty")
            return nil
        }
        guard items.count == 3 else {
            report.fail(
                .x5c, .invalidChainLength,
                "x5c holds \(items.count) certificate\(items.count == 1 ? "" : "s"); exactly 3 expected (leaf, intermediate, root)")
            return nil
        }
        var certificates: [X509Certificate] = []
        for (i, item) in items.enumerated() {
            guard case .string(let text) = item else {
                report.fail(.x5c, .invalidCertificate, "x5c[\(i)] is a JSON \(item.typeName), not a base64 string")
                return nil
            }
            guard let der = Base64.decodeStandard(text) else {
                report.fail(.x5c, .invalidCertificate, "x5c[\(i)] is not standard base64")
                return nil
            }
            guard let certificate = X509Certificate.parse(der: der) else {
                report.fail(.x5c, .invalidCertificate, "x5c[\(i)] is not a DER X.509 certificate")
                return nil
            }
            certificates.append(certificate)
        }
        report.pass(.x5c, "3 certificates")
        return certificates
    }

    // MARK: - Payload

    /// Kind from the payload's members.
    package static func detectKind(_ payload: JSONValue) -> PayloadKind {
        guard case .object(let members) = payload else { return .unknown }
        func has(_ key: String) -> Bool { members.contains(where: { $0.key == key }) }
        if has("notificationType") { return .notification }
        if has("transactionId") { return .transaction }
        if has("receiptType") || has("applicationVersion") || has("originalApplicationVersion") { return .appTransaction }
        let renewalFields = [
            "autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent", "isInBillingRetryPeriod",
            "priceIncreaseStatus", "gracePeriodExpiresDate", "recentSubscriptionStartDate", "renewalPrice",
            "eligibleWinBackOfferIds",
        ]
        if renewalFields.contains(where: has) { return .renewalInfo }
        return .unknown
    }

    private static func describe(_ kind: PayloadKind) -> String {
        switch kind {
        case .notification: return "a notification"
        case .transaction: return "a transaction"
        case .renewalInfo: return "a renewal info"
        case .appTransaction: return "an AppTransaction"
        case .unknown: return "of unknown kind"
        }
    }

    /// The environment the checks use: notification → data ▸ summary ▸ externalPurchaseToken
    /// (derived from the id prefix) ▸ appData; AppTransaction → receiptType; else `environment`.
    static func environment(of kind: PayloadKind, _ fields: PayloadFields) throws(VerificationFailure) -> String? {
        switch kind {
        case .notification:
            if let data = try fields.object("data") { return try data.string("environment") }
            if let summary = try fields.object("summary") { return try summary.string("environment") }
            if let token = try fields.object("externalPurchaseToken") {
                return ((try token.string("externalPurchaseId") ?? "").hasPrefix("SANDBOX") ? EnvironmentName.sandbox : .production)
                    .rawValue
            }
            if let appData = try fields.object("appData") { return try appData.string("environment") }
            return nil
        case .appTransaction:
            return try fields.string("receiptType")
        default:
            return try fields.string("environment")
        }
    }

    private func decodeModel(_ payload: JSONValue, into report: inout VerificationReport) -> Bool {
        do throws(VerificationFailure) {
            switch report.kind {
            case .notification:
                let model = try NotificationPayload(json: payload)
                report.notification = model
                report.pass(
                    .payload, "notification \(model.notificationType?.rawValue ?? "?")\(model.subtype.map { "/" + $0.rawValue } ?? "")")
            case .transaction:
                let model = try TransactionPayload(json: payload)
                report.transaction = model
                report.pass(.payload, "transaction \(model.transactionId ?? "?")")
            case .renewalInfo:
                let model = try RenewalInfoPayload(json: payload)
                report.renewalInfo = model
                report.pass(.payload, "renewal info of \(model.originalTransactionId ?? "?")")
            case .appTransaction:
                let model = try AppTransactionPayload(json: payload)
                report.appTransaction = model
                report.pass(.payload, "AppTransaction \(model.appTransactionId ?? "")")
            case .unknown:
                report.pass(.payload, "unknown payload kind; fields kept as JSON")
                report.warnings.append("payload kind not recognised: only signature, chain and present identity fields were checked")
            }
            return true
        } catch {
            report.fail(.payload, error.code, error.message)
            return false
        }
    }

    // MARK: - App checks (Apple's order: bundle id, app Apple id, environment)

    private func checkApp(environment: String?, into report: inout VerificationReport) -> Bool {
        var bundleId: String? = nil
        var appAppleId: Int64? = nil
        var carriesBundle = true
        var carriesAppId = false
        switch report.kind {
        case .notification:
            if let identity = report.notification?.appIdentity {
                bundleId = identity.bundleId
                appAppleId = identity.appAppleId
            }
            carriesAppId = true
        case .transaction:
            bundleId = report.transaction?.bundleId
        case .renewalInfo:
            carriesBundle = false
        case .appTransaction:
            bundleId = report.appTransaction?.bundleId
            appAppleId = report.appTransaction?.appAppleId
            carriesAppId = true
        case .unknown:
            bundleId = report.payload?["bundleId"]?.stringValue
            carriesBundle = bundleId != nil
        }

        if !carriesBundle {
            report.skip(.bundleId, report.kind == .renewalInfo ? "renewal info carries no bundle id" : "payload carries no bundle id")
        } else if !AppIdentityCheck.bundleId(
            bundleId, expected: configuration.bundleId, missing: "payload has no bundle id", into: &report)
        {
            return false
        }

        if carriesAppId, environment == EnvironmentName.production.rawValue, configuration.acceptsProduction,
            let expected = configuration.appAppleId
        {
            guard appAppleId == expected else {
                let found = appAppleId.map(String.init) ?? "missing"
                report.fail(.appId, .invalidAppIdentifier, "app Apple id \(found) is not the configured \(expected)")
                return false
            }
            report.pass(.appId, String(expected))
        } else {
            report.skip(
                .appId,
                carriesAppId ? "checked only for Production" : "\(Self.describe(report.kind).dropFirst(2)) carries no app Apple id")
        }

        return AppIdentityCheck.environment(
            .init(
                value: environment, unchecked: environment ?? "none", missing: "payload has no environment",
                subject: { "environment \"\($0.prefix(40))\"" }),
            accepted: configuration.environments, into: &report)
    }

    // MARK: - Nested JWS

    private func verifyNested(into report: inout VerificationReport, depth: Int) {
        var jobs: [(member: NestedMember, jws: String)] = []
        if let data = report.notification?.data {
            if let jws = data.signedTransactionInfo { jobs.append((.signedTransactionInfo, jws)) }
            if let jws = data.signedRenewalInfo { jobs.append((.signedRenewalInfo, jws)) }
        }
        if let jws = report.notification?.appData?.signedAppTransactionInfo {
            jobs.append((.signedAppTransactionInfo, jws))
        }
        for job in jobs {
            let nested = verifyToken(job.jws[...], expected: job.member.kind, depth: depth + 1)
            report.nested.append((member: job.member, report: nested))
            if let failure = nested.failure {
                report.fail(.nested(job.member), failure.code, "\(job.member.rawValue): \(failure.message)")
                return
            }
            report.pass(.nested(job.member), "\(Self.describe(job.member.kind).split(separator: " ").last ?? "") valid")
        }
    }
}
