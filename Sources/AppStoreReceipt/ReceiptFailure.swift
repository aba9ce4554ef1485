/// Why a receipt was refused: a stable code and a precise message (never the whole receipt).
public struct ReceiptFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable failure codes (tests and scripts match these, not the messages).
    public enum Code: String, Sendable, CaseIterable {
        /// Not a PKCS#7 signedData of data with one signer and its content (or not base64, too large).
        case invalidContainer
        /// The signed content is not the strict DER of a receipt payload.
        case invalidPayload
        /// The signature over the content does not verify with the signer's certificate.
        case invalidSignature
        /// The receipt has no creation date (field 12) to check the chain at.
        case missingCreationDate
        /// The creation date lies more than five minutes in the future.
        case futureCreationDate
        /// signer → intermediate → configured root could not be built or verified.
        case untrustedChain
        /// A chain certificate is not valid at the validation time.
        case certificateExpiredOrNotYetValid
        /// The signer lacks Apple's receipt-signing OID 1.2.840.113635.100.6.11.1.
        case missingLeafOID
        /// The intermediate lacks Apple's WWDR OID 1.2.840.113635.100.6.2.1.
        case missingIntermediateOID
        /// The bundle id differs from the configured one.
        case invalidAppIdentifier
        /// The receipt type is not an accepted environment.
        case invalidEnvironment

        /// True for input that is not a well-formed receipt (CLI exit 65); every other failure is a
        /// verification failure (CLI exit 2).
        public var isMalformed: Bool { self == .invalidContainer || self == .invalidPayload }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
