/// How `TestPKI.make` builds a chain: which Apple marker OIDs to include, validity windows, curves, faults.
public struct PKIOptions: Sendable {
    /// Put Apple's receipt-signing OID 1.2.840.113635.100.6.11.1 on the leaf.
    public var leafOID = true
    /// Put Apple's WWDR intermediate OID 1.2.840.113635.100.6.2.1 on the intermediate.
    public var intermediateOID = true
    /// Leaf notBefore, milliseconds since the epoch (default 2024-01-01T00:00:00Z).
    public var leafNotBefore: Int64 = 1_704_067_200_000
    /// Leaf notAfter, milliseconds since the epoch (default 2044-01-01T00:00:00Z).
    public var leafNotAfter: Int64 = 2_335_219_200_000
    /// Root and intermediate notBefore, ms since the epoch (default 2020-01-01T00:00:00Z).
    public var caNotBefore: Int64 = 1_577_836_800_000
    /// Root and intermediate notAfter, ms since the epoch (default 2049-12-31T00:00:00Z).
    public var caNotAfter: Int64 = 2_524_521_600_000
    /// Curve of the leaf key; P-256 is what Apple uses (ES256), P-384 makes a leaf a verifier must refuse.
    public var leafCurve: Curve = .p256
    /// Curve of the root key (Apple Root CA G3 is P-384).
    public var rootCurve: Curve = .p384
    /// Curve of the intermediate key (Apple WWDR G6 is P-384).
    public var intermediateCurve: Curve = .p384
    /// Sign the leaf certificate with an unrelated key instead of the intermediate's (chain must fail).
    public var leafSignedByUnrelatedKey = false
    /// Common-name prefix: names become "<prefix> Root CA — NOT Apple", "<prefix> Intermediate CA — NOT Apple",
    /// "<prefix> Receipt Signing — NOT Apple".
    public var namePrefix = "iapctl Test"

    /// The default options: a valid chain with both OIDs, leaf valid 2024…2044.
    public init() {}
}
