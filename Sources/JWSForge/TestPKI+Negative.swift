/// Deliberately broken JWS for negative tests: each helper breaks exactly one thing.
extension TestPKI {
    /// Bytes that are not a certificate (not DER at all).
    public static let garbageCertificate: [UInt8] = Array("this is not a DER certificate".utf8)

    /// A correctly signed JWS whose signature segment is DER (ASN.1 SEQUENCE{r,s}) instead of raw R‖S.
    public func signWithDERSignature(payload: String) throws -> String {
        try sign(payload: payload, headerJSON: headerJSON(header: nil, removing: [], x5c: x5cBase64), form: .der)
    }

    /// A JWS whose signature is 64 zero bytes (r = s = 0), which no verifier may accept.
    public func signWithZeroSignature(payload: String) throws -> String {
        try sign(payload: payload, headerJSON: headerJSON(header: nil, removing: [], x5c: x5cBase64), form: .zero)
    }

    /// A JWS with header `alg` set to `alg` (e.g. "none", "ES384", "HS256"); the signature is still ES256 raw,
    /// or empty when `emptySignature` (the classic `alg: none` attack).
    public func sign(payload: String, alg: String, emptySignature: Bool = false) throws -> String {
        try sign(
            payload: payload, headerJSON: headerJSON(header: ["alg": alg], removing: [], x5c: x5cBase64),
            form: emptySignature ? .empty : .raw)
    }

    /// A JWS with a valid chain in `x5c` but signed by a key that is not the leaf's.
    public func signWithUnrelatedKey(payload: String) throws -> String {
        try sign(
            payload: payload, headerJSON: headerJSON(header: nil, removing: [], x5c: x5cBase64), form: .raw,
            key: unrelatedKey)
    }

    /// An `x5c` of `count` certificates: prefixes of [leaf, intermediate, root], then the root repeated.
    public func x5c(count: Int) -> [[UInt8]] {
        let chain = [leafDER, intermediateDER, rootDER]
        return (0..<max(count, 0)).map { $0 < 3 ? chain[$0] : rootDER }
    }
}
