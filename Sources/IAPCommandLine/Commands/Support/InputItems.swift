import AppStoreJWS
import IAPOperations

/// A command's input as items, read from stdin or a file: ``ItemReader`` frames them (raw JWS,
/// webhook bodies, API responses, receipts, paste damage) straight from the ``InputReader``, and
/// `notify`'s ``VerifiedBatches`` reads them as they come.
typealias InputItems = ItemReader<InputReader>

extension ItemReader: IngestInput where Source == InputReader {
    /// Whether `next()` can answer without waiting more than `milliseconds` for input (a pipe
    /// that stays open, `tail -f`): an item is pending, a whole line is read, or input arrives.
    public func isReady(waiting milliseconds: Int32) -> Bool {
        hasPending || source.hasBufferedLine || source.waitForInput(milliseconds: milliseconds)
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
}

extension InputReader: ItemSource {
    /// A line skipped as not UTF-8 or too long (a `.dataError` of `readLine`) is an item of its own.
    public func unreadableLine(_ error: CLIError) -> UnreadableLine? {
        guard error.code == .dataError else { return nil }
        return error.message.hasSuffix("not valid UTF-8") ? .invalidUTF8 : .tooLong
    }
}
