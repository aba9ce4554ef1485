import AppStoreJWS
import IAPOperations

/// A command's input as items (``ItemReader`` frames them: raw JWS, webhook bodies, API
/// responses, receipts, paste damage), read from stdin or a file, with Ctrl-C and readiness.
struct InputItems {
    private var items: ItemReader<InputReader>

    init(_ reader: InputReader, acceptsReceipts: Bool = false) {
        items = ItemReader(reader, acceptsReceipts: acceptsReceipts)
    }

    /// Whether any non-blank input was seen.
    var isEmpty: Bool { items.isEmpty }

    /// Whether `next()` can answer without waiting more than `milliseconds` for input (a pipe
    /// that stays open, `tail -f`): an item is pending, a whole line is read, or input arrives.
    func isReady(waiting milliseconds: Int32) -> Bool {
        items.hasPending || items.source.hasBufferedLine || items.source.waitForInput(milliseconds: milliseconds)
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
    mutating func next() throws(CLIError) -> WebhookBody.Item? { try items.next() }
}

extension InputReader: ItemSource {
    /// A line skipped as not UTF-8 or too long (a `.dataError` of `readLine`) is an item of its own.
    public func unreadableLine(_ error: CLIError) -> UnreadableLine? {
        guard error.code == .dataError else { return nil }
        return error.message.hasSuffix("not valid UTF-8") ? .invalidUTF8 : .tooLong
    }
}
