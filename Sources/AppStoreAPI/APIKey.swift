internal import COpenSSL

/// The In-App Purchase key from App Store Connect (the `.p8` file: PKCS#8, EC P-256), loaded once.
///
/// The key is a secret: it is never printed, and errors name the file, never its contents.
public final class APIKey: @unchecked Sendable {
    /// The key's id in App Store Connect (the JWT header's `kid`).
    public let keyId: String
    private let pkey: OpaquePointer

    /// Reads a PEM `PRIVATE KEY` (PKCS#8) holding an EC P-256 key.
    public init(pem: [UInt8], keyId: String) throws(AppStoreAPIError) {
        defer { APIOpenSSL.drain() }
        // The BIO reads the bytes in place, so they must outlive it: a pointer from
        // `pem.withUnsafeBytes` is valid only inside its closure (found by the fuzzer, mode 9).
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(pem.count, 1), alignment: 1)
        defer { bytes.deallocate() }
        pem.withUnsafeBytes { bytes.copyMemory(from: $0) }
        guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(pem.count)) else {
            throw AppStoreAPIError(.configuration, "cannot read the key: out of memory")
        }
        defer { BIO_free(bio) }
        // An empty passphrase: an encrypted key fails instead of prompting on the terminal.
        var emptyPassphrase: [CChar] = [0]
        let read = emptyPassphrase.withUnsafeMutableBufferPointer {
            PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer($0.baseAddress))
        }
        guard let key = read else {
            throw AppStoreAPIError(
                .configuration, "the key file is not an unencrypted PEM private key (PKCS#8)",
                hint: "use the .p8 file App Store Connect let you download once (it starts with "
                    + "-----BEGIN PRIVATE KEY-----)")
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw AppStoreAPIError(
                .configuration, "the key file holds a private key, but not an EC P-256 key",
                hint: "App Store Server API keys are EC P-256 (.p8 from Users and Access → Integrations → "
                    + "In-App Purchase)")
        }
        self.pkey = key
        self.keyId = keyId
    }

    deinit { EVP_PKEY_free(pkey) }

    /// ES256 over `message`: the raw 64-byte R‖S JOSE wants (OpenSSL gives DER).
    func sign(_ message: [UInt8]) throws(AppStoreAPIError) -> [UInt8] {
        defer { APIOpenSSL.drain() }
        guard let context = EVP_MD_CTX_new() else { throw AppStoreAPIError(.internal, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pkey) == 1 else {
            throw AppStoreAPIError(.internal, "cannot sign with the key (EVP_DigestSignInit)")
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer {
            EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count)
        }
        guard sized == 1, length > 0, length <= 80 else {
            throw AppStoreAPIError(.internal, "cannot sign with the key (EVP_DigestSign)")
        }
        var der = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            der.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, input.count) }
        }
        guard signed == 1 else { throw AppStoreAPIError(.internal, "cannot sign with the key (EVP_DigestSign)") }
        return try Self.rawSignature(Array(der.prefix(length)))
    }

    /// DER `ECDSA-Sig-Value` → R‖S, each left-padded to 32 bytes.
    static func rawSignature(_ der: [UInt8]) throws(AppStoreAPIError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = parsed else { throw AppStoreAPIError(.internal, "OpenSSL returned a malformed signature") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature) else { return false }
            return BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
        }
        guard ok else { throw AppStoreAPIError(.internal, "OpenSSL returned a signature wider than P-256") }
        return raw
    }
}

/// OpenSSL's thread-local error queue, emptied after each call that may fill it.
enum APIOpenSSL {
    static func drain() {
        while ERR_get_error() != 0 {}
    }
}
