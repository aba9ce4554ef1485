import COpenSSL

#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// Verifies StoreKit 1 app receipts offline and decodes them: PKCS#7 signedData → signature over
/// the content by the signer's certificate → strict DER payload → chain signer → intermediate →
/// a configured root at the receipt's creation date, with Apple's OIDs on signer and intermediate
/// → bundle id → receipt type (environment).
///
/// SHA-1 (2015–2023) and SHA-256 chains verify alike. A self-signed signer (Xcode's "StoreKit"
/// certificate) is accepted only when it is itself one of the configured roots.
/// Safe to share between threads (the trust store is read-only after `init`).
public final class ReceiptVerifier: @unchecked Sendable {
    public let trust: ReceiptTrust
    private let store: OpaquePointer
    private let receiptOID: OwnedObject
    private let wwdrOID: OwnedObject

    /// Largest accepted receipt (DER bytes).
    public static let maxInputBytes = AppReceipt.maxPayloadBytes + (64 << 10)

    /// Builds a verifier; throws when a root is not a certificate or there is none.
    public init(trust: ReceiptTrust = ReceiptTrust()) throws(TrustConfigurationError) {
        guard !trust.roots.isEmpty else { throw .noRoots }
        var roots: [X509Certificate] = []
        for (index, der) in trust.roots.enumerated() {
            guard let root = X509Certificate(der: der) else {
                throw .invalidRoot(index: index, reason: "not a DER X.509 certificate")
            }
            roots.append(root)
        }
        let store = try TrustStore.rootStore(roots)
        guard let receipt = OwnedObject(oid: AppleOID.receiptSigning),
            let wwdr = OwnedObject(oid: trust.intermediateOID ?? AppleOID.wwdrIntermediate)
        else {
            X509_STORE_free(store)
            throw .openSSL("OBJ_txt2obj failed")
        }
        self.trust = trust
        self.store = store
        receiptOID = receipt
        wwdrOID = wwdr
    }

    deinit { X509_STORE_free(store) }

    /// Verifies a receipt given as base64 text (surrounding whitespace and line breaks ignored).
    public func verify(base64 text: String) -> ReceiptReport {
        guard let der = ReceiptInput.der(fromBase64: text) else {
            var report = ReceiptReport()
            report.fail(.format, .invalidContainer, "the receipt is not standard base64")
            return report
        }
        return verify(der: der)
    }

    /// Verifies a receipt given as DER bytes.
    public func verify(der: [UInt8]) -> ReceiptReport {
        var report = ReceiptReport()
        guard der.count <= Self.maxInputBytes else {
            report.fail(.format, .invalidContainer, "receipt is \(der.count) bytes; the limit is \(Self.maxInputBytes)")
            return report
        }
        let container: SignedContainer
        do {
            container = try SignedContainer(der: der)
        } catch {
            report.fail(.format, error.code, error.message)
            return report
        }
        report.pass(
            .format, "PKCS#7 signedData, \(der.count) B, content \(container.content.count) B, \(container.certificateCount) certificates")

        let signer: X509Certificate
        switch container.verifySignature() {
        case .failure(let failure):
            report.fail(.signature, failure.code, failure.message)
            return report
        case .success(let certificate):
            signer = certificate
            report.pass(.signature, "by \"\(signer.subjectName)\"")
        }

        let receipt: AppReceipt
        do {
            receipt = try AppReceipt(der: container.content)
        } catch {
            report.fail(.payload, .invalidPayload, "the receipt payload is not valid DER: \(error)")
            return report
        }
        report.receipt = receipt
        report.pass(
            .payload,
            "\(receipt.receiptType ?? "no type"), \(receipt.bundleId ?? "no bundle id"), \(receipt.inApp.count) in-app entr\(receipt.inApp.count == 1 ? "y" : "ies")"
                + (container.content.first == 0x04 ? " (unwrapped from an extra OCTET STRING)" : "")
        )

        guard let time = validationTime(receipt, into: &report) else { return report }
        guard checkChain(container, signer: signer, at: time, into: &report) else { return report }
        guard checkApp(receipt, into: &report) else { return report }
        return report
    }

    // MARK: - Time

    private func validationTime(_ receipt: AppReceipt, into report: inout ReceiptReport) -> (ms: Int64, label: String)? {
        let now = trust.clock()
        guard let created = receipt.creationDate else {
            report.fail(.creationDate, .missingCreationDate, "the receipt has no creation date (field 12)")
            return nil
        }
        guard created <= now + trust.maxFutureSkewMillis else {
            report.fail(
                .creationDate, .futureCreationDate,
                "creation date \(Timestamp.iso8601(created)) is \((created - now) / 1000) s ahead of the clock (\(Timestamp.iso8601(now)))"
            )
            return nil
        }
        report.pass(.creationDate, Timestamp.iso8601(created))
        let result = trust.validationTime.instant(signed: created, named: "creation date", now: now)
        report.validationTime = result.0
        return result
    }

    // MARK: - Chain

    private func checkChain(
        _ container: SignedContainer, signer: X509Certificate, at time: (ms: Int64, label: String), into report: inout ReceiptReport
    ) -> Bool {
        let seconds = time.ms >= 0 ? time.ms / 1000 : (time.ms - 999) / 1000
        var timeError: String? = nil
        let path: [X509Certificate]
        switch container.withUntrusted({ buildPath(signer: signer, untrusted: $0, seconds: seconds, checkTime: true) }) {
        case .success(let found):
            path = found
        case .failure(let error) where error.isTimeError:
            timeError = error.message
            switch container.withUntrusted({ buildPath(signer: signer, untrusted: $0, seconds: seconds, checkTime: false) }) {
            case .success(let found): path = found
            case .failure(let other):
                report.fail(.chain, .untrustedChain, "certificate chain not trusted: \(other.message)", detail: other.message)
                return false
            }
        case .failure(let error):
            report.fail(.chain, .untrustedChain, "certificate chain not trusted: \(error.message)", detail: error.message)
            return false
        }

        if let stray = container.certificatesOffPath(path) {
            report.fail(
                .chain, .untrustedChain,
                "the receipt carries certificate \"\(stray)\", which is not on its verified chain (altered or foreign)")
            return false
        }
        if path.count == 1 {
            // Only a configured self-signed certificate ends a path of one: Xcode's StoreKit testing.
            report.isSelfSigned = true
            report.pass(.chain, "\"\(signer.subjectName)\" is self-signed and trusted explicitly (--receipt-root-ca)")
            let why = "self-signed test certificate: Apple's OIDs do not apply"
            report.skip(.leafOID, why)
            report.skip(.intermediateOID, why)
            report.warnings.append(
                "signed by the self-signed \"\(signer.subjectName)\" certificate you trusted explicitly (Xcode StoreKit testing), not by Apple"
            )
        } else {
            guard path.count == 3 else {
                report.fail(
                    .chain, .untrustedChain,
                    "certificate chain not trusted: path is not signer → intermediate → configured root (length \(path.count))")
                return false
            }
            report.pass(.chain, path.map { "\"\($0.subjectName)\"" }.joined(separator: " → ") + " (trusted root)")
            guard signer.hasExtension(receiptOID) else {
                report.fail(
                    .leafOID, .missingLeafOID,
                    "signer \"\(signer.subjectName)\" lacks Apple's receipt-signing extension \(AppleOID.receiptSigning)")
                return false
            }
            report.pass(.leafOID, AppleOID.receiptSigning)
            if trust.intermediateOID == nil {
                report.skip(.intermediateOID, "not required by this configuration")
            } else if !path[1].hasExtension(wwdrOID) {
                report.fail(
                    .intermediateOID, .missingIntermediateOID,
                    "intermediate \"\(path[1].subjectName)\" lacks the WWDR extension \(trust.intermediateOID ?? "")")
                return false
            } else {
                report.pass(.intermediateOID, trust.intermediateOID ?? "")
            }
        }

        if let timeError {
            report.fail(.validity, .certificateExpiredOrNotYetValid, "\(timeError) (\(time.label))", detail: "\(time.label): \(timeError)")
            return false
        }
        let start = path.compactMap(\.notBefore).max() ?? 0
        let end = path.compactMap(\.notAfter).min() ?? 0
        report.pass(
            .validity,
            "\(time.label); chain valid \(Timestamp.iso8601(start * 1000)) … \(Timestamp.iso8601(end * 1000))")
        return true
    }

    private struct PathError: Error {
        var code: Int32
        var message: String
        var isTimeError: Bool { code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID }
    }

    /// Builds signer → … → configured root with OpenSSL at `seconds` (or with the time unchecked).
    private func buildPath(
        signer: X509Certificate, untrusted: OpaquePointer, seconds: Int64, checkTime: Bool
    ) -> Result<[X509Certificate], PathError> {
        defer { OpenSSLErrors.drain() }
        func internalError(_ what: String) -> Result<[X509Certificate], PathError> { .failure(PathError(code: -1, message: what)) }
        guard let ctx = X509_STORE_CTX_new() else { return internalError("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, signer.pointer, untrusted) == 1, let param = X509_STORE_CTX_get0_param(ctx) else {
            return internalError("X509_STORE_CTX_init failed")
        }
        // Apple's older certificates lack AKI/SKI: strict mode stays off.
        _ = X509_VERIFY_PARAM_clear_flags(param, UInt(X509_V_FLAG_X509_STRICT))
        if checkTime {
            X509_VERIFY_PARAM_set_time(param, time_t(seconds))
        } else if X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_NO_CHECK_TIME)) != 1 {
            return internalError("X509_VERIFY_PARAM_set_flags failed")
        }
        X509_STORE_CTX_set_verify_cb(ctx, appleVerifyCallback)
        guard X509_verify_cert(ctx) == 1 else {
            let code = X509_STORE_CTX_get_error(ctx)
            let depth = X509_STORE_CTX_get_error_depth(ctx)
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            let which: String
            switch depth {
            case 0: which = "signer \"\(signer.subjectName)\""
            case 1: which = "intermediate"
            case 2: which = "root"
            default: which = "certificate at depth \(depth)"
            }
            return .failure(PathError(code: code, message: "\(which): \(reason)"))
        }
        guard let chain = X509_STORE_CTX_get0_chain(ctx) else { return internalError("no chain") }
        var path: [X509Certificate] = []
        for i in 0..<OPENSSL_sk_num(chain) {
            guard let raw = OPENSSL_sk_value(chain, i), let certificate = X509Certificate(copying: OpaquePointer(raw)) else {
                return internalError("unreadable chain certificate")
            }
            path.append(certificate)
        }
        return .success(path)
    }

    // MARK: - App checks

    private func checkApp(_ receipt: AppReceipt, into report: inout ReceiptReport) -> Bool {
        guard
            AppIdentityCheck.bundleId(
                receipt.bundleId, expected: trust.bundleId, missing: "the receipt has no bundle id (field 2)", into: &report)
        else { return false }
        let type = receipt.receiptType
        return AppIdentityCheck.environment(
            .init(
                value: type == nil ? nil : receipt.environment, unchecked: type ?? "no receipt type",
                missing: "the receipt has no receipt type (field 0)",
                subject: { "receipt type \"\((type ?? "").prefix(40))\" (\($0))" },
                passed: { type == $0 ? $0 : "\(type ?? "") (\($0))" }),
            accepted: trust.environments, into: &report)
    }
}
