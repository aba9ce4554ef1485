/// A decoded App Store Server Notification V2 (`ResponseBodyV2DecodedPayload`).
public struct NotificationPayload: Sendable, Equatable {
    /// e.g. DID_RENEW; unknown values are kept as sent.
    public var notificationType: NotificationType?
    /// e.g. VOLUNTARY; unknown values are kept as sent.
    public var subtype: NotificationSubtype?
    /// Idempotency key.
    public var notificationUUID: String?
    public var version: String?
    /// ms since epoch.
    public var signedDate: Int64?
    public var data: NotificationData?
    public var summary: NotificationSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: NotificationAppData?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    /// Builds the model from a decoded payload; a known field of the wrong JSON type throws ``VerificationFailure/Code/invalidPayload``.
    public init(json: JSONValue) throws(VerificationFailure) {
        let r = try PayloadFields(json, path: "")
        notificationType = try r.string("notificationType").map(NotificationType.init(rawValue:))
        subtype = try r.string("subtype").map(NotificationSubtype.init(rawValue:))
        notificationUUID = try r.string("notificationUUID")
        version = try r.string("version")
        signedDate = try r.date("signedDate")
        data = try r.object("data").map { (o) throws(VerificationFailure) in try NotificationData(fields: o) }
        summary = try r.object("summary").map { (o) throws(VerificationFailure) in try NotificationSummary(fields: o) }
        externalPurchaseToken = try r.object("externalPurchaseToken").map { (o) throws(VerificationFailure) in
            try ExternalPurchaseToken(fields: o)
        }
        appData = try r.object("appData").map { (o) throws(VerificationFailure) in try NotificationAppData(fields: o) }
        self.json = json
    }

    /// Where the app identity comes from: `data` ▸ `summary` ▸ `externalPurchaseToken` ▸ `appData`.
    public var appIdentity: (bundleId: String?, appAppleId: Int64?, environment: String?)? {
        if let data { return (data.bundleId, data.appAppleId, data.environment) }
        if let summary { return (summary.bundleId, summary.appAppleId, summary.environment) }
        if let externalPurchaseToken {
            return (externalPurchaseToken.bundleId, externalPurchaseToken.appAppleId, externalPurchaseToken.environment)
        }
        if let appData { return (appData.bundleId, appData.appAppleId, appData.environment) }
        return nil
    }
}
