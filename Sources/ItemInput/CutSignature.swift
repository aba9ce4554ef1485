import AppStoreJWS

extension PasteDamage {
    /// Base64url characters of an ES256 signature (64 bytes): Apple signs with ES256.
    static let signatureLength = 86

    /// How many characters the signature segment of `jws` (three segments) has when it is shorter
    /// than an ES256 signature, else nil.
    public static func cutSignature(_ jws: String) -> Int? {
        let bytes = jws.utf8
        guard let lastDot = bytes.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let signature = bytes[bytes.index(after: lastDot)...]
        guard signature.count < signatureLength, signature.allSatisfy(isBase64URL),
            bytes.count(where: { $0 == UInt8(ascii: ".") }) == 2
        else { return nil }
        return signature.count
    }

    /// `report` refused for its signature when the signature segment is shorter than an ES256
    /// signature: the copy was cut inside the signature (copy-paste damage, not a forgery), so it
    /// is malformed input with a hint instead of a signature verdict.
    public static func cutInsideSignature(_ report: VerificationReport, jws: String) -> VerificationReport {
        guard report.failure?.code == .invalidSignature, let length = cutSignature(jws) else { return report }
        var report = report
        report.outcome = .refused(
            VerificationFailure(
                .invalidJWTFormat,
                "this looks cut short: \(jws.utf8.count) bytes and its signature has \(length) of the "
                    + "\(signatureLength) characters of an ES256 signature (copy-paste damage, not a forgery): "
                    + "copy the whole text again (up to its end), or save it to a file and give the file"))
        return report
    }
}
