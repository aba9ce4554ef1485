/// Why a JWS or a StoreKit 1 receipt was refused: a stable code and a precise message (never the
/// whole token or receipt).
public struct VerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable failure codes (tests and scripts match these, not the messages).
    public enum Code: String, Sendable, CaseIterable {
        /// Not a compact JWS: segment count, base64url, size.
        case invalidJWTFormat
        /// A segment is not valid JSON (or not UTF-8, or not an object).
        case invalidJSON
        /// A known payload field has the wrong JSON type.
        case invalidPayload
        /// Header `alg` is not `ES256`.
        case unsupportedAlgorithm
        /// Header has no usable `x5c`.
        case missingX5C
        /// `x5c` does not hold exactly three certificates.
        case invalidChainLength
        /// An `x5c` entry is not standard base64 DER of one certificate, or the leaf key is not P-256.
        case invalidCertificate
        /// leaf → intermediate → configured root could not be built or verified.
        case untrustedChain
        /// A chain certificate is not valid at the validation time.
        case certificateExpiredOrNotYetValid
        /// The leaf lacks Apple's receipt-signing OID 1.2.840.113635.100.6.11.1.
        case missingLeafOID
        /// The intermediate lacks Apple's WWDR OID 1.2.840.113635.100.6.2.1.
        case missingIntermediateOID
        /// The ES256 signature does not verify (or is not 64 bytes R‖S, or r/s out of range); for a
        /// receipt, the PKCS#7 signature over the content does not verify.
        case invalidSignature
        /// `signedDate` lies more than five minutes in the future.
        case futureSignedDate
        /// Bundle id (or, in Production, app Apple id) differs from the configuration.
        case invalidAppIdentifier
        /// The payload's environment (a receipt's type) is not among the accepted ones.
        case invalidEnvironment
        /// Receipts: not a PKCS#7 signedData of data with one signer and its content (or not
        /// base64, too large).
        case invalidContainer
        /// Receipts: no creation date (field 12) to check the chain at.
        case missingCreationDate
        /// Receipts: the creation date lies more than five minutes in the future.
        case futureCreationDate

        /// True for input that is not a well-formed JWS/JSON or receipt of the right shape (CLI
        /// exit 65); every other failure is a verification failure (CLI exit 2).
        public var isMalformed: Bool {
            switch self {
            case .invalidJWTFormat, .invalidJSON, .invalidPayload, .invalidContainer: return true
            default: return false
            }
        }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
