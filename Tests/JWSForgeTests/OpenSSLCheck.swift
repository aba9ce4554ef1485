import COpenSSL
import Foundation
import IAPFoundation
import JWSForge

/// Independent OpenSSL checks used by the tests (X509_verify_cert, extension lookup, ES256 verification).
enum OpenSSLCheck {
    /// Parses DER into an X509* (caller frees).
    static func x509(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer in
            var p = buffer.baseAddress
            return d2i_X509(nil, &p, buffer.count)
        }
    }

    /// Runs X509_verify_cert(leaf, untrusted: [intermediate], trusted: [root]) at `atSeconds`, strict mode;
    /// returns the X509_V_* code (0 = OK).
    static func verifyChain(
        leaf leafDER: [UInt8], intermediate intermediateDER: [UInt8], root rootDER: [UInt8],
        atSeconds: Int64 = 1_760_000_000, strict: Bool = true
    ) -> Int32 {
        guard let leaf = x509(leafDER), let intermediate = x509(intermediateDER), let root = x509(rootDER) else {
            ERR_clear_error()
            return -1
        }
        defer {
            X509_free(leaf)
            X509_free(intermediate)
            X509_free(root)
        }
        let store = X509_STORE_new()!
        defer { X509_STORE_free(store) }
        precondition(X509_STORE_add_cert(store, root) == 1)
        let untrusted = OPENSSL_sk_new_null()!
        defer { OPENSSL_sk_free(untrusted) }
        precondition(OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate)) > 0)
        let ctx = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(ctx) }
        precondition(X509_STORE_CTX_init(ctx, store, leaf, untrusted) == 1)
        X509_STORE_CTX_set_time(ctx, 0, time_t(atSeconds))
        if strict { X509_STORE_CTX_set_flags(ctx, UInt(X509_V_FLAG_X509_STRICT)) }
        let rc = X509_verify_cert(ctx)
        let error = X509_STORE_CTX_get_error(ctx)
        ERR_clear_error()
        return rc == 1 ? 0 : (error == 0 ? -2 : error)
    }

    /// Whether the DER certificate carries extension `oid`, and whether it is critical.
    static func hasExtension(_ der: [UInt8], oid: String) -> (present: Bool, critical: Bool, value: [UInt8]) {
        guard let cert = x509(der) else { return (false, false, []) }
        defer { X509_free(cert) }
        let object = OBJ_txt2obj(oid, 1)!
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(cert, object, -1)
        guard index >= 0, let ext = X509_get_ext(cert, index) else { return (false, false, []) }
        let data = X509_EXTENSION_get_data(ext)!
        let bytes = Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: Int(ASN1_STRING_length(data))))
        return (true, X509_EXTENSION_get_critical(ext) == 1, bytes)
    }

    /// Bits and curve name of the certificate's public key.
    static func keyInfo(_ der: [UInt8]) -> (bits: Int32, curve: String) {
        guard let cert = x509(der) else { return (0, "") }
        defer { X509_free(cert) }
        let key = X509_get0_pubkey(cert)!
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        _ = EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &length)
        let bytes = name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return (EVP_PKEY_get_bits(key), String(decoding: bytes, as: UTF8.self))
    }

    /// Verifies the compact JWS's ES256 (raw R‖S) signature over `header.payload` with the certificate's key.
    static func verifyES256(jws: String, certificate der: [UInt8]) -> Bool {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let raw = Base64.decodeURL(parts[2]), raw.count == 64,
            let cert = x509(der)
        else { return false }
        defer { X509_free(cert) }
        guard let der = derSignature(raw: raw) else { return false }
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let ctx = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, X509_get0_pubkey(cert)) == 1 else { return false }
        let rc = EVP_DigestVerify(ctx, der, der.count, input, input.count)
        ERR_clear_error()
        return rc == 1
    }

    /// JOSE R‖S → DER ECDSA-Sig-Value.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        let half = raw.count / 2
        let sig = ECDSA_SIG_new()!
        defer { ECDSA_SIG_free(sig) }
        let r = BN_bin2bn(raw, Int32(half), nil)
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + half, Int32(half), nil) }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else { return nil }
        let length = i2d_ECDSA_SIG(sig, nil)
        var out = [UInt8](repeating: 0, count: Int(length))
        _ = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var p = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &p)
        }
        return out
    }

    /// Decodes one base64url JWS segment as a JSON object.
    static func json(segment: String) -> [String: Any]? {
        guard let bytes = Base64.decodeURL(segment) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }
}
