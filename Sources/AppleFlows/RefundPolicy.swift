import AppStoreAPI
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// A refund policy (`refunds answer --all --policy FILE`): first-match rules on what iapctl knows
/// about a refund request, each saying what to send to Apple — or not to answer.
///
/// ```json
/// {"customer_consented": true,
///  "rules": [
///    {"name": "legal", "when": {"reason": ["LEGAL"]}, "answer": {"refund_preference": "GRANT_FULL"}},
///    {"name": "repeat-refunders", "when": {"prior_refunds_min": 2}, "answer": {"refund_preference": "DECLINE"}},
///    {"name": "rest", "when": {}, "answer": "none"}]}
/// ```
///
/// A condition on something the database does not know (the customer's tenure when the customer is
/// unknown, …) does not match: nothing is guessed. A request no rule matches is left unanswered.
public struct RefundPolicy: Sendable, Equatable {
    /// The operator asserts that every customer answered under this policy consented
    /// (`customerConsented`): Apple accepts an answer only with it.
    public var customerConsented: Bool
    public var rules: [Rule]

    /// One rule: its conditions (all must hold) and what it answers.
    public struct Rule: Sendable, Equatable {
        public var name: String
        public var when: Conditions
        /// Nil: do not answer.
        public var answer: Answer?
    }

    /// What a rule sends (each field optional: the database's knowledge fills the rest).
    public struct Answer: Sendable, Equatable {
        public var refundPreference: AppleChoices.RefundPreference?
        public var deliveryStatus: AppleChoices.DeliveryStatus?
        public var consumptionPercentage: Int64?
        public var sampleContentProvided: Bool = false
    }

    /// A rule's conditions; nil: any.
    public struct Conditions: Sendable, Equatable {
        public var productTypes: [AppleChoices.ProductType]?
        public var storefronts: [String]?
        public var reasons: [String]?
        public var currencies: [String]?
        public var delivered: Bool?
        public var tenureDaysMin: Int64?
        public var tenureDaysMax: Int64?
        public var priorRefundsMin: Int64?
        public var priorRefundsMax: Int64?
        public var consumptionMin: Int64?
        public var consumptionMax: Int64?
        public var amountMin: Int64?
        public var amountMax: Int64?
    }

    /// Why a policy file cannot be used: the rule (or the top level) and what is wrong.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var at: String
        public var problem: String
        public var description: String { "\(at): \(problem)" }
    }

    /// What iapctl knows of one request, as the rules see it.
    public struct Facts: Sendable, Equatable {
        public var productType: ProductTypeName?
        public var storefront: String?
        public var reason: String?
        public var currency: String?
        public var delivered: Bool?
        public var tenureDays: Int64?
        public var priorRefunds: Int64?
        public var consumption: Int64?
        public var amount: Int64?

        public init(
            productType: ProductTypeName? = nil, storefront: String? = nil, reason: String? = nil,
            currency: String? = nil, delivered: Bool? = nil, tenureDays: Int64? = nil, priorRefunds: Int64? = nil,
            consumption: Int64? = nil, amount: Int64? = nil
        ) {
            self.productType = productType
            self.storefront = storefront
            self.reason = reason
            self.currency = currency
            self.delivered = delivered
            self.tenureDays = tenureDays
            self.priorRefunds = priorRefunds
            self.consumption = consumption
            self.amount = amount
        }

        /// The facts of `request` from what the database knows, at `now`.
        public init(_ request: RefundRequest, _ known: RefundDesk.Knowledge) {
            self.init(
                productType: known.productType, storefront: known.storefront, reason: RefundDesk.reason(of: request.request),
                currency: known.currency, delivered: known.delivered,
                tenureDays: known.customerSince.map { since in
                    max(0, ((request.request.signedDate ?? request.request.receivedAt) - since) / 86_400_000)
                },
                priorRefunds: known.priorRefunds.map(Int64.init), consumption: known.consumptionPercentage,
                amount: known.price)
        }
    }

    /// The keys a rule's `when` may hold, in the order documented.
    public static let conditionKeys = [
        "product_type", "storefront", "reason", "currency", "delivered", "tenure_days_min", "tenure_days_max",
        "prior_refunds_min", "prior_refunds_max", "consumption_min", "consumption_max", "amount_min", "amount_max",
    ]
    /// The keys a rule's `answer` object may hold.
    public static let answerKeys = [
        "refund_preference", "delivery_status", "consumption_percentage", "sample_content_provided",
    ]

    /// The first rule whose conditions all hold, if any.
    public func rule(for facts: Facts) -> Rule? {
        rules.first { $0.when.hold(for: facts) }
    }

    /// Parses a policy file's text.
    public static func parse(_ text: String) throws(Invalid) -> RefundPolicy {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw Invalid(at: "the policy", problem: "not JSON (\(error))")
        }
        guard let top = json.objectMembers else { throw Invalid(at: "the policy", problem: "not a JSON object") }
        try known(top.map(\.key), ["customer_consented", "rules"], at: "the policy")
        var consented = false
        if let value = json["customer_consented"] {
            guard let flag = value.boolValue else {
                throw Invalid(at: "customer_consented", problem: "must be true or false")
            }
            consented = flag
        }
        guard let list = json["rules"]?.arrayValue, !list.isEmpty else {
            throw Invalid(at: "the policy", problem: "needs \"rules\": a non-empty array of rules")
        }
        var rules: [Rule] = []
        var names: Set<String> = []
        for (index, item) in list.enumerated() {
            let at = "rule \(index + 1)"
            guard let members = item.objectMembers else { throw Invalid(at: at, problem: "not a JSON object") }
            try known(members.map(\.key), ["name", "when", "answer"], at: at)
            guard let name = item["name"]?.stringValue, !name.isEmpty else {
                throw Invalid(at: at, problem: "needs a \"name\" (a non-empty string: the audit trail records it)")
            }
            guard names.insert(name).inserted else { throw Invalid(at: at, problem: "the name '\(name)' is used twice") }
            let named = "rule '\(name)'"
            let when = try conditions(item["when"], at: named)
            guard let answerValue = item["answer"] else {
                throw Invalid(at: named, problem: "needs an \"answer\": an object, or \"none\" not to answer")
            }
            rules.append(Rule(name: name, when: when, answer: try answer(answerValue, at: named)))
        }
        return RefundPolicy(customerConsented: consented, rules: rules)
    }

    private static func known(_ keys: [String], _ allowed: [String], at: String) throws(Invalid) {
        if let unknown = keys.first(where: { !allowed.contains($0) }) {
            throw Invalid(at: at, problem: "unknown key \"\(unknown)\" (known: \(allowed.joined(separator: ", ")))")
        }
    }

    private static func conditions(_ value: JSONValue?, at: String) throws(Invalid) -> Conditions {
        var c = Conditions()
        guard let value else { return c }
        guard let members = value.objectMembers else { throw Invalid(at: at, problem: "\"when\" is not a JSON object") }
        try known(members.map(\.key), conditionKeys, at: "\(at) \"when\"")
        func strings(_ key: String) throws(Invalid) -> [String]? {
            guard let v = value[key] else { return nil }
            if let one = v.stringValue { return [one] }
            guard let list = v.arrayValue, !list.isEmpty else {
                throw Invalid(at: at, problem: "\"\(key)\" must be a string or a non-empty array of strings")
            }
            var result: [String] = []
            for item in list {
                guard let text = item.stringValue else {
                    throw Invalid(at: at, problem: "\"\(key)\" must be a string or a non-empty array of strings")
                }
                result.append(text)
            }
            return result
        }
        func number(_ key: String) throws(Invalid) -> Int64? {
            guard let v = value[key] else { return nil }
            guard let n = v.int64Value, n >= 0 else {
                throw Invalid(at: at, problem: "\"\(key)\" must be a whole number, 0 or more")
            }
            return n
        }
        if let types = try strings("product_type") {
            c.productTypes = []
            for type in types {
                guard let known = AppleChoices.ProductType(rawValue: type) else {
                    throw Invalid(
                        at: at,
                        problem: "product_type '\(type)' is not one of "
                            + AppleChoices.ProductType.allCases.map(\.rawValue).joined(separator: ", "))
                }
                c.productTypes?.append(known)
            }
        }
        c.storefronts = try strings("storefront")?.map { $0.uppercased() }
        c.reasons = try strings("reason")
        c.currencies = try strings("currency")?.map { $0.uppercased() }
        if let v = value["delivered"] {
            guard let flag = v.boolValue else { throw Invalid(at: at, problem: "\"delivered\" must be true or false") }
            c.delivered = flag
        }
        c.tenureDaysMin = try number("tenure_days_min")
        c.tenureDaysMax = try number("tenure_days_max")
        c.priorRefundsMin = try number("prior_refunds_min")
        c.priorRefundsMax = try number("prior_refunds_max")
        c.consumptionMin = try number("consumption_min")
        c.consumptionMax = try number("consumption_max")
        c.amountMin = try number("amount_min")
        c.amountMax = try number("amount_max")
        return c
    }

    private static func answer(_ value: JSONValue, at: String) throws(Invalid) -> Answer? {
        if value.stringValue == "none" { return nil }
        guard let members = value.objectMembers else {
            throw Invalid(at: at, problem: "\"answer\" must be an object, or \"none\" not to answer")
        }
        try known(members.map(\.key), answerKeys, at: "\(at) \"answer\"")
        var a = Answer()
        if let v = value["refund_preference"] {
            guard let text = v.stringValue, let pref = AppleChoices.RefundPreference(rawValue: text) else {
                throw Invalid(
                    at: at,
                    problem: "refund_preference must be one of "
                        + AppleChoices.RefundPreference.allCases.map(\.rawValue).joined(separator: ", "))
            }
            a.refundPreference = pref
        }
        if let v = value["delivery_status"] {
            guard let text = v.stringValue, let status = AppleChoices.DeliveryStatus(rawValue: text) else {
                throw Invalid(
                    at: at,
                    problem: "delivery_status must be one of "
                        + AppleChoices.DeliveryStatus.allCases.map(\.rawValue).joined(separator: ", "))
            }
            a.deliveryStatus = status
        }
        if let v = value["consumption_percentage"] {
            guard let n = v.int64Value, WriteRequest.consumptionPercentage.contains(n) else {
                throw Invalid(at: at, problem: "consumption_percentage must be 0 to 100000 (thousandths of a percent)")
            }
            a.consumptionPercentage = n
        }
        if let v = value["sample_content_provided"] {
            guard let flag = v.boolValue else {
                throw Invalid(at: at, problem: "sample_content_provided must be true or false")
            }
            a.sampleContentProvided = flag
        }
        return a
    }
}

extension RefundPolicy.Conditions {
    /// Whether every condition holds for `facts`; one on an unknown fact does not.
    public func hold(for facts: RefundPolicy.Facts) -> Bool {
        func within(_ value: Int64?, _ low: Int64?, _ high: Int64?) -> Bool {
            if low == nil && high == nil { return true }
            guard let value else { return false }
            return value >= (low ?? .min) && value <= (high ?? .max)
        }
        if let types = productTypes {
            guard let type = facts.productType, types.contains(where: { $0.transactionType == type }) else { return false }
        }
        if let storefronts {
            guard let storefront = facts.storefront?.uppercased(), storefronts.contains(storefront) else { return false }
        }
        if let reasons {
            guard let reason = facts.reason, reasons.contains(reason) else { return false }
        }
        if let currencies {
            guard let currency = facts.currency?.uppercased(), currencies.contains(currency) else { return false }
        }
        if let delivered {
            guard let known = facts.delivered, known == delivered else { return false }
        }
        return within(facts.tenureDays, tenureDaysMin, tenureDaysMax)
            && within(facts.priorRefunds, priorRefundsMin, priorRefundsMax)
            && within(facts.consumption, consumptionMin, consumptionMax)
            && within(facts.amount, amountMin, amountMax)
    }
}

extension AppleChoices.ProductType {
    /// The signed transaction's `type` this names.
    public var transactionType: ProductTypeName {
        switch self {
        case .autoRenewable: .autoRenewable
        case .nonRenewable: .nonRenewing
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        }
    }
}
