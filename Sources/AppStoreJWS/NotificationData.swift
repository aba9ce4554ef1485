/// A notification's `data` object.
public struct NotificationData: Sendable, Equatable {
    public var environment: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    /// Nested transaction JWS.
    public var signedTransactionInfo: String?
    /// Nested renewal info JWS.
    public var signedRenewalInfo: String?
    /// 1 ACTIVE, 2 EXPIRED, 3 BILLING_RETRY, 4 BILLING_GRACE_PERIOD, 5 REVOKED (raw).
    public var status: Int32?
    public var consumptionRequestReason: String?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        environment = try r.string("environment")
        appAppleId = try r.int64("appAppleId")
        bundleId = try r.string("bundleId")
        bundleVersion = try r.string("bundleVersion")
        signedTransactionInfo = try r.string("signedTransactionInfo")
        signedRenewalInfo = try r.string("signedRenewalInfo")
        status = try r.int32("status")
        consumptionRequestReason = try r.string("consumptionRequestReason")
        self.json = .object(r.members)
    }

}

/// A notification's `summary` object (RENEWAL_EXTENSION / SUMMARY).
public struct NotificationSummary: Sendable, Equatable {
    public var environment: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var succeededCount: Int64?
    public var failedCount: Int64?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        environment = try r.string("environment")
        appAppleId = try r.int64("appAppleId")
        bundleId = try r.string("bundleId")
        productId = try r.string("productId")
        requestIdentifier = try r.string("requestIdentifier")
        storefrontCountryCodes = try r.stringArray("storefrontCountryCodes")
        succeededCount = try r.int64("succeededCount")
        failedCount = try r.int64("failedCount")
        self.json = .object(r.members)
    }

}

/// A notification's `externalPurchaseToken` object.
public struct ExternalPurchaseToken: Sendable, Equatable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: Int64?
    public var appAppleId: Int64?
    public var bundleId: String?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        externalPurchaseId = try r.string("externalPurchaseId")
        tokenCreationDate = try r.date("tokenCreationDate")
        appAppleId = try r.int64("appAppleId")
        bundleId = try r.string("bundleId")
        self.json = .object(r.members)
    }

    /// Derived: "Sandbox" when `externalPurchaseId` starts with "SANDBOX", else "Production".
    public var environment: String {
        ((externalPurchaseId ?? "").hasPrefix("SANDBOX") ? EnvironmentName.sandbox : .production).rawValue
    }
}

/// A notification's `appData` object (RESCIND_CONSENT).
public struct NotificationAppData: Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: String?
    /// Nested AppTransaction JWS.
    public var signedAppTransactionInfo: String?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    init(fields r: PayloadFields) throws(VerificationFailure) {
        appAppleId = try r.int64("appAppleId")
        bundleId = try r.string("bundleId")
        environment = try r.string("environment")
        signedAppTransactionInfo = try r.string("signedAppTransactionInfo")
        self.json = .object(r.members)
    }

}
