/// An elliptic curve for a generated key.
public enum Curve: String, Sendable, CaseIterable {
    /// NIST P-256 (prime256v1): the curve of Apple's receipt-signing leaf.
    case p256 = "P-256"
    /// NIST P-384 (secp384r1): the curve of Apple's root and intermediate; a wrong leaf curve in negative tests.
    case p384 = "P-384"

    /// Size in bytes of one coordinate (and of R or S in a raw JOSE signature).
    public var coordinateSize: Int {
        switch self {
        case .p256: return 32
        case .p384: return 48
        }
    }
}
