internal import COpenSSL
import IAPFoundation

/// A throwaway EC certificate chain shaped like Apple's (root → intermediate with …6.2.1 → leaf with …6.11.1)
/// and an ES256 JWS signer using the leaf key.
///
/// Immutable after creation; the OpenSSL objects are only read, so one instance may sign from many threads.
public final class TestPKI: @unchecked Sendable {
    /// Root certificate, DER.
    public let rootDER: [UInt8]
    /// Intermediate certificate, DER.
    public let intermediateDER: [UInt8]
    /// Leaf (signing) certificate, DER.
    public let leafDER: [UInt8]
    /// A self-signed root with the same subject name as `rootDER` but a different key: a trust anchor the chain
    /// must NOT verify against.
    public let unrelatedRootDER: [UInt8]

    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let unrelatedRoot: Certificate
    /// The key that signs JWS: the leaf's private key.
    let leafKey: PrivateKey
    /// A key unrelated to the chain, for "signed by the wrong key" negative tests.
    let unrelatedKey: PrivateKey
    /// Root and intermediate keys when this PKI was made here (nil when loaded from files).
    let rootKey: PrivateKey?
    let intermediateKey: PrivateKey?

    /// Standard base64 of leaf, intermediate, root: the default `x5c`.
    public let x5cBase64: [String]
    /// `base64url({"alg":"ES256","x5c":[…]}) + "."`: reused by every default signature.
    private let defaultHeaderPrefix: [UInt8]

    init(
        root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: PrivateKey,
        rootKey: PrivateKey?, intermediateKey: PrivateKey?
    ) throws {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        rootDER = try root.der()
        intermediateDER = try intermediate.der()
        leafDER = try leaf.der()
        x5cBase64 = [leafDER, intermediateDER, rootDER].map { Base64.encodeStandard($0) }

        unrelatedKey = try PrivateKey.generate(.p256)
        let otherRootKey = try PrivateKey.generate(.p384)
        var rootName = "iapctl Test Root CA — NOT Apple"
        if let cn = TestPKI.commonName(of: root) { rootName = cn }
        unrelatedRoot = try CertificateFactory.make(
            role: .root, commonName: rootName, subjectKey: otherRootKey, issuer: nil, issuerKey: otherRootKey,
            notBefore: 1_577_836_800, notAfter: 2_524_521_600, markerOIDs: [])
        unrelatedRootDER = try unrelatedRoot.der()

        let defaultHeader = TestPKI.headerJSON(alg: "ES256", x5c: x5cBase64)
        defaultHeaderPrefix = Array((Base64.encodeURL(Array(defaultHeader.utf8)) + ".").utf8)
    }

    /// Makes a fresh chain (new keys each time) according to `options`.
    public static func make(_ options: PKIOptions = .init()) throws -> TestPKI {
        guard options.leafNotBefore <= options.leafNotAfter, options.caNotBefore <= options.caNotAfter else {
            throw ForgeError("notBefore must not be after notAfter")
        }
        let rootKey = try PrivateKey.generate(options.rootCurve)
        let intermediateKey = try PrivateKey.generate(options.intermediateCurve)
        let leafKey = try PrivateKey.generate(options.leafCurve)
        let caFrom = options.caNotBefore / 1000
        let caTo = options.caNotAfter / 1000
        let root = try CertificateFactory.make(
            role: .root, commonName: "\(options.namePrefix) Root CA — NOT Apple", subjectKey: rootKey,
            issuer: nil, issuerKey: rootKey, notBefore: caFrom, notAfter: caTo, markerOIDs: [])
        let intermediate = try CertificateFactory.make(
            role: .intermediate, commonName: "\(options.namePrefix) Intermediate CA — NOT Apple",
            subjectKey: intermediateKey, issuer: root, issuerKey: rootKey, notBefore: caFrom, notAfter: caTo,
            markerOIDs: options.intermediateOID ? [CertificateFactory.intermediateMarkerOID] : [])
        let leafIssuerKey =
            options.leafSignedByUnrelatedKey ? try PrivateKey.generate(options.intermediateCurve) : intermediateKey
        let leaf = try CertificateFactory.make(
            role: .leaf, commonName: "\(options.namePrefix) Receipt Signing — NOT Apple", subjectKey: leafKey,
            issuer: intermediate, issuerKey: leafIssuerKey,
            notBefore: options.leafNotBefore / 1000, notAfter: options.leafNotAfter / 1000,
            markerOIDs: options.leafOID ? [CertificateFactory.leafMarkerOID] : [])
        return try TestPKI(
            root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey,
            rootKey: rootKey, intermediateKey: intermediateKey)
    }

    /// Builds a PKI from PEM texts (certificates and the leaf's private key); the key must match the leaf.
    public static func load(
        rootPEM: String, intermediatePEM: String, leafPEM: String, leafKeyPEM: String
    ) throws -> TestPKI {
        let leaf = try Certificate.load(pem: leafPEM)
        let key = try PrivateKey.load(pem: leafKeyPEM)
        guard X509_check_private_key(leaf.x509, key.pkey) == 1 else {
            _ = ForgeError.openssl("X509_check_private_key")
            throw ForgeError("leaf.key does not match the public key of leaf.pem")
        }
        return try TestPKI(
            root: try Certificate.load(pem: rootPEM), intermediate: try Certificate.load(pem: intermediatePEM),
            leaf: leaf, leafKey: key, rootKey: nil, intermediateKey: nil)
    }

    /// Root certificate, PEM.
    public var rootPEM: String { (try? root.pem()) ?? "" }
    /// Intermediate certificate, PEM.
    public var intermediatePEM: String { (try? intermediate.pem()) ?? "" }
    /// Leaf certificate, PEM.
    public var leafPEM: String { (try? leaf.pem()) ?? "" }
    /// The unrelated root (same name, other key), PEM.
    public var unrelatedRootPEM: String { (try? unrelatedRoot.pem()) ?? "" }
    /// Curve of the leaf key.
    public var leafCurve: Curve { leafKey.curve }

    /// The leaf's private key as PKCS#8 PEM.
    public func leafPrivateKeyPEM() throws -> String {
        try leafKey.pem()
    }

    /// Signs `payload` as a compact JWS: ES256 over `header.payload`, raw R‖S signature,
    /// header `{"alg":"ES256","x5c":[leaf, intermediate, root]}` (standard base64 DER).
    ///
    /// - Parameters:
    ///   - header: members to set in the header (replacing `alg`/`x5c` in place, others appended in key order);
    ///     values may be String, Bool, integers, arrays, dictionaries or `JSONRaw`.
    ///   - removingHeader: header member names to drop (e.g. `["x5c"]`).
    ///   - x5c: certificates (DER) to put in `x5c` instead of the chain.
    public func sign(
        payload: String, header: [String: Any]? = nil, removingHeader: [String] = [], x5c: [[UInt8]]? = nil
    ) throws -> String {
        if header == nil, removingHeader.isEmpty, x5c == nil {
            return try compact(headerPrefix: defaultHeaderPrefix, payload: payload, form: .raw, key: leafKey)
        }
        let x5cStrings = x5c.map { $0.map { Base64.encodeStandard($0) } }
        return try sign(payload: payload, header: header, removingHeader: removingHeader, x5cBase64: x5cStrings)
    }

    /// Signs with explicit `x5c` strings (which need not be valid base64), for malformed-certificate tests.
    public func sign(
        payload: String, header: [String: Any]? = nil, removingHeader: [String] = [], x5cBase64 strings: [String]?
    ) throws -> String {
        let json = headerJSON(header: header, removing: removingHeader, x5c: strings ?? x5cBase64)
        return try sign(payload: payload, headerJSON: json, form: .raw)
    }

    // MARK: - Internals shared with the negative-test helpers

    /// How the signature segment is produced.
    enum SignatureForm {
        /// JOSE raw R‖S (correct).
        case raw
        /// ASN.1 DER SEQUENCE { r, s } (wrong for JWS).
        case der
        /// 2 × coordinate-size zero bytes (r = s = 0).
        case zero
        /// No signature at all (empty third segment).
        case empty
    }

    func sign(payload: String, headerJSON: String, form: SignatureForm, key: PrivateKey? = nil) throws -> String {
        let prefix = Array((Base64.encodeURL(Array(headerJSON.utf8)) + ".").utf8)
        return try compact(headerPrefix: prefix, payload: payload, form: form, key: key ?? leafKey)
    }

    func headerJSON(header: [String: Any]?, removing: [String], x5c: [String]) -> String {
        var members: [(String, String)] = [
            ("alg", "\"ES256\""),
            ("x5c", JSONObjectWriter.serialize(any: x5c)),
        ]
        for key in (header ?? [:]).keys.sorted() {
            let value = JSONObjectWriter.serialize(any: header![key]!)
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = value
            } else {
                members.append((key, value))
            }
        }
        var writer = JSONObjectWriter()
        for (key, value) in members where !removing.contains(key) { writer.add(key, raw: value) }
        return writer.json
    }

    private func compact(
        headerPrefix: [UInt8], payload: String, form: SignatureForm, key: PrivateKey
    ) throws -> String {
        var input = headerPrefix
        input.append(contentsOf: Base64.encodeURL(Array(payload.utf8)).utf8)
        let signature: [UInt8]
        switch form {
        case .empty:
            signature = []
        case .zero:
            signature = [UInt8](repeating: 0, count: 2 * key.curve.coordinateSize)
        case .der:
            signature = try input.withUnsafeBytes { try key.signSHA256DER($0) }
        case .raw:
            let der = try input.withUnsafeBytes { try key.signSHA256DER($0) }
            signature = try TestPKI.rawSignature(der: der, size: key.curve.coordinateSize)
        }
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64.encodeURL(signature).utf8)
        return String(decoding: input, as: UTF8.self)
    }

    /// Converts a DER ECDSA signature to JOSE's fixed-size R‖S.
    static func rawSignature(der: [UInt8], size: Int) throws -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var p = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &p, buffer.count)
        }
        guard let sig = parsed else { throw ForgeError.openssl("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(sig) }
        var out = [UInt8](repeating: 0, count: 2 * size)
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            BN_bn2binpad(ECDSA_SIG_get0_r(sig), buffer.baseAddress, Int32(size)) == Int32(size)
                && BN_bn2binpad(ECDSA_SIG_get0_s(sig), buffer.baseAddress! + size, Int32(size)) == Int32(size)
        }
        guard ok else { throw ForgeError.openssl("BN_bn2binpad") }
        return out
    }

    static func headerJSON(alg: String, x5c: [String]) -> String {
        var writer = JSONObjectWriter()
        writer.add("alg", alg)
        writer.add("x5c", raw: JSONObjectWriter.serialize(any: x5c))
        return writer.json
    }

    private static func commonName(of cert: Certificate) -> String? {
        guard let name = X509_get_subject_name(cert.x509) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { CRYPTO_free(utf8, #fileID, #line) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }
}
