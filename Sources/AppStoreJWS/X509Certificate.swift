import COpenSSL
import IAPFoundation
import Synchronization

/// One parsed X.509 certificate (an owned OpenSSL `X509*`).
package final class X509Certificate: @unchecked Sendable {
    /// Certificates parsed in this process, by DER. OpenSSL 3's `d2i_X509` decodes the public key
    /// through its provider decoders (about a millisecond here); a trusted root is parsed when
    /// the configuration is checked, when the verifier is built, and again as the last `x5c`
    /// entry of every JWS, so parsing it once matters for a one-shot `iapctl verify`. The
    /// certificates are only read after parsing, and OpenSSL guards their lazily computed fields.
    /// A list searched in order, not a dictionary keyed by the DER: the first `[[UInt8]: …]` of a
    /// process makes the Swift runtime look up `Array: Hashable` by scanning every conformance record
    /// of the binary (2.5 M instructions, 5 % of a one-shot `iapctl verify`), for at most 32 entries.
    private static let parsed = Mutex<[X509Certificate]>([])
    private static let parsedCapacity = 32

    /// The certificate for `der`, parsed once per process; nil when not exactly one certificate.
    package static func parse(der: [UInt8]) -> X509Certificate? {
        if let known = parsed.withLock({ cache in cache.first { $0.der == der } }) { return known }
        guard let certificate = X509Certificate(der: der) else { return nil }
        parsed.withLock { cache in
            if cache.count >= parsedCapacity { cache.removeAll() }
            if !cache.contains(where: { $0.der == der }) { cache.append(certificate) }
        }
        return certificate
    }

    package let pointer: OpaquePointer
    package let der: [UInt8]

    /// Parses DER; nil when the bytes are not exactly one certificate.
    package init?(der: [UInt8]) {
        guard !der.isEmpty, der.count < 1 << 20 else { return nil }
        var parsed: OpaquePointer? = nil
        let consumed: Int = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            parsed = d2i_X509(nil, &cursor, buffer.count)
            guard let cursor, let base = buffer.baseAddress else { return -1 }
            return cursor - base
        }
        guard let parsed else {
            OpenSSLErrors.drain()
            return nil
        }
        guard consumed == der.count else {
            X509_free(parsed)
            return nil
        }
        pointer = parsed
        self.der = der
    }

    /// A copy of a certificate OpenSSL holds elsewhere (re-encoded, so this one owns its handle).
    package convenience init?(copying other: OpaquePointer) {
        let length = i2d_X509(other, nil)
        guard length > 0 else {
            OpenSSLErrors.drain()
            return nil
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(other, &cursor)
        }
        guard written == length else {
            OpenSSLErrors.drain()
            return nil
        }
        self.init(der: der)
    }

    deinit { X509_free(pointer) }

    /// notBefore in seconds since the epoch.
    package var notBefore: Int64? { Self.seconds(X509_get0_notBefore(pointer)) }

    /// notAfter in seconds since the epoch.
    package var notAfter: Int64? { Self.seconds(X509_get0_notAfter(pointer)) }

    package static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var tm = tm()
        guard ASN1_TIME_to_tm(time, &tm) == 1 else {
            OpenSSLErrors.drain()
            return nil
        }
        return Timestamp.epochSeconds(
            year: Int64(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday),
            hour: Int(tm.tm_hour), minute: Int(tm.tm_min), second: Int(tm.tm_sec))
    }

    /// True when the certificate carries an extension with this OID (critical or not).
    package func hasExtension(_ object: OwnedObject) -> Bool {
        X509_get_ext_by_OBJ(pointer, object.pointer, -1) >= 0
    }

    /// The subject's common name (or the whole one-line name when there is no CN).
    package var subjectName: String { Self.describe(X509_get_subject_name(pointer)) }

    /// The issuer's common name.
    package var issuerName: String { Self.describe(X509_get_issuer_name(pointer)) }

    package static func describe(_ name: OpaquePointer?) -> String {
        guard let name else { return "?" }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        if index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry),
            let bytes = ASN1_STRING_get0_data(data)
        {
            let length = Int(ASN1_STRING_length(data))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
        var buffer = [CChar](repeating: 0, count: 256)
        guard X509_NAME_oneline(name, &buffer, Int32(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// SHA-256 over the DER, as colon-separated upper-case hex.
    package var sha256Fingerprint: String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard X509_digest(pointer, EVP_sha256(), &digest, &length) == 1, length == 32 else {
            OpenSSLErrors.drain()
            return ""
        }
        return Hex.encode(digest, uppercase: true, separator: ":")
    }

    /// The public key when it is an EC key on P-256 (prime256v1), else nil.
    func p256PublicKey() -> PublicKey? {
        guard let key = X509_get0_pubkey(pointer) else {
            OpenSSLErrors.drain()
            return nil
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return nil }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            OpenSSLErrors.drain()
            return nil
        }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard group == "prime256v1" || group == "P-256" else { return nil }
        guard EVP_PKEY_up_ref(key) == 1 else { return nil }
        return PublicKey(owning: key)
    }

    /// A description of the public key type for messages, e.g. "EC secp384r1" or "RSA".
    func keyDescription() -> String {
        guard let key = X509_get0_pubkey(pointer) else {
            OpenSSLErrors.drain()
            return "unreadable key"
        }
        if EVP_PKEY_get_base_id(key) == EVP_PKEY_EC {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            if EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 {
                return "EC " + String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            OpenSSLErrors.drain()
            return "EC"
        }
        if let typeName = EVP_PKEY_get0_type_name(key) { return String(cString: typeName) }
        return "key type \(EVP_PKEY_get_base_id(key))"
    }
}

/// An owned `EVP_PKEY` (P-256 public key of a signing leaf).
final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// A prepared verification context for this key (nil if OpenSSL could not make one).
    let verifyTemplate: VerifyTemplate?

    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        verifyTemplate = VerifyTemplate(key: pointer)
    }

    deinit { EVP_PKEY_free(pointer) }
}
