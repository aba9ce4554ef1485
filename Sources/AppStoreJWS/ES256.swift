import COpenSSL

/// ES256 (ECDSA P-256 with SHA-256) verification of a JOSE signature: raw 64-byte R‖S.
enum ES256 {
    /// The order n of the P-256 group, big-endian.
    private static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// Nil when the signature verifies; otherwise why not.
    static func verify(signature: [UInt8], message: UnsafeRawBufferPointer, key: PublicKey) -> String? {
        verify(signature: signature, message: message, context: key.verifyTemplate, key: key)
    }

    /// Same, starting from a prepared `EVP_DigestVerifyInit` context (copied, so it stays reusable).
    static func verify(
        signature: [UInt8], message: UnsafeRawBufferPointer, context template: VerifyTemplate?, key: PublicKey
    ) -> String? {
        guard signature.count == 64 else {
            if signature.count > 64, signature.first == 0x30 {
                return "signature is \(signature.count) bytes and looks DER-encoded; ES256 in JWS is raw 64-byte R‖S"
            }
            return "signature is \(signature.count) bytes; ES256 needs 64 (R‖S)"
        }
        let r = signature[0..<32], s = signature[32..<64]
        if r.allSatisfy({ $0 == 0 }) { return "signature r is zero" }
        if s.allSatisfy({ $0 == 0 }) { return "signature s is zero" }
        if !lessThanOrder(r) { return "signature r is not below the group order" }
        if !lessThanOrder(s) { return "signature s is not below the group order" }

        defer { OpenSSLErrors.drain() }
        guard let der = derSignature(signature) else { return "could not encode the signature (OpenSSL)" }
        guard let mdctx = EVP_MD_CTX_new() else { return "EVP_MD_CTX_new failed" }
        defer { EVP_MD_CTX_free(mdctx) }
        // Copying a prepared context skips OpenSSL 3's per-init algorithm fetch.
        if let template, EVP_MD_CTX_copy_ex(mdctx, template.pointer) == 1 {
        } else if EVP_DigestVerifyInit(mdctx, nil, FetchedDigest.sha256.pointer, nil, key.pointer) != 1 {
            return "EVP_DigestVerifyInit failed"
        }
        let rc = der.withUnsafeBufferPointer { sig in
            EVP_DigestVerify(
                mdctx, sig.baseAddress, sig.count, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        }
        return rc == 1 ? nil : "ES256 signature does not verify with the leaf certificate's key"
    }

    private static func lessThanOrder(_ value: ArraySlice<UInt8>) -> Bool {
        for (a, b) in zip(value, order) where a != b { return a < b }
        return false
    }

    /// R‖S → DER `ECDSA-Sig-Value` via `ECDSA_SIG_set0` and `i2d_ECDSA_SIG`.
    private static func derSignature(_ raw: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let (rBN, sBN): (OpaquePointer?, OpaquePointer?) = raw.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, 32, nil), BN_bin2bn(buffer.baseAddress! + 32, 32, nil))
        }
        guard let rBN, let sBN else {
            BN_free(rBN)
            BN_free(sBN)
            return nil
        }
        guard ECDSA_SIG_set0(sig, rBN, sBN) == 1 else {
            BN_free(rBN)
            BN_free(sBN)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0, length < 128 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        guard written == length else { return nil }
        return out
    }
}

/// An `EVP_MD_CTX` after `EVP_DigestVerifyInit(SHA-256, key)`, never updated: the starting point
/// every verification with that key copies. Only read after creation, so it may be shared.
final class VerifyTemplate: @unchecked Sendable {
    let pointer: OpaquePointer

    init?(key: OpaquePointer) {
        guard let ctx = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestVerifyInit(ctx, nil, FetchedDigest.sha256.pointer, nil, key) == 1 else {
            EVP_MD_CTX_free(ctx)
            OpenSSLErrors.drain()
            return nil
        }
        pointer = ctx
    }

    deinit { EVP_MD_CTX_free(pointer) }
}
