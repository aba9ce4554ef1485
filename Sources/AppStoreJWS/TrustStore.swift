import COpenSSL

/// A chain that verified: the leaf's key and the window in which every certificate on the
/// path (leaf, intermediate, root) is valid. Any time inside the window gives the same verdict.
final class ValidatedChain: @unchecked Sendable {
    let leafKey: PublicKey
    /// Latest notBefore on the path (seconds).
    let windowStart: Int64
    /// Earliest notAfter on the path (seconds). OpenSSL treats notAfter itself as expired, so the
    /// window is [windowStart, windowEnd).
    let windowEnd: Int64
    let leafName: String
    let intermediateName: String
    let rootName: String

    init(leafKey: PublicKey, windowStart: Int64, windowEnd: Int64, leafName: String, intermediateName: String, rootName: String) {
        self.leafKey = leafKey
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.leafName = leafName
        self.intermediateName = intermediateName
        self.rootName = rootName
    }

    func contains(seconds: Int64) -> Bool { seconds >= windowStart && seconds < windowEnd }
}

/// The configured trust anchors in an OpenSSL `X509_STORE` (built once per verifier) and
/// Apple's chain policy: leaf = x5c[0] → intermediate = x5c[1] → one configured root.
package final class TrustStore: @unchecked Sendable {
    private let store: OpaquePointer
    let roots: [X509Certificate]
    private let receiptOID: OwnedObject
    private let wwdrOID: OwnedObject

    /// Result of evaluating one (leaf, intermediate) pair at one time.
    struct Evaluation {
        var checks: [VerificationReport.Check] = []
        var failure: VerificationFailure?
        var chain: ValidatedChain?
    }

    init(roots: [X509Certificate]) throws(TrustConfigurationError) {
        self.store = try Self.rootStore(roots)
        self.roots = roots
        guard let receipt = OwnedObject(oid: AppleOID.receiptSigning), let wwdr = OwnedObject(oid: AppleOID.wwdrIntermediate) else {
            throw TrustConfigurationError.openSSL("OBJ_txt2obj failed")
        }
        receiptOID = receipt
        wwdrOID = wwdr
    }

    deinit { X509_STORE_free(store) }

    /// An OpenSSL store of the configured roots (the caller frees it), for the JWS and the receipt
    /// verifier alike. A duplicate root is harmless; anything else is a configuration problem.
    package static func rootStore(_ roots: [X509Certificate]) throws(TrustConfigurationError) -> OpaquePointer {
        guard let store = X509_STORE_new() else {
            OpenSSLErrors.drain()
            throw TrustConfigurationError.openSSL("X509_STORE_new failed")
        }
        for (index, root) in roots.enumerated() where X509_STORE_add_cert(store, root.pointer) != 1 {
            let reasons = OpenSSLErrors.drain()
            if !reasons.contains(where: { $0.contains("already in hash table") }) {
                X509_STORE_free(store)
                throw TrustConfigurationError.invalidRoot(index: index, reason: reasons.first ?? "X509_STORE_add_cert failed")
            }
        }
        return store
    }

    /// Builds and checks the path at `seconds` and applies Apple's OID and key policy.
    /// Check order: chain, leaf OID, intermediate OID, leaf key, validity.
    func evaluate(leaf: X509Certificate, intermediate: X509Certificate, at seconds: Int64, timeLabel: String) -> Evaluation {
        var result = Evaluation()
        let first = runVerify(leaf: leaf, intermediate: intermediate, seconds: seconds, checkTime: true)
        var timeError: String? = nil
        var path: PathInfo
        switch first {
        case .success(let info):
            path = info
        case .failure(let error) where error.isTimeError:
            timeError = error.describe(leaf: leaf, intermediate: intermediate)
            switch runVerify(leaf: leaf, intermediate: intermediate, seconds: seconds, checkTime: false) {
            case .success(let info): path = info
            case .failure(let other):
                return untrusted(other, leaf: leaf, intermediate: intermediate, into: result)
            }
        case .failure(let error):
            return untrusted(error, leaf: leaf, intermediate: intermediate, into: result)
        }
        result.checks.append(
            .init(
                .chain, .passed, "\(leaf.subjectName) → \(intermediate.subjectName) → \(path.rootName) (trusted root)"))

        guard leaf.hasExtension(receiptOID) else {
            result.checks.append(.init(.leafOID, .failed, "leaf lacks \(AppleOID.receiptSigning)"))
            result.failure = VerificationFailure(
                .missingLeafOID,
                "leaf certificate \"\(leaf.subjectName)\" lacks Apple's receipt-signing extension \(AppleOID.receiptSigning)")
            return result
        }
        result.checks.append(.init(.leafOID, .passed, AppleOID.receiptSigning))

        guard intermediate.hasExtension(wwdrOID) else {
            result.checks.append(.init(.intermediateOID, .failed, "intermediate lacks \(AppleOID.wwdrIntermediate)"))
            result.failure = VerificationFailure(
                .missingIntermediateOID,
                "intermediate certificate \"\(intermediate.subjectName)\" lacks Apple's WWDR extension \(AppleOID.wwdrIntermediate)")
            return result
        }
        result.checks.append(.init(.intermediateOID, .passed, AppleOID.wwdrIntermediate))

        guard let key = leaf.p256PublicKey() else {
            let description = leaf.keyDescription()
            result.checks.append(.init(.leafKey, .failed, description))
            result.failure = VerificationFailure(.invalidCertificate, "leaf key is \(description), ES256 needs EC P-256")
            return result
        }
        result.checks.append(.init(.leafKey, .passed, "EC P-256"))

        if let timeError {
            result.checks.append(.init(.validity, .failed, "\(timeLabel): \(timeError)"))
            result.failure = VerificationFailure(.certificateExpiredOrNotYetValid, "\(timeError) (\(timeLabel))")
            return result
        }
        result.checks.append(
            .init(
                .validity, .passed,
                "\(timeLabel); chain valid \(Timestamp.iso8601(path.windowStart * 1000)) … \(Timestamp.iso8601(path.windowEnd * 1000))"
            ))
        result.chain = ValidatedChain(
            leafKey: key, windowStart: path.windowStart, windowEnd: path.windowEnd,
            leafName: leaf.subjectName, intermediateName: intermediate.subjectName, rootName: path.rootName)
        return result
    }

    private func untrusted(
        _ error: VerifyError, leaf: X509Certificate, intermediate: X509Certificate, into result: Evaluation
    ) -> Evaluation {
        var result = result
        let text = error.describe(leaf: leaf, intermediate: intermediate)
        result.checks.append(.init(.chain, .failed, text))
        result.failure = VerificationFailure(.untrustedChain, "certificate chain not trusted: \(text)")
        return result
    }

    struct PathInfo {
        var windowStart: Int64
        var windowEnd: Int64
        var rootName: String
    }

    struct VerifyError: Error {
        var code: Int32
        var depth: Int32
        var message: String

        var isTimeError: Bool { code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID }

        func describe(leaf: X509Certificate, intermediate: X509Certificate) -> String {
            let which: String
            switch depth {
            case 0: which = "leaf \"\(leaf.subjectName)\""
            case 1: which = "intermediate \"\(intermediate.subjectName)\""
            case 2: which = "root"
            case -1: which = "chain"
            default: which = "certificate at depth \(depth)"
            }
            return "\(which): \(message)"
        }
    }

    private func runVerify(
        leaf: X509Certificate, intermediate: X509Certificate, seconds: Int64, checkTime: Bool
    ) -> Result<PathInfo, VerifyError> {
        defer { OpenSSLErrors.drain() }
        guard let ctx = X509_STORE_CTX_new() else {
            return .failure(VerifyError(code: -1, depth: -1, message: "X509_STORE_CTX_new failed"))
        }
        defer { X509_STORE_CTX_free(ctx) }
        guard let untrusted = OPENSSL_sk_new_null() else {
            return .failure(VerifyError(code: -1, depth: -1, message: "OPENSSL_sk_new_null failed"))
        }
        // The stack does not own its element; freeing it leaves the certificate alone.
        defer { OPENSSL_sk_free(untrusted) }
        guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.pointer)) > 0 else {
            return .failure(VerifyError(code: -1, depth: -1, message: "OPENSSL_sk_push failed"))
        }
        guard X509_STORE_CTX_init(ctx, store, leaf.pointer, untrusted) == 1 else {
            return .failure(VerifyError(code: -1, depth: -1, message: "X509_STORE_CTX_init failed"))
        }
        guard let param = X509_STORE_CTX_get0_param(ctx) else {
            return .failure(VerifyError(code: -1, depth: -1, message: "X509_STORE_CTX_get0_param failed"))
        }
        // Apple's own test certificates lack AKI/SKI: strict mode stays off.
        guard X509_VERIFY_PARAM_clear_flags(param, UInt(X509_V_FLAG_X509_STRICT)) == 1 else {
            return .failure(VerifyError(code: -1, depth: -1, message: "X509_VERIFY_PARAM_clear_flags failed"))
        }
        if checkTime {
            X509_VERIFY_PARAM_set_time(param, time_t(seconds))
        } else if X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_NO_CHECK_TIME)) != 1 {
            return .failure(VerifyError(code: -1, depth: -1, message: "X509_VERIFY_PARAM_set_flags failed"))
        }
        X509_STORE_CTX_set_verify_cb(ctx, appleVerifyCallback)
        let rc = X509_verify_cert(ctx)
        guard rc == 1 else {
            let code = X509_STORE_CTX_get_error(ctx)
            let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            return .failure(VerifyError(code: code, depth: X509_STORE_CTX_get_error_depth(ctx), message: message))
        }
        guard let chain = X509_STORE_CTX_get0_chain(ctx) else {
            return .failure(VerifyError(code: -1, depth: -1, message: "no chain"))
        }
        let count = OPENSSL_sk_num(chain)
        // The path must be exactly leaf → x5c[1] → root: a leaf issued directly by a root, or
        // an intermediate that is itself an anchor, is not Apple's shape.
        guard count == 3, let middle = OPENSSL_sk_value(chain, 1), let top = OPENSSL_sk_value(chain, 2),
            X509_cmp(OpaquePointer(middle), intermediate.pointer) == 0
        else {
            return .failure(
                VerifyError(
                    code: -1, depth: -1, message: "path is not leaf → x5c[1] → configured root (length \(count))"))
        }
        var start = Int64.min
        var end = Int64.max
        for i in 0..<count {
            guard let raw = OPENSSL_sk_value(chain, i) else { continue }
            let cert = OpaquePointer(raw)
            guard let nb = X509Certificate.seconds(X509_get0_notBefore(cert)),
                let na = X509Certificate.seconds(X509_get0_notAfter(cert))
            else {
                return .failure(VerifyError(code: -1, depth: Int32(i), message: "unreadable validity dates"))
            }
            start = max(start, nb)
            end = min(end, na)
        }
        return .success(
            PathInfo(windowStart: start, windowEnd: end, rootName: X509Certificate.describe(X509_get_subject_name(OpaquePointer(top)))))
    }
}

/// Accepts "unhandled critical extension" only when the unhandled critical extensions of
/// the current certificate are Apple's marker OIDs (which the policy checks explicitly).
package let appleVerifyCallback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { ok, ctx in
    if ok == 1 { return 1 }
    guard let ctx, X509_STORE_CTX_get_error(ctx) == X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION,
        let cert = X509_STORE_CTX_get_current_cert(ctx)
    else { return 0 }
    let count = X509_get_ext_count(cert)
    for i in 0..<count {
        guard let ext = X509_get_ext(cert, i) else { return 0 }
        guard X509_EXTENSION_get_critical(ext) == 1, X509_supported_extension(ext) == 0 else { continue }
        var buffer = [CChar](repeating: 0, count: 80)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), X509_EXTENSION_get_object(ext), 1)
        guard length > 0 else { return 0 }
        let oid = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if oid != AppleOID.receiptSigning && oid != AppleOID.wwdrIntermediate { return 0 }
    }
    X509_STORE_CTX_set_error(ctx, X509_V_OK)
    return 1
}
