#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an ``AppStoreVerifier`` trusts and accepts.
public struct TrustConfiguration: Sendable {
    /// When the certificate chain must be valid.
    public enum ValidationTime: Sendable, Equatable {
        /// The payload's `signedDate` (AppTransaction: `receiptCreationDate`); now when absent. Apple's offline default.
        case signedDate
        /// The clock's current time.
        case now
        /// A given instant, milliseconds since the epoch.
        case fixed(Int64)

        /// The instant (ms) to check a chain at, and how reports name it: `signed` is the input's
        /// own date (a JWS's signedDate, a receipt's creation date), called `named`.
        package func instant(signed: Int64?, named: String, now: Int64) -> (ms: Int64, label: String) {
            switch self {
            case .signedDate:
                if let signed { return (signed, "at \(named) \(Timestamp.iso8601(signed))") }
                return (now, "at now \(Timestamp.iso8601(now)) (payload has no signedDate)")
            case .now:
                return (now, "at now \(Timestamp.iso8601(now))")
            case .fixed(let fixed):
                return (fixed, "at \(Timestamp.iso8601(fixed)) (fixed)")
            }
        }
    }

    /// Trusted root certificates (DER). Default: the embedded Apple Root CA - G3.
    public var roots: [[UInt8]]
    /// The app's bundle id; nil skips the bundle id check (reported as skipped).
    public var bundleId: String?
    /// The app's Apple id; required when Production is accepted.
    public var appAppleId: Int64?
    /// Accepted environments ("Production", "Sandbox"; "Xcode"/"LocalTesting" accept unsigned
    /// data with a warning). An empty set accepts any environment without checking it, but never
    /// skips the signature.
    public var environments: Set<String>
    /// When the chain must be valid.
    public var validationTime: ValidationTime
    /// Current time in milliseconds since the epoch (injectable for tests).
    public var clock: @Sendable () -> Int64
    /// How far `signedDate` may lie ahead of the clock before the JWS is refused (ms).
    public var maxFutureSkewMillis: Int64

    public init(
        roots: [[UInt8]] = [AppleRootCAG3.der],
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        environments: Set<String> = [EnvironmentName.production.rawValue],
        validationTime: ValidationTime = .signedDate,
        clock: @escaping @Sendable () -> Int64 = Timestamp.now,
        maxFutureSkewMillis: Int64 = 300_000
    ) {
        self.roots = roots
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
        self.validationTime = validationTime
        self.clock = clock
        self.maxFutureSkewMillis = maxFutureSkewMillis
    }

    /// True when Production payloads are acceptable (so `appAppleId` must be configured).
    var acceptsProduction: Bool { environments.isEmpty || environments.contains(EnvironmentName.production.rawValue) }

    /// Reads root certificates from a file's bytes: DER (one certificate) or PEM (one or more
    /// `CERTIFICATE` blocks). Throws when nothing usable is found.
    public static func roots(fromDERorPEM bytes: [UInt8]) throws(TrustConfigurationError) -> [[UInt8]] {
        let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
        let endMarker = Array("-----END CERTIFICATE-----".utf8)
        guard let first = find(marker, in: bytes, from: 0) else {
            guard X509Certificate.parse(der: bytes) != nil else {
                throw TrustConfigurationError.invalidRoot(index: 0, reason: "neither a DER certificate nor PEM")
            }
            return [bytes]
        }
        var result: [[UInt8]] = []
        var position = first
        while let start = find(marker, in: bytes, from: position) {
            let bodyStart = start + marker.count
            guard let end = find(endMarker, in: bytes, from: bodyStart) else {
                throw TrustConfigurationError.invalidRoot(index: result.count, reason: "PEM block without END line")
            }
            let body = bytes[bodyStart..<end].filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
            guard let der = Base64.decodeStandard(body), X509Certificate.parse(der: der) != nil else {
                throw TrustConfigurationError.invalidRoot(index: result.count, reason: "PEM block is not a certificate")
            }
            result.append(der)
            position = end + endMarker.count
        }
        return result
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}

/// A configuration an ``AppStoreVerifier`` refuses to run with (CLI exit 78).
public enum TrustConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Production is accepted but no `appAppleId` is configured.
    case missingAppAppleId
    /// No root certificate is configured.
    case noRoots
    /// Root number `index` (0-based) could not be used.
    case invalidRoot(index: Int, reason: String)
    /// OpenSSL failed while setting up.
    case openSSL(String)

    public var description: String {
        switch self {
        case .missingAppAppleId: return "Production is accepted but no app Apple id is configured"
        case .noRoots: return "no trusted root certificate configured"
        case .invalidRoot(let index, let reason): return "root certificate #\(index + 1): \(reason)"
        case .openSSL(let what): return "OpenSSL: \(what)"
        }
    }
}
