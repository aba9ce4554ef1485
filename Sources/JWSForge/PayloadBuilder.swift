import IAPFoundation

/// Signs Apple-shaped notifications: nested transaction and renewal JWS plus the outer JWS, all with one PKI.
public struct PayloadBuilder: Sendable {
    /// The signer (its leaf key and x5c are reused for every JWS).
    public let pki: TestPKI
    /// `data.bundleId`.
    public var bundleId: String
    /// `data.environment` ("Sandbox", "Production", …).
    public var environment: String
    /// `data.appAppleId` (nil: omitted).
    public var appAppleId: Int64?
    /// `data.bundleVersion`.
    public var bundleVersion: String?

    /// A builder for one app and environment.
    public init(
        pki: TestPKI, bundleId: String, environment: String, appAppleId: Int64? = 1_234_567_890,
        bundleVersion: String? = "1"
    ) {
        self.pki = pki
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
    }

    /// A signed notification (compact JWS) whose `data` nests `transaction` and `renewal` as signed JWS.
    ///
    /// `status`: left out (`.none`) → `NotificationPayload.defaultStatus(type:subtype:)`; `.some(nil)` → omitted.
    public func notification(
        type: String, subtype: String? = nil, uuid: String, signedDate: Int64,
        transaction: TransactionPayload?, renewal: RenewalInfoPayload? = nil, status: Int64?? = .none
    ) throws -> String {
        try notification(
            type: type, subtype: subtype, uuid: uuid, signedDate: signedDate,
            transactionJSON: transaction?.json, renewalJSON: renewal?.json, status: status)
    }

    /// Same as `notification(type:…transaction:renewal:)` with the nested payloads given as JSON text (signed as is).
    public func notification(
        type: String, subtype: String? = nil, uuid: String, signedDate: Int64,
        transactionJSON: String?, renewalJSON: String?, status: Int64?? = .none
    ) throws -> String {
        let payload = NotificationPayload(
            notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: signedDate,
            appAppleId: appAppleId, bundleId: bundleId, bundleVersion: bundleVersion, environment: environment,
            signedTransactionInfo: try transactionJSON.map { try pki.sign(payload: $0) },
            signedRenewalInfo: try renewalJSON.map { try pki.sign(payload: $0) },
            status: status ?? NotificationPayload.defaultStatus(type: type, subtype: subtype))
        return try pki.sign(payload: payload.json)
    }

    /// A signed TEST notification: `data` holds only bundleId, environment (and appAppleId when set).
    public func testNotification(uuid: String, signedDate: Int64) throws -> String {
        var payload = NotificationPayload(
            notificationType: "TEST", notificationUUID: uuid, signedDate: signedDate, appAppleId: appAppleId,
            bundleId: bundleId, bundleVersion: nil, environment: environment)
        payload.status = nil
        return try pki.sign(payload: payload.json)
    }

    /// A signed CONSUMPTION_REQUEST for `transaction` with Apple's `consumptionRequestReason`.
    public func consumptionRequest(
        uuid: String, signedDate: Int64, transaction: TransactionPayload, reason: String = "UNINTENDED_PURCHASE"
    ) throws -> String {
        var payload = NotificationPayload(
            notificationType: "CONSUMPTION_REQUEST", notificationUUID: uuid, signedDate: signedDate,
            appAppleId: appAppleId, bundleId: bundleId, bundleVersion: bundleVersion, environment: environment,
            signedTransactionInfo: try pki.sign(payload: transaction.json), status: 1)
        payload.consumptionRequestReason = reason
        return try pki.sign(payload: payload.json)
    }

    /// A signed RESCIND_CONSENT: a top-level `appData` (no `data`) nesting a signed AppTransaction.
    public func rescindConsent(uuid: String, signedDate: Int64, appTransactionId: String, originalPurchaseDate: Int64)
        throws -> String
    {
        var app = JSONObjectWriter()
        app.add("receiptType", environment)
        app.addIfPresent("appAppleId", appAppleId)
        app.add("bundleId", bundleId)
        app.add("applicationVersion", bundleVersion ?? "1")
        app.add("receiptCreationDate", signedDate)
        app.add("originalPurchaseDate", originalPurchaseDate)
        app.add("originalApplicationVersion", "1")
        app.add("appTransactionId", appTransactionId)
        app.add("originalPlatform", "iOS")
        app.add("signedDate", signedDate)
        var appData = JSONObjectWriter()
        appData.addIfPresent("appAppleId", appAppleId)
        appData.add("bundleId", bundleId)
        appData.add("environment", environment)
        appData.add("signedAppTransactionInfo", try pki.sign(payload: app.json))
        var w = JSONObjectWriter()
        w.add("notificationType", "RESCIND_CONSENT")
        w.add("notificationUUID", uuid)
        w.add("appData", raw: appData.json)
        w.add("version", "2.0")
        w.add("signedDate", signedDate)
        return try pki.sign(payload: w.json)
    }
}
