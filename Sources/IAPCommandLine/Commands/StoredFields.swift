import SubscriptionEngine

extension StoredFields {
    /// The result line of a refused poison item: its ids that fit, and why.
    static func rejectedResult(line: Int, _ event: SubscriptionEvent, _ why: String) -> ItemResult {
        var result = ItemResult.rejected(line: line, code: .dataError, why)
        result.notificationUUID = fitting(event.notificationUUID)
        result.notificationType = fitting(event.notificationType)
        result.subtype = fitting(event.subtype)
        result.transactionId = fitting(event.transaction?.transactionId)
        result.originalTransactionId = fitting(event.transaction?.originalTransactionId ?? event.renewal?.originalTransactionId)
        return result
    }
}
