import IAPFoundation
import SubscriptionModel

/// The engine's input: facts from an already verified Apple payload.
///
/// The command layer turns a verified notification, or a verified client/restore transaction,
/// into one `SubscriptionEvent`; the engine never sees JWS bytes except to keep them in the ledger.
public struct SubscriptionEvent: Sendable, Equatable {
    public var source: EventSource
    /// `notificationUUID` (nil for client and restore submissions).
    public var notificationUUID: String?
    /// `notificationType` (nil for client and restore submissions).
    public var notificationType: NotificationType?
    /// `subtype`.
    public var subtype: NotificationSubtype?
    /// `signedDate` of the notification (or of the transaction for client submissions).
    public var signedDate: Int64?
    public var environment: String?
    public var bundleId: String?
    /// The verified, decoded `signedTransactionInfo`.
    public var transaction: TransactionFacts?
    /// The verified, decoded `signedRenewalInfo`.
    public var renewal: RenewalFacts?
    /// The input exactly as received, for the ledger.
    public var raw: String
    /// The notification's `data.status` (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: Int?

    public init(
        source: EventSource, notificationUUID: String? = nil, notificationType: NotificationType? = nil,
        subtype: NotificationSubtype? = nil, signedDate: Int64? = nil, environment: String? = nil,
        bundleId: String? = nil, transaction: TransactionFacts? = nil, renewal: RenewalFacts? = nil,
        raw: String, status: Int? = nil
    ) {
        self.status = status
        self.source = source
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.bundleId = bundleId
        self.transaction = transaction
        self.renewal = renewal
        self.raw = raw
    }
}
