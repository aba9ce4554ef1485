import AppStoreJWS

/// Streams the JWS of a command's input: one per line (raw JWS, webhook body, or an App Store
/// Server API response carrying several), or one pretty-printed JSON document.
struct InputItems {
    /// The longest line read (a notification with its nested JWS is ~15 KB).
    static let maxLineBytes = 1 << 20

    let reader: InputReader
    private var pending: [WebhookBody.Item] = []
    private var sawInput = false

    init(_ reader: InputReader) {
        self.reader = reader
    }

    /// Whether any non-blank input was seen.
    var isEmpty: Bool { !sawInput }

    /// Whether `next()` can answer without waiting more than `milliseconds` for input (a pipe
    /// that stays open, `tail -f`): an item is pending, a whole line is read, or input arrives.
    func isReady(waiting milliseconds: Int32) -> Bool {
        !pending.isEmpty || reader.hasBufferedLine || reader.waitForInput(milliseconds: milliseconds)
    }

    /// The next item, or nil at the end of the input.
    mutating func next() throws(CLIError) -> WebhookBody.Item? {
        while true {
            if !pending.isEmpty { return pending.removeFirst() }
            let line: String?
            do {
                line = try reader.readLine(maxLength: Self.maxLineBytes)
            } catch {
                if error.code == .dataError {
                    sawInput = true
                    let why =
                        error.message.hasSuffix("not valid UTF-8")
                        ? "line is not valid UTF-8: skipped" : "line is longer than \(Self.maxLineBytes) bytes: skipped"
                    return WebhookBody.Item(line: reader.lineNumber, result: .failure(VerificationFailure(.invalidJWTFormat, why)))
                }
                throw error
            }
            guard let line else { return nil }
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty { continue }
            sawInput = true
            let number = reader.lineNumber
            if trimmed.hasPrefix("{"), Self.isUnfinishedJSON(Array(trimmed.utf8)) {
                // A pretty-printed document (e.g. a saved Get Notification History response): its
                // first line is valid JSON that stops short. A line that is simply malformed JSON
                // is rejected on its own below and the lines after it are read as usual.
                let rest = try reader.readAllText(maxBytes: 64 << 20)
                pending = WebhookBody.items(in: line + "\n" + rest).map {
                    WebhookBody.Item(line: number + $0.line - 1, result: $0.result)
                }
                continue
            }
            do {
                pending = try WebhookBody.jwsTokens(in: line).map { WebhookBody.Item(line: number, result: .success($0)) }
            } catch {
                pending = [WebhookBody.Item(line: number, result: .failure(error))]
            }
        }
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
