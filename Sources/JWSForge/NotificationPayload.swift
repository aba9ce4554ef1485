import IAPFoundation

/// An Apple `ResponseBodyV2DecodedPayload` with a `data` member (Apple's App Store Server Notifications V2 documentation).
public struct NotificationPayload: Sendable, Equatable {
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String
    public var version: String = "2.0"
    /// ms since the epoch.
    public var signedDate: Int64
    /// `data.appAppleId`; omitted when nil (Apple omits it in Sandbox TEST notifications).
    public var appAppleId: Int64?
    public var bundleId: String
    public var bundleVersion: String?
    public var environment: String
    /// A compact JWS; omitted when nil.
    public var signedTransactionInfo: String?
    /// A compact JWS; omitted when nil.
    public var signedRenewalInfo: String?
    /// 1 ACTIVE, 2 EXPIRED, 3 BILLING_RETRY, 4 BILLING_GRACE_PERIOD, 5 REVOKED; omitted when nil.
    public var status: Int64?
    /// `data.consumptionRequestReason` (CONSUMPTION_REQUEST); omitted when nil.
    public var consumptionRequestReason: String?

    /// A notification; `data` holds the app identifiers, environment and the nested JWS.
    public init(
        notificationType: String, subtype: String? = nil, notificationUUID: String, signedDate: Int64,
        appAppleId: Int64?, bundleId: String, bundleVersion: String? = "1", environment: String,
        signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil, status: Int64? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
    }

    /// The `data.status` Apple sends for a notification type/subtype (nil for TEST).
    public static func defaultStatus(type: String, subtype: String?) -> Int64? {
        switch type {
        case "TEST": return nil
        case "EXPIRED", "GRACE_PERIOD_EXPIRED": return 2
        case "DID_FAIL_TO_RENEW": return subtype == "GRACE_PERIOD" ? 4 : 3
        case "REVOKE": return 5
        default: return 1
        }
    }

    /// Compact JSON in Apple's order: notificationType, subtype, notificationUUID, data{…}, version, signedDate.
    public var json: String {
        var data = JSONObjectWriter()
        data.addIfPresent("appAppleId", appAppleId)
        data.add("bundleId", bundleId)
        data.addIfPresent("bundleVersion", bundleVersion)
        data.add("environment", environment)
        data.addIfPresent("signedTransactionInfo", signedTransactionInfo)
        data.addIfPresent("signedRenewalInfo", signedRenewalInfo)
        data.addIfPresent("status", status)
        data.addIfPresent("consumptionRequestReason", consumptionRequestReason)
        var w = JSONObjectWriter()
        w.add("notificationType", notificationType)
        w.addIfPresent("subtype", subtype)
        w.add("notificationUUID", notificationUUID)
        w.add("data", raw: data.json)
        w.add("version", version)
        w.add("signedDate", signedDate)
        return w.json
    }
}
