internal import COpenSSL

/// What kind of certificate `CertificateFactory.make` issues (decides basicConstraints and keyUsage).
enum CertificateRole {
    case root
    case intermediate
    case leaf
}

/// Issues X.509 v3 certificates with OpenSSL: subject, validity, standard extensions, Apple marker OIDs.
enum CertificateFactory {
    /// Apple's receipt-signing leaf marker (App Store receipt signing).
    static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// Apple's WWDR intermediate marker.
    static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// Issues a certificate for `subjectKey`, signed by `issuerKey`.
    ///
    /// - Parameters:
    ///   - issuer: the issuer certificate (its subject becomes our issuer name, its SKI our AKI); nil = self-signed.
    ///   - markerOIDs: extension OIDs added non-critical with value ASN.1 NULL.
    ///   - notBefore/notAfter: seconds since the epoch.
    static func make(
        role: CertificateRole,
        commonName: String,
        subjectKey: PrivateKey,
        issuer: Certificate?,
        issuerKey: PrivateKey,
        notBefore: Int64,
        notAfter: Int64,
        markerOIDs: [String]
    ) throws -> Certificate {
        guard let x509 = X509_new() else { throw ForgeError.openssl("X509_new") }
        let cert = Certificate(taking: x509)
        try check(X509_set_version(x509, 2), "X509_set_version")
        try setRandomSerial(x509)

        guard let name = X509_NAME_new() else { throw ForgeError.openssl("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        try check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0), "add CN")
        try check(X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_UTF8, "iapctl test PKI", -1, -1, 0), "add OU")
        try check(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, "iapctl (NOT Apple Inc.)", -1, -1, 0), "add O")
        try check(X509_NAME_add_entry_by_txt(name, "C", MBSTRING_UTF8, "US", -1, -1, 0), "add C")
        try check(X509_set_subject_name(x509, name), "X509_set_subject_name")
        if let issuer {
            try check(X509_set_issuer_name(x509, X509_get_subject_name(issuer.x509)), "X509_set_issuer_name")
        } else {
            try check(X509_set_issuer_name(x509, name), "X509_set_issuer_name")
        }

        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter)) != nil
        else { throw ForgeError.openssl("ASN1_TIME_set") }
        try check(X509_set_pubkey(x509, subjectKey.pkey), "X509_set_pubkey")

        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer?.x509 ?? x509, x509, nil, nil, 0)
        let extensions: [(Int32, String)]
        switch role {
        case .root:
            extensions = [
                (NID_basic_constraints, "critical,CA:TRUE"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
            ]
        case .intermediate:
            extensions = [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        case .leaf:
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_nconf_nid(nil, &ctx, nid, value) else {
                throw ForgeError.openssl("X509V3_EXT_nconf_nid(\(nid), \(value))")
            }
            defer { X509_EXTENSION_free(ext) }
            try check(X509_add_ext(x509, ext, -1), "X509_add_ext")
        }
        for oid in markerOIDs {
            try addNullExtension(x509, oid: oid)
        }

        let digest = issuerKey.curve == .p384 ? EVP_sha384() : EVP_sha256()
        guard X509_sign(x509, issuerKey.pkey, digest) > 0 else { throw ForgeError.openssl("X509_sign") }
        return cert
    }

    /// Adds a non-critical extension `oid` whose value is DER NULL (05 00), like Apple's markers.
    private static func addNullExtension(_ x509: OpaquePointer, oid: String) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw ForgeError.openssl("OBJ_txt2obj(\(oid))") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw ForgeError.openssl("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(value) }
        let null: [UInt8] = [0x05, 0x00]
        try check(ASN1_OCTET_STRING_set(value, null, 2), "ASN1_OCTET_STRING_set")
        guard let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value) else {
            throw ForgeError.openssl("X509_EXTENSION_create_by_OBJ(\(oid))")
        }
        defer { X509_EXTENSION_free(ext) }
        try check(X509_add_ext(x509, ext, -1), "X509_add_ext(\(oid))")
    }

    /// A random positive 127-bit serial number.
    private static func setRandomSerial(_ x509: OpaquePointer) throws {
        guard let bn = BN_new() else { throw ForgeError.openssl("BN_new") }
        defer { BN_free(bn) }
        try check(BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY), "BN_rand")
        guard let serial = BN_to_ASN1_INTEGER(bn, nil) else { throw ForgeError.openssl("BN_to_ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(serial) }
        try check(X509_set_serialNumber(x509, serial), "X509_set_serialNumber")
    }
}
