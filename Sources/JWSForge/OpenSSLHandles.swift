internal import COpenSSL
import CryptoDigest

/// Owns one `EVP_PKEY*` (an EC key pair); freed once in deinit.
final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let curve: Curve

    private init(pkey: OpaquePointer, curve: Curve) {
        self.pkey = pkey
        self.curve = curve
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Generates a fresh EC key on `curve`.
    static func generate(_ curve: Curve) throws -> PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw ForgeError.openssl("EVP_PKEY_CTX_new_from_name(EC)")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_group_name(ctx, curve.rawValue), "EVP_PKEY_CTX_set_group_name(\(curve.rawValue))")
        var key: OpaquePointer?
        try check(EVP_PKEY_generate(ctx, &key), "EVP_PKEY_generate(\(curve.rawValue))")
        guard let key else { throw ForgeError.openssl("EVP_PKEY_generate") }
        return PrivateKey(pkey: key, curve: curve)
    }

    /// Parses a PEM private key (PKCS#8 or SEC1); the curve must be P-256 or P-384.
    static func load(pem: String) throws -> PrivateKey {
        let bio = try MemoryBIO(pem)
        guard let key = PEM_read_bio_PrivateKey(bio.bio, nil, nil, nil) else {
            throw ForgeError.openssl("PEM_read_bio_PrivateKey")
        }
        let bits = EVP_PKEY_get_bits(key)
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, bits == 256 || bits == 384 else {
            EVP_PKEY_free(key)
            throw ForgeError("private key is not an EC P-256/P-384 key")
        }
        return PrivateKey(pkey: key, curve: bits == 256 ? .p256 : .p384)
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    func pem() throws -> String {
        let bio = try MemoryBIO()
        try check(PEM_write_bio_PrivateKey(bio.bio, pkey, nil, nil, 0, nil, nil), "PEM_write_bio_PrivateKey")
        return try bio.readAll()
    }

    /// ECDSA signature over SHA-256(`message`), DER-encoded (ASN.1 SEQUENCE of r, s).
    func signSHA256DER(_ message: UnsafeRawBufferPointer) throws -> [UInt8] {
        let digest = SHA256Digest.of(message)
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { throw ForgeError.openssl("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_sign_init(ctx), "EVP_PKEY_sign_init")
        var length = 0
        try check(EVP_PKEY_sign(ctx, nil, &length, digest, 32), "EVP_PKEY_sign (size)")
        var signature = [UInt8](repeating: 0, count: length)
        try check(EVP_PKEY_sign(ctx, &signature, &length, digest, 32), "EVP_PKEY_sign")
        return Array(signature.prefix(length))
    }
}

/// Owns one `X509*`; freed once in deinit.
final class Certificate: @unchecked Sendable {
    let x509: OpaquePointer

    init(taking x509: OpaquePointer) {
        self.x509 = x509
    }

    deinit { X509_free(x509) }

    /// Parses DER bytes.
    static func load(der: [UInt8]) throws -> Certificate {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var p = buffer.baseAddress
            return d2i_X509(nil, &p, buffer.count)
        }
        guard let parsed else { throw ForgeError.openssl("d2i_X509") }
        return Certificate(taking: parsed)
    }

    /// Parses the first PEM certificate in `pem`.
    static func load(pem: String) throws -> Certificate {
        let bio = try MemoryBIO(pem)
        guard let parsed = PEM_read_bio_X509(bio.bio, nil, nil, nil) else {
            throw ForgeError.openssl("PEM_read_bio_X509")
        }
        return Certificate(taking: parsed)
    }

    /// DER encoding.
    func der() throws -> [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { throw ForgeError.openssl("i2d_X509") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var p = buffer.baseAddress
            return i2d_X509(x509, &p)
        }
        guard written == length else { throw ForgeError.openssl("i2d_X509") }
        return out
    }

    /// PEM encoding (`-----BEGIN CERTIFICATE-----`).
    func pem() throws -> String {
        let bio = try MemoryBIO()
        try check(PEM_write_bio_X509(bio.bio, x509), "PEM_write_bio_X509")
        return try bio.readAll()
    }
}

/// Owns one memory `BIO*`; freed once in deinit.
final class MemoryBIO {
    let bio: OpaquePointer
    /// The bytes a read-only BIO reads from (owned here, freed after the BIO).
    private let source: UnsafeMutableRawBufferPointer?

    /// An empty, writable memory BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw ForgeError.openssl("BIO_new") }
        self.bio = bio
        self.source = nil
    }

    /// A read-only memory BIO over a copy of `text`.
    init(_ text: String) throws {
        let bytes = Array(text.utf8)
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        copy.copyBytes(from: bytes)
        guard let made = BIO_new_mem_buf(copy.baseAddress, Int32(bytes.count)) else {
            copy.deallocate()
            throw ForgeError.openssl("BIO_new_mem_buf")
        }
        bio = made
        source = copy
    }

    deinit {
        BIO_free(bio)
        source?.deallocate()
    }

    /// Everything written so far, as UTF-8 text.
    func readAll() throws -> String {
        let pending = Int(BIO_ctrl_pending(bio))
        var buffer = [UInt8](repeating: 0, count: pending)
        let read = BIO_read(bio, &buffer, Int32(pending))
        guard read == Int32(pending) else { throw ForgeError.openssl("BIO_read") }
        return String(decoding: buffer, as: UTF8.self)
    }
}
