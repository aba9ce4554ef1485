import AppStoreAPI
import AppleFlows
import IAPFoundation
import Testing

/// `RefundPolicy`: the policy file's rules parsed (every mistake named) and matched first-match on
/// what iapctl knows, a condition on an unknown fact never matching.
@Suite("RefundPolicy: first-match refund rules")
struct RefundPolicyTests {
    let text = """
        {"customer_consented": true,
         "rules": [
           {"name": "legal", "when": {"reason": "LEGAL"}, "answer": {"refund_preference": "GRANT_FULL"}},
           {"name": "repeat", "when": {"prior_refunds_min": 2}, "answer": {"refund_preference": "DECLINE"}},
           {"name": "new-us-subs", "when": {"product_type": ["AUTO_RENEWABLE"], "storefront": ["usa"], "tenure_days_max": 7},
            "answer": {"refund_preference": "GRANT_PRORATED"}},
           {"name": "big", "when": {"amount_min": 50000, "currency": "USD"}, "answer": "none"},
           {"name": "coins", "when": {"product_type": "CONSUMABLE", "delivered": true},
            "answer": {"consumption_percentage": 100000, "refund_preference": "DECLINE", "sample_content_provided": true}}
         ]}
        """

    @Test func theFirstMatchingRuleAnswers() throws {
        let policy = try RefundPolicy.parse(text)
        #expect(policy.customerConsented)
        #expect(policy.rules.map(\.name) == ["legal", "repeat", "new-us-subs", "big", "coins"])
        // Both "legal" and "repeat" hold: the first wins.
        #expect(policy.rule(for: .init(reason: "LEGAL", priorRefunds: 3))?.name == "legal")
        #expect(policy.rule(for: .init(reason: "OTHER", priorRefunds: 3))?.name == "repeat")
        let sub = RefundPolicy.Facts(productType: .autoRenewable, storefront: "USA", reason: "OTHER", tenureDays: 3)
        #expect(policy.rule(for: sub)?.name == "new-us-subs")
        #expect(policy.rule(for: sub)?.answer?.refundPreference == .grantProrated)
        let big = RefundPolicy.Facts(reason: "OTHER", currency: "usd", amount: 99_990)
        #expect(policy.rule(for: big)?.name == "big")
        #expect(policy.rule(for: big)?.answer == nil, "\"none\": do not answer")
        let coins = try #require(policy.rule(for: .init(productType: .consumable, delivered: true)))
        #expect(coins.answer?.consumptionPercentage == 100_000)
        #expect(coins.answer?.sampleContentProvided == true)
        #expect(policy.rule(for: .init(productType: .nonConsumable, reason: "OTHER")) == nil)
    }

    @Test func aConditionOnSomethingUnknownDoesNotMatch() throws {
        let policy = try RefundPolicy.parse(text)
        // Tenure unknown (no customer): "new-us-subs" must not match on a guess.
        #expect(policy.rule(for: .init(productType: .autoRenewable, storefront: "USA", reason: "OTHER")) == nil)
        // Delivery unknown: "coins" does not match.
        #expect(policy.rule(for: .init(productType: .consumable)) == nil)
        // Prior refunds unknown: "repeat" does not match.
        #expect(policy.rule(for: .init(reason: "OTHER")) == nil)
    }

    @Test(arguments: [
        (#"[]"#, "not a JSON object"),
        (#"{"rules": []}"#, "non-empty array"),
        (#"{"rules": [{"when": {}, "answer": "none"}]}"#, "needs a \"name\""),
        (#"{"rules": [{"name": "a", "when": {"colour": "red"}, "answer": "none"}]}"#, "unknown key \"colour\""),
        (#"{"rules": [{"name": "a", "answer": {"refund_preference": "MAYBE"}}]}"#, "refund_preference must be one of"),
        (#"{"rules": [{"name": "a", "answer": {"consumption_percentage": 100001}}]}"#, "0 to 100000"),
        (#"{"rules": [{"name": "a", "when": {"product_type": "SUBSCRIPTION"}, "answer": "none"}]}"#, "product_type 'SUBSCRIPTION'"),
        (#"{"rules": [{"name": "a", "answer": "none"}, {"name": "a", "answer": "none"}]}"#, "used twice"),
        (#"{"rules": [{"name": "a", "when": {}}]}"#, "needs an \"answer\""),
        (#"{"customer_consented": "yes", "rules": [{"name": "a", "answer": "none"}]}"#, "true or false"),
        (#"{"rules": [{"name": "a", "when": {"tenure_days_min": -1}, "answer": "none"}]}"#, "whole number"),
    ])
    func aBadPolicyIsRefusedNamingTheRuleAndTheProblem(text: String, problem: String) {
        do {
            _ = try RefundPolicy.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.contains(problem), "\(error)")
        }
    }
}
