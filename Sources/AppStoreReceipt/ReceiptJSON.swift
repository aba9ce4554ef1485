#if canImport(AppStoreJWS)
    import AppStoreJWS
#endif

extension AppReceipt {
    /// The receipt in verifyReceipt's field names (`receipt_type`, `bundle_id`, `in_app`…), dates as
    /// `…_ms` integers; absent fields are left out. Opaque value and hash are hex.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        func add(_ key: String, _ value: JSONValue?) { if let value { members.append((key, value)) } }
        add("receipt_type", receiptType.map(JSONValue.string))
        add("bundle_id", bundleId.map(JSONValue.string))
        add("application_version", appVersion.map(JSONValue.string))
        add("original_application_version", originalAppVersion.map(JSONValue.string))
        add("receipt_creation_date_ms", creationDate.map(JSONValue.int))
        add("expiration_date_ms", expirationDate.map(JSONValue.int))
        add("opaque_value", opaqueValue.map { .string(Self.hex($0)) })
        add("sha1_hash", sha1Hash.map { .string(Self.hex($0)) })
        members.append(("in_app", .array(inApp.map(\.json))))
        return .object(members)
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }
}

extension InAppPurchase {
    /// One `in_app` entry in verifyReceipt's field names; dates as `…_ms` integers.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        func add(_ key: String, _ value: JSONValue?) { if let value { members.append((key, value)) } }
        add("quantity", quantity.map(JSONValue.int))
        add("product_id", productId.map(JSONValue.string))
        add("transaction_id", transactionId.map(JSONValue.string))
        add("original_transaction_id", originalTransactionId.map(JSONValue.string))
        add("purchase_date_ms", purchaseDate.map(JSONValue.int))
        add("original_purchase_date_ms", originalPurchaseDate.map(JSONValue.int))
        add("expires_date_ms", expiresDate.map(JSONValue.int))
        add("cancellation_date_ms", cancellationDate.map(JSONValue.int))
        add("web_order_line_item_id", webOrderLineItemId.map { .string(String($0)) })
        add("is_trial_period", isTrialPeriod.map(JSONValue.bool))
        add("is_in_intro_offer_period", isInIntroOfferPeriod.map(JSONValue.bool))
        return .object(members)
    }
}
