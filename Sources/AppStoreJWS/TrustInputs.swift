#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A validation time word that is neither `signed`, `now` nor a time (the text as given).
public struct ValidationTimeError: Error, Sendable, Equatable {
    public let text: String

    public init(text: String) { self.text = text }
}

extension TrustConfiguration.ValidationTime {
    /// `signed` (also `signeddate`, `signed-date`), `now`, or a time in the grammar of every time
    /// option (``Timestamp/parse(_:now:)``, relative to `now`); the words in any case.
    public static func parse(_ text: String, now: Int64) throws(ValidationTimeError) -> Self {
        switch text.lowercased() {
        case "signed", "signeddate", "signed-date": return .signedDate
        case "now": return .now
        default:
            guard let ms = Timestamp.parse(text, now: now) else { throw ValidationTimeError(text: text) }
            return .fixed(ms)
        }
    }
}

/// A root certificate file that could not be used, naming its path.
public enum RootFileRefusal: Error, Sendable, Equatable {
    /// `open(2)` failed with `errno`.
    case cannotOpen(path: String, errno: Int32)
    /// `read(2)` failed with `errno`.
    case cannotRead(path: String, errno: Int32)
    /// The file holds more than `maxBytes`.
    case tooLarge(path: String, maxBytes: Int)
    /// The file holds no usable certificate (DER or PEM).
    case notACertificate(path: String, TrustConfigurationError)
}

extension TrustConfiguration {
    /// The largest root certificate file read (1 MiB).
    public static let maxRootFileBytes = 1 << 20

    /// The root certificates in the file at `path`: DER (one certificate) or PEM (one or more
    /// `CERTIFICATE` blocks), at most ``maxRootFileBytes``.
    public static func roots(fromFile path: String) throws(RootFileRefusal) -> [[UInt8]] {
        let bytes = try readRootFile(path)
        do {
            return try roots(fromDERorPEM: bytes)
        } catch { throw .notACertificate(path: path, error) }
    }

    private static func readRootFile(_ path: String) throws(RootFileRefusal) -> [UInt8] {
        do { return try BoundedFile.read(path, maxBytes: maxRootFileBytes) } catch {
            switch error {
            case .cannotOpen(let code): throw .cannotOpen(path: path, errno: code)
            case .cannotRead(let code): throw .cannotRead(path: path, errno: code)
            case .tooLarge(let maxBytes): throw .tooLarge(path: path, maxBytes: maxBytes)
            }
        }
    }
}

extension VerificationFailure {
    /// OpenSSL's words for why a chain failed (in an `untrustedChain` message or the chain
    /// check's detail), in a person's words.
    public static func plainWords(_ message: String) -> String {
        let phrases: [(String, String)] = [
            ("unable to get local issuer certificate", "it was not issued under the trusted root"),
            ("self-signed certificate in certificate chain", "it leads to a root that is not the trusted one"),
            ("self signed certificate in certificate chain", "it leads to a root that is not the trusted one"),
            ("unable to get issuer certificate", "its issuer is missing from the chain"),
            ("certificate signature failure", "a certificate's signature does not match its issuer"),
        ]
        var text = message
        for (openssl, plain) in phrases { text = text.replacing(openssl, with: plain) }
        return text
    }

    /// The message, an untrusted chain's in a person's words (``plainWords(_:)``).
    public var plainMessage: String { code == .untrustedChain ? Self.plainWords(message) : message }
}
