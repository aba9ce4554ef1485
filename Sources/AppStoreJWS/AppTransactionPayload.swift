/// A decoded AppTransaction (the app's own purchase record).
public struct AppTransactionPayload: Sendable, Equatable {
    /// Production, Sandbox, Xcode (the environment).
    public var receiptType: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Int64?
    public var originalPurchaseDate: Int64?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Int64?
    public var appTransactionId: String?
    public var originalPlatform: String?
    /// The whole decoded object, including fields this model does not know.
    public var json: JSONValue

    /// Builds the model from a decoded payload; a known field of the wrong JSON type throws ``VerificationFailure/Code/invalidPayload``.
    public init(json: JSONValue) throws(VerificationFailure) {
        let r = try PayloadFields(json, path: "")
        receiptType = try r.string("receiptType")
        appAppleId = try r.int64("appAppleId")
        bundleId = try r.string("bundleId")
        applicationVersion = try r.string("applicationVersion")
        versionExternalIdentifier = try r.int64("versionExternalIdentifier")
        receiptCreationDate = try r.date("receiptCreationDate")
        originalPurchaseDate = try r.date("originalPurchaseDate")
        originalApplicationVersion = try r.string("originalApplicationVersion")
        deviceVerification = try r.string("deviceVerification")
        deviceVerificationNonce = try r.string("deviceVerificationNonce")
        preorderDate = try r.date("preorderDate")
        appTransactionId = try r.string("appTransactionId")
        originalPlatform = try r.string("originalPlatform")
        self.json = json
    }

}
