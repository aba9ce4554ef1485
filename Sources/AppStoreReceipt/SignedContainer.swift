import COpenSSL

#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

/// A parsed PKCS#7 (CMS) signedData of `data` with exactly one signer and its content attached:
/// the outer shape of every StoreKit 1 receipt. Owns its OpenSSL handles.
///
/// The container itself may be BER (Xcode writes indefinite lengths); the content inside is then
/// decoded by the strict ``DERReader``.
final class SignedContainer {
    private let cms: OpaquePointer
    /// The certificates the receipt carries (owned stack, never trusted by themselves).
    private let certificates: OpaquePointer
    /// The signed content: the receipt payload.
    let content: [UInt8]

    /// Parses `der`; throws ``VerificationFailure/Code/invalidContainer`` with the reason.
    init(der: [UInt8]) throws(VerificationFailure) {
        defer { OpenSSLErrors.drain() }
        func refuse(_ why: String) -> VerificationFailure { VerificationFailure(.invalidContainer, why) }
        guard !der.isEmpty else { throw refuse("input is empty") }
        var parsed: OpaquePointer? = nil
        let consumed: Int = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            parsed = d2i_CMS_ContentInfo(nil, &cursor, buffer.count)
            guard let cursor, let base = buffer.baseAddress else { return -1 }
            return cursor - base
        }
        guard let parsed else { throw refuse("not a PKCS#7 structure (\(OpenSSLErrors.drain().first ?? "unparsable"))") }
        guard consumed == der.count else {
            CMS_ContentInfo_free(parsed)
            throw refuse("\(der.count - consumed) trailing byte(s) after the PKCS#7 structure")
        }
        guard OBJ_obj2nid(CMS_get0_type(parsed)) == NID_pkcs7_signed else {
            CMS_ContentInfo_free(parsed)
            throw refuse("PKCS#7 content type is not signedData")
        }
        guard OBJ_obj2nid(CMS_get0_eContentType(parsed)) == NID_pkcs7_data else {
            CMS_ContentInfo_free(parsed)
            throw refuse("signed content type is not data (a receipt wrapped twice?)")
        }
        guard let slot = CMS_get0_content(parsed), let octets = slot.pointee, let bytes = ASN1_STRING_get0_data(octets) else {
            CMS_ContentInfo_free(parsed)
            throw refuse("the signed content is missing (detached signature)")
        }
        let signerCount = CMS_get0_SignerInfos(parsed).map { OPENSSL_sk_num($0) } ?? 0
        guard signerCount == 1 else {
            CMS_ContentInfo_free(parsed)
            throw refuse("\(signerCount) signers; a receipt has exactly 1")
        }
        guard let certs = CMS_get1_certs(parsed) else {
            CMS_ContentInfo_free(parsed)
            throw refuse("the receipt carries no certificates")
        }
        content = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(octets))))
        cms = parsed
        certificates = certs
        if let problem = BERShape.problem(der) { throw refuse("not a faithful encoding: \(problem)") }
        if let problem = Self.unsignedFieldProblem(der) { throw refuse(problem) }
    }

    /// The parts of signedData no signature covers must be exactly what the signature implies:
    /// version 1, one digest algorithm equal to the signer's, no CRLs. (Otherwise a changed byte
    /// there would go unnoticed.)
    private static func unsignedFieldProblem(_ der: [UInt8]) -> String? {
        var parsed: OpaquePointer? = nil
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            parsed = OpaquePointer(d2i_PKCS7(nil, &cursor, buffer.count))
        }
        guard let parsed else { return "not a PKCS#7 structure" }
        let p7 = UnsafeMutablePointer<PKCS7>(parsed)
        defer { PKCS7_free(p7) }
        guard let signed = p7.pointee.d.sign else { return "no signedData" }
        guard ASN1_INTEGER_get(signed.pointee.version) == 1 else { return "signedData version is not 1" }
        guard signed.pointee.crl == nil else { return "signedData carries CRLs; receipts carry none" }
        guard let algorithms = signed.pointee.md_algs, OPENSSL_sk_num(algorithms) == 1,
            let listed = OPENSSL_sk_value(algorithms, 0)
        else { return "signedData must list exactly one digest algorithm" }
        guard let infos = signed.pointee.signer_info, OPENSSL_sk_num(infos) == 1,
            let info = OPENSSL_sk_value(infos, 0)
        else { return "signedData must have exactly one signer" }
        let signerInfo = info.assumingMemoryBound(to: PKCS7_SIGNER_INFO.self)
        guard ASN1_INTEGER_get(signerInfo.pointee.version) == 1 else { return "signer info version is not 1" }
        guard X509_ALGOR_cmp(listed.assumingMemoryBound(to: X509_ALGOR.self), signerInfo.pointee.digest_alg) == 0 else {
            return "the listed digest algorithm is not the signer's"
        }
        // Algorithm parameters (not covered by the signature) are NULL or absent for RSA and SHA.
        for (what, algorithm) in [("digest", signerInfo.pointee.digest_alg), ("signature", signerInfo.pointee.digest_enc_alg)] {
            var type: Int32 = 0
            var value: UnsafeRawPointer? = nil
            X509_ALGOR_get0(nil, &type, &value, algorithm)
            guard type == V_ASN1_NULL || type == V_ASN1_UNDEF else { return "the \(what) algorithm has unexpected parameters" }
        }
        return nil
    }

    deinit {
        let count = OPENSSL_sk_num(certificates)
        for i in 0..<count { X509_free(OpaquePointer(OPENSSL_sk_value(certificates, i))) }
        OPENSSL_sk_free(certificates)
        CMS_ContentInfo_free(cms)
    }

    /// How many certificates the receipt carries.
    var certificateCount: Int { Int(OPENSSL_sk_num(certificates)) }

    /// Verifies the signature over the content with the signer's certificate (taken from the
    /// receipt; trust is decided separately). Returns the signer, or why it failed.
    func verifySignature() -> Result<X509Certificate, VerificationFailure> {
        defer { OpenSSLErrors.drain() }
        guard let sink = BIO_new(BIO_s_null()) else { return .failure(VerificationFailure(.invalidSignature, "BIO_new failed")) }
        defer { BIO_free(sink) }
        let flags = UInt32(CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY)
        guard CMS_verify(cms, nil, nil, nil, sink, flags) == 1 else {
            let reasons = OpenSSLErrors.drain()
            return .failure(
                VerificationFailure(.invalidSignature, "the signature does not verify (\(reasons.first ?? "CMS_verify failed"))"))
        }
        guard let signers = CMS_get0_signers(cms) else {
            return .failure(VerificationFailure(.invalidSignature, "no signer certificate"))
        }
        defer { OPENSSL_sk_free(signers) }
        guard OPENSSL_sk_num(signers) == 1, let raw = OPENSSL_sk_value(signers, 0) else {
            return .failure(VerificationFailure(.invalidSignature, "not exactly one signer certificate"))
        }
        guard let signer = X509Certificate(copying: OpaquePointer(raw)) else {
            return .failure(VerificationFailure(.invalidSignature, "unreadable signer certificate"))
        }
        return .success(signer)
    }

    /// The subject of the first carried certificate that is not byte for byte one of `path`, if any.
    func certificatesOffPath(_ path: [X509Certificate]) -> String? {
        for i in 0..<OPENSSL_sk_num(certificates) {
            guard let raw = OPENSSL_sk_value(certificates, i), let carried = X509Certificate(copying: OpaquePointer(raw)) else {
                return "unreadable"
            }
            if !path.contains(where: { $0.der == carried.der }) { return carried.subjectName }
        }
        return nil
    }

    /// The receipt's certificates as an untrusted stack for chain building (borrowed).
    func withUntrusted<T>(_ body: (OpaquePointer) -> T) -> T { body(certificates) }
}
