public import AppStoreJWS

/// Apple's limits on the values of the write requests (Extend a Subscription Renewal Date, Send
/// Consumption Information, Set App Account Token), checked before anything is sent.
public enum WriteRequest {
    /// A value Apple would refuse.
    public enum Refusal: Error, Sendable, Equatable {
        /// `extendByDays` not a whole number in ``extensionDays``.
        case extensionDays(String?)
        /// Consumption data without the customer's consent.
        case consentMissing
        /// `consumptionPercentage` not a whole number in ``consumptionPercentage``.
        case consumptionPercentage(String)
        /// A `requestIdentifier` that is not a UUID.
        case requestIdentifier(String)
        /// An `appAccountToken` that is not a UUID.
        case appAccountToken(String)
    }

    /// Days a renewal date may be extended by.
    public static let extensionDays: ClosedRange<Int64> = 1...90
    /// Thousandths of a percent.
    public static let consumptionPercentage: ClosedRange<Int64> = 0...100_000

    /// `extendByDays` of `text`.
    public static func extensionDays(_ text: String?) throws(Refusal) -> Int64 {
        guard let days = Int64(text ?? ""), extensionDays.contains(days) else { throw .extensionDays(text) }
        return days
    }

    /// Apple accepts consumption data only with the customer's consent.
    public static func requireConsent(_ customerConsented: Bool) throws(Refusal) {
        guard customerConsented else { throw .consentMissing }
    }

    /// `consumptionPercentage` of `text`; nil when not given.
    public static func consumptionPercentage(_ text: String?) throws(Refusal) -> Int64? {
        guard let text else { return nil }
        guard let milli = Int64(text), consumptionPercentage.contains(milli) else { throw .consumptionPercentage(text) }
        return milli
    }

    /// A given `requestIdentifier`, lowercased; nil when not given (the write derives one).
    public static func requestIdentifier(_ text: String?) throws(Refusal) -> String? {
        guard let text else { return nil }
        guard RequestIdentifier.isUUID(text) else { throw .requestIdentifier(text) }
        return text.lowercased()
    }

    /// An `appAccountToken`, as given (a UUID).
    public static func appAccountToken(_ text: String) throws(Refusal) -> String {
        guard RequestIdentifier.isUUID(text) else { throw .appAccountToken(text) }
        return text
    }
}

/// What Apple's answers about the writes say.
public enum WriteAnswer {
    /// The fields of Get Status of Subscription Renewal Date Extensions, in the order they are shown.
    public static let massExtensionStatusFields = [
        "requestIdentifier", "complete", "completeDate", "succeededCount", "failedCount",
    ]

    /// Extend a Subscription Renewal Date: Apple extended it only when `success` is true.
    public static func extended(_ answer: JSONValue?) -> Bool { answer?["success"]?.boolValue == true }

    /// Get Status of Subscription Renewal Date Extensions: the mass extension is done when `complete` is true.
    public static func massExtensionComplete(_ answer: JSONValue?) -> Bool { answer?["complete"]?.boolValue == true }
}
