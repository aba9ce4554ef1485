import IAPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Copy-paste damage, told apart from forgery: a JWS cut short (a terminal's 4 KB line limit, a
/// chat tool), wrapped at 76 columns (e-mail, base64 tools), or its decoded payload pasted
/// instead of the signed text. Each gets a hint saying what to do, not a signature verdict.
public enum PasteDamage {
    /// Base64url characters (and `=` padding).
    public static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            return true
        default: return false
        }
    }

    /// The start of a JWS (`eyJ` is `{"` in base64url) with fewer than three segments.
    public static func isJWSFragment(_ line: String) -> Bool {
        guard line.hasPrefix("eyJ") else { return false }
        // A whole JWS (two dots) is no fragment: found with memchr, before checking every byte
        // of a 15 KB line (that check was ~2.6 % of a large `notify`).
        var text = line
        let hasTwoDots = text.withUTF8 { bytes -> Bool in
            guard let base = bytes.baseAddress, let first = memchr(base, 0x2E, bytes.count) else { return false }
            let next = base.distance(to: first.assumingMemoryBound(to: UInt8.self)) + 1
            return memchr(base + next, 0x2E, bytes.count - next) != nil
        }
        if hasTwoDots { return false }
        var dots = 0
        for byte in line.utf8 {
            if byte == UInt8(ascii: ".") {
                dots += 1
            } else if !isBase64URL(byte) {
                return false
            }
        }
        return dots < 2
    }

    /// A line that can continue a wrapped JWS: base64url and dots only, not the start of another.
    public static func isContinuation(_ line: String) -> Bool {
        !line.isEmpty && !line.hasPrefix("eyJ")
            && line.utf8.allSatisfy { isBase64URL($0) || $0 == UInt8(ascii: ".") }
    }

    /// The failure of a JWS fragment `first` (line `lines.lowerBound`), joined with its
    /// continuation lines into `joined`: wrapped when it spans several lines, else cut short.
    public static func fragmentFailure(first: String, joined: String, lines: ClosedRange<Int>, fromTerminal: Bool)
        -> VerificationFailure
    {
        let segments = joined.utf8.count { $0 == UInt8(ascii: ".") } + 1
        if lines.count > 1 {
            let width = first.utf8.count
            return VerificationFailure(
                .invalidJWTFormat,
                "lines \(lines.lowerBound)–\(lines.upperBound) look like one JWS wrapped at \(width) columns (copy-paste "
                    + "damage, not a forgery): join them into one line (e.g. tr -d '\\n' < FILE) and feed it again")
        }
        let bytes = first.utf8.count
        var why =
            "this looks cut short: \(bytes) bytes and \(segments) of the 3 dot-separated segments of a JWS "
            + "(copy-paste damage, not a forgery); a notification is usually 4–16 KB"
        // The terminal's limit is named only when the copy stopped exactly there (a paste at a
        // terminal is read without that limit, so a short paste was a short copy).
        if bytes == 4095 || bytes == 4096 {
            why +=
                "; a terminal keeps at most 4,095 bytes of a pasted line: save it to a file and give the file "
                + "name as the argument (iapctl notify FILE, iapctl verify FILE)"
        } else {
            why +=
                (fromTerminal ? "; the copy itself was short" : "")
                + "; copy the whole text again, or save it to a file and give the file"
        }
        return VerificationFailure(.invalidJWTFormat, why)
    }

    /// A decoded notification or transaction (JSON with Apple's fields, no signed text in it).
    public static func decodedPayload(_ line: String) -> VerificationFailure? {
        guard line.hasPrefix("{"), let json = try? JSONParser.parse(Array(line.utf8)), case .object = json else {
            return nil
        }
        for key in [
            "signedPayload", "signedTransactionInfo", "signedRenewalInfo", "signedTransactions",
            "notificationHistory",
        ] where json[key] != nil {
            return nil
        }
        let decodedKeys = ["notificationType", "notificationUUID", "transactionId", "originalTransactionId", "data"]
        guard let found = decodedKeys.first(where: { json[$0] != nil }) else { return nil }
        return VerificationFailure(
            .invalidPayload,
            "this is a decoded payload (it has \(found)), not the signed text: nothing in it can be verified; "
                + "paste the signedPayload (the JWS starting with eyJ) that Apple posted, or the whole webhook body")
    }
}

extension PasteDamage {
    /// Base64url characters of an ES256 signature (64 bytes): Apple signs with ES256.
    static let signatureLength = 86
    /// The format failure of a signature segment that does not decode.
    static let signatureNotBase64URL = "the signature segment is not base64url"

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
        // A cut leaving 4n+1 characters (85, 43) is not even base64url: the same damage.
        guard let failure = report.failure,
            failure.code == .invalidSignature || failure.message == Self.signatureNotBase64URL,
            let length = cutSignature(jws)
        else { return report }
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
