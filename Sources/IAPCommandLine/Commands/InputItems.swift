import AppStoreJWS
import AppStoreReceipt
import IAPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams the JWS of a command's input: one per line (raw JWS, webhook body, or an App Store
/// Server API response carrying several), or one pretty-printed JSON document.
struct InputItems {
    /// The longest line read (a notification with its nested JWS is ~15 KB).
    static let maxLineBytes = 1 << 20
    /// The longest line where receipts are accepted: a base64 receipt of the largest size verified.
    static let maxReceiptLineBytes = (ReceiptVerifier.maxInputBytes + 2) / 3 * 4 + 4096

    /// The line limit of this input.
    var maxLine: Int { acceptsReceipts ? Self.maxReceiptLineBytes : Self.maxLineBytes }

    let reader: InputReader
    /// Also read StoreKit 1 receipts (`verify`, `restore`): a DER file, or a line (or document)
    /// `{"receipt-data": "…"}`. Each becomes an item holding the receipt's base64; base64 lines
    /// need nothing special (they are told from a JWS by ``ReceiptInput/der(fromBase64:)``).
    let acceptsReceipts: Bool
    private var pending: [WebhookBody.Item] = []
    private var sawInput = false
    private var checkedForDER = false
    /// A line read while joining a wrapped base64 receipt or JWS that was not part of it: the next
    /// item (with its line number).
    private var carried: (line: String, number: Int)?

    init(_ reader: InputReader, acceptsReceipts: Bool = false) {
        self.reader = reader
        self.acceptsReceipts = acceptsReceipts
    }

    /// Whether any non-blank input was seen.
    var isEmpty: Bool { !sawInput }

    /// Whether `next()` can answer without waiting more than `milliseconds` for input (a pipe
    /// that stays open, `tail -f`): an item is pending, a whole line is read, or input arrives.
    func isReady(waiting milliseconds: Int32) -> Bool {
        !pending.isEmpty || reader.hasBufferedLine || reader.waitForInput(milliseconds: milliseconds)
    }

    /// The next item, or nil at the end of the input or, when `interruptible`, once Ctrl-C arrived
    /// (before the read, or while it waited: the read is then given up, not reported as an error).
    mutating func next(interruptible: Bool) throws(CLIError) -> WebhookBody.Item? {
        if interruptible && Interrupt.isRequested { return nil }
        do {
            return try next()
        } catch {
            if interruptible && Interrupt.isRequested { return nil }
            throw error
        }
    }

    /// The next item, or nil at the end of the input.
    mutating func next() throws(CLIError) -> WebhookBody.Item? {
        if acceptsReceipts, !checkedForDER {
            checkedForDER = true
            if ReceiptInput.looksLikeDER(try reader.peek(2)) {
                // A binary receipt: the whole input is one item.
                let bytes = try reader.readAll(maxBytes: ReceiptVerifier.maxInputBytes)
                sawInput = true
                return WebhookBody.Item(line: 1, result: .success(Base64.encodeStandard(bytes)))
            }
        }
        while true {
            if !pending.isEmpty { return pending.removeFirst() }
            var line: String? = carried?.line
            var number = carried?.number ?? reader.lineNumber
            carried = nil
            do {
                if line == nil {
                    line = try reader.readLine(maxLength: maxLine)
                    number = reader.lineNumber
                }
            } catch {
                if error.code == .dataError {
                    sawInput = true
                    let why =
                        error.message.hasSuffix("not valid UTF-8")
                        ? "line is not valid UTF-8: skipped" : "line is longer than \(maxLine) bytes: skipped"
                    return WebhookBody.Item(line: reader.lineNumber, result: .failure(VerificationFailure(.invalidJWTFormat, why)))
                }
                throw error
            }
            guard var line else { return nil }
            // A byte-order mark (Windows editors, some clipboards) is not part of the input.
            if line.hasPrefix("\u{FEFF}") { line.removeFirst() }
            let trimmed = String(line.trimmed(.spacesAndTabs))
            if trimmed.isEmpty { continue }
            sawInput = true
            if PasteDamage.isJWSFragment(trimmed) {
                pending = [WebhookBody.Item(line: number, result: .failure(try fragment(trimmed, number: number)))]
                continue
            }
            if let failure = PasteDamage.decodedPayload(trimmed) {
                pending = [WebhookBody.Item(line: number, result: .failure(failure))]
                continue
            }
            if acceptsReceipts, let wrapped = try wrappedReceipt(trimmed) {
                pending = [WebhookBody.Item(line: number, result: .success(wrapped))]
                continue
            }
            if trimmed.hasPrefix("{"), Self.isUnfinishedJSON(Array(trimmed.utf8)) {
                // A pretty-printed document (e.g. a saved Get Notification History response): its
                // first line is valid JSON that stops short. A line that is simply malformed JSON
                // is rejected on its own below and the lines after it are read as usual.
                let rest = try reader.readAllText(maxBytes: 64 << 20)
                if let item = receiptBody(line + "\n" + rest, line: number) {
                    pending = [item]
                    continue
                }
                pending = WebhookBody.items(in: line + "\n" + rest).map {
                    WebhookBody.Item(line: number + $0.line - 1, result: $0.result)
                }
                continue
            }
            if trimmed.hasPrefix("{"), let item = receiptBody(trimmed, line: number) {
                pending = [item]
                continue
            }
            do {
                pending = try WebhookBody.jwsTokens(in: line).map { WebhookBody.Item(line: number, result: .success($0)) }
            } catch {
                pending = [WebhookBody.Item(line: number, result: .failure(error))]
            }
        }
    }

    /// A base64 receipt wrapped over several lines (as `base64` and `openssl base64` print it),
    /// joined: `first` starts a receipt whose DER header announces more bytes than the line holds,
    /// and the following base64-only lines complete it (up to a blank line, a line of something
    /// else, which becomes the next item, or the end of the input). Nil when `first` is not such a start.
    private mutating func wrappedReceipt(_ first: String) throws(CLIError) -> String? {
        func isBase64(_ text: String) -> Bool {
            text.utf8.allSatisfy {
                ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2F
                    || $0 == 0x3D
            }
        }
        guard first.hasPrefix("MI"), isBase64(first), let start = ReceiptInput.der(fromBase64: String(first.prefix(8))),
            let expected = ReceiptInput.declaredLength(start), expected > first.utf8.count / 4 * 3,
            expected <= ReceiptVerifier.maxInputBytes
        else { return nil }
        var text = first
        while text.utf8.count / 4 * 3 < expected, let next = try reader.readLine(maxLength: maxLine) {
            let trimmed = String(next.trimmed(.spacesAndTabs))
            if trimmed.isEmpty { break }
            guard isBase64(trimmed) else {
                carried = (next, reader.lineNumber)
                break
            }
            text += trimmed
        }
        return text
    }

    /// The receipt of a verifyReceipt-style body `{"receipt-data": "…"}`; nil when the text is not
    /// such a body (or receipts are not accepted here).
    private func receiptBody(_ text: String, line: Int) -> WebhookBody.Item? {
        guard acceptsReceipts, let json = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        do {
            guard let data = try ReceiptInput.receiptData(in: json) else { return nil }
            guard ReceiptInput.der(fromBase64: data) != nil else {
                return WebhookBody.Item(
                    line: line, result: .failure(VerificationFailure(.invalidPayload, "receipt-data is not a base64 app receipt")))
            }
            return WebhookBody.Item(line: line, result: .success(data))
        } catch {
            return WebhookBody.Item(line: line, result: .failure(VerificationFailure(.invalidPayload, error.message)))
        }
    }

    /// The failure for a JWS that is not whole: wrapped over several lines (the continuation
    /// lines are taken with it, so it is reported once) or cut short.
    private mutating func fragment(_ first: String, number: Int) throws(CLIError) -> VerificationFailure {
        var last = number
        var joined = first
        while let next = try reader.readLine(maxLength: maxLine) {
            let trimmed = String(next.trimmed(.spacesAndTabs))
            guard PasteDamage.isContinuation(trimmed) else {
                carried = (next, reader.lineNumber)
                break
            }
            joined += trimmed
            last = reader.lineNumber
        }
        return PasteDamage.fragmentFailure(
            first: first, joined: joined, lines: number...last, fromTerminal: reader.isTerminal)
    }

    /// Whether `bytes` is the start of a JSON document that ends too early (not a malformed one).
    static func isUnfinishedJSON(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try JSONParser.parse(bytes)
            return false
        } catch {
            return error.offset >= bytes.count
        }
    }
}

/// Copy-paste damage, told apart from forgery: a JWS cut short (a terminal's 4 KB line limit, a
/// chat tool), wrapped at 76 columns (e-mail, base64 tools), or its decoded payload pasted
/// instead of the signed text. Each gets a hint saying what to do, not a signature verdict.
enum PasteDamage {
    /// Base64url characters (and `=` padding).
    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            return true
        default: return false
        }
    }

    /// The start of a JWS (`eyJ` is `{"` in base64url) with fewer than three segments.
    static func isJWSFragment(_ line: String) -> Bool {
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
    static func isContinuation(_ line: String) -> Bool {
        !line.isEmpty && !line.hasPrefix("eyJ")
            && line.utf8.allSatisfy { isBase64URL($0) || $0 == UInt8(ascii: ".") }
    }

    static func fragmentFailure(first: String, joined: String, lines: ClosedRange<Int>, fromTerminal: Bool)
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
        if bytes == 4095 || bytes == 4096 || fromTerminal {
            why +=
                "; a terminal keeps at most 4,095 bytes of a pasted line: save it to a file and give the file "
                + "name as the argument (iapctl notify FILE, iapctl verify FILE)"
        } else {
            why += "; copy the whole text again, or save it to a file and give the file"
        }
        return VerificationFailure(.invalidJWTFormat, why)
    }

    /// A decoded notification or transaction (JSON with Apple's fields, no signed text in it).
    static func decodedPayload(_ line: String) -> VerificationFailure? {
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
