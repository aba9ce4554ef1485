import AppStoreJWS
import AppStoreReceipt
import IAPFoundation

/// Where ``ItemReader`` gets its bytes: lines with a length limit, or everything at once (stdin, a
/// file, or memory in tests). Its errors pass through ``ItemReader`` unchanged, except those
/// ``unreadableLine(_:)`` recognises: a line the source skipped becomes an item of its own.
public protocol ItemSource: AnyObject {
    associatedtype ReadError: Error
    /// The 1-based number of the last line returned or skipped.
    var lineNumber: Int { get }
    /// Whether the input is a terminal (a person pasting).
    var isTerminal: Bool { get }
    /// The next line without its `\n` or `\r\n`, or nil at the end of the input.
    func readLine(maxLength: Int) throws(ReadError) -> String?
    /// Up to `count` bytes ahead, without consuming them.
    func peek(_ count: Int) throws(ReadError) -> [UInt8]
    /// Every remaining byte; an error when there are more than `maxBytes`.
    func readAll(maxBytes: Int) throws(ReadError) -> [UInt8]
    /// Every remaining byte as UTF-8 text; an error when there are more than `maxBytes`.
    func readAllText(maxBytes: Int) throws(ReadError) -> String
    /// Why `readLine` refused a line it skipped (reading goes on with the next line), or nil when
    /// `error` is a failure of the input itself.
    func unreadableLine(_ error: ReadError) -> UnreadableLine?
}

/// A line an ``ItemSource`` skipped: reported as an item, then the next line is read.
public enum UnreadableLine: Sendable, Equatable {
    case invalidUTF8
    case tooLong
}

/// The limits and the stateless checks of ``ItemReader``.
public enum ItemFraming {
    /// The longest line read (a notification with its nested JWS is ~15 KB).
    public static let maxLineBytes = 1 << 20
    /// The longest line where receipts are accepted: a base64 receipt of the largest size verified.
    public static let maxReceiptLineBytes = (ReceiptVerifier.maxInputBytes + 2) / 3 * 4 + 4096
    /// The largest pretty-printed JSON document read (e.g. a saved Get Notification History response).
    public static let maxDocumentBytes = 64 << 20

    /// Whether `bytes` is the start of a JSON document that ends too early (not a malformed one).
    public static func isUnfinishedJSON(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try JSONParser.parse(bytes)
            return false
        } catch {
            return error.offset >= bytes.count
        }
    }

    /// The receipt of a verifyReceipt-style body `{"receipt-data": "…"}` as an item numbered
    /// `line`; nil when the text is not such a body.
    public static func receiptBody(_ text: String, line: Int) -> WebhookBody.Item? {
        guard let json = try? JSONParser.parse(Array(text.utf8)) else { return nil }
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

    /// Standard base64 characters (and `=` padding) only.
    static func isBase64(_ text: String) -> Bool {
        text.utf8.allSatisfy {
            ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2F
                || $0 == 0x3D
        }
    }
}

/// Streams the JWS of a command's input: one per line (raw JWS, webhook body, or an App Store
/// Server API response carrying several), or one pretty-printed JSON document. Lines are read only
/// as items are asked for, so a pipe that stays open (`tail -f`) is served as it arrives.
public struct ItemReader<Source: ItemSource> {
    public let source: Source
    /// Also read StoreKit 1 receipts (`verify`, `restore`): a DER file, or a line (or document)
    /// `{"receipt-data": "…"}`. Each becomes an item holding the receipt's base64; base64 lines
    /// need nothing special (they are told from a JWS by ``ReceiptInput/der(fromBase64:)``).
    public let acceptsReceipts: Bool
    private var pending: [WebhookBody.Item] = []
    private var sawInput = false
    private var checkedForDER = false
    /// A line read while joining a wrapped base64 receipt or JWS that was not part of it: the next
    /// item (with its line number).
    private var carried: (line: String, number: Int)?

    public init(_ source: Source, acceptsReceipts: Bool = false) {
        self.source = source
        self.acceptsReceipts = acceptsReceipts
    }

    /// The line limit of this input.
    public var maxLine: Int { acceptsReceipts ? ItemFraming.maxReceiptLineBytes : ItemFraming.maxLineBytes }

    /// Whether any non-blank input was seen.
    public var isEmpty: Bool { !sawInput }

    /// Whether an item is framed and waiting: `next()` returns it without reading.
    public var hasPending: Bool { !pending.isEmpty }

    /// The next item, or nil at the end of the input.
    public mutating func next() throws(Source.ReadError) -> WebhookBody.Item? {
        if acceptsReceipts, !checkedForDER {
            checkedForDER = true
            if ReceiptInput.looksLikeDER(try source.peek(2)) {
                // A binary receipt: the whole input is one item.
                let bytes = try source.readAll(maxBytes: ReceiptVerifier.maxInputBytes)
                sawInput = true
                return WebhookBody.Item(line: 1, result: .success(Base64.encodeStandard(bytes)))
            }
        }
        while true {
            if !pending.isEmpty { return pending.removeFirst() }
            var line: String? = carried?.line
            var number = carried?.number ?? source.lineNumber
            carried = nil
            do throws(Source.ReadError) {
                if line == nil {
                    line = try source.readLine(maxLength: maxLine)
                    number = source.lineNumber
                }
            } catch {
                guard let unreadable = source.unreadableLine(error) else { throw error }
                sawInput = true
                let why =
                    unreadable == .invalidUTF8
                    ? "line is not valid UTF-8: skipped" : "line is longer than \(maxLine) bytes: skipped"
                return WebhookBody.Item(line: source.lineNumber, result: .failure(VerificationFailure(.invalidJWTFormat, why)))
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
            if trimmed.hasPrefix("{"), ItemFraming.isUnfinishedJSON(Array(trimmed.utf8)) {
                // A pretty-printed document (e.g. a saved Get Notification History response): its
                // first line is valid JSON that stops short. A line that is simply malformed JSON
                // is rejected on its own below and the lines after it are read as usual.
                let rest = try source.readAllText(maxBytes: ItemFraming.maxDocumentBytes)
                if acceptsReceipts, let item = ItemFraming.receiptBody(line + "\n" + rest, line: number) {
                    pending = [item]
                    continue
                }
                pending = WebhookBody.items(in: line + "\n" + rest).map {
                    WebhookBody.Item(line: number + $0.line - 1, result: $0.result)
                }
                continue
            }
            if trimmed.hasPrefix("{"), acceptsReceipts, let item = ItemFraming.receiptBody(trimmed, line: number) {
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
    private mutating func wrappedReceipt(_ first: String) throws(Source.ReadError) -> String? {
        guard first.hasPrefix("MI"), ItemFraming.isBase64(first),
            let start = ReceiptInput.der(fromBase64: String(first.prefix(8))),
            let expected = ReceiptInput.declaredLength(start), expected > first.utf8.count / 4 * 3,
            expected <= ReceiptVerifier.maxInputBytes
        else { return nil }
        var text = first
        while text.utf8.count / 4 * 3 < expected, let next = try source.readLine(maxLength: maxLine) {
            let trimmed = String(next.trimmed(.spacesAndTabs))
            if trimmed.isEmpty { break }
            guard ItemFraming.isBase64(trimmed) else {
                carried = (next, source.lineNumber)
                break
            }
            text += trimmed
        }
        return text
    }

    /// The failure for a JWS that is not whole: wrapped over several lines (the continuation
    /// lines are taken with it, so it is reported once) or cut short.
    private mutating func fragment(_ first: String, number: Int) throws(Source.ReadError) -> VerificationFailure {
        var last = number
        var joined = first
        while let next = try source.readLine(maxLength: maxLine) {
            let trimmed = String(next.trimmed(.spacesAndTabs))
            guard PasteDamage.isContinuation(trimmed) else {
                carried = (next, source.lineNumber)
                break
            }
            joined += trimmed
            last = source.lineNumber
        }
        return PasteDamage.fragmentFailure(
            first: first, joined: joined, lines: number...last, fromTerminal: source.isTerminal)
    }
}
